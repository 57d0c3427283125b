"""A worker stopped with SIGTERM in the middle of an LLM call (a rolling update, a scale-down)
loses nothing: within its grace period (WORKER_SHUTDOWN_GRACE_S) it finishes the call it holds;
past it, it hands the call back and another worker runs it again. Either way the worker exits
cleanly, and the research completes on the other worker and is stored once."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from tests.support.llm_server import Fault, ScriptedLLM, running_llm
from tests.support.workers import WorkerProcess, prepare_corpus, worker_env
from tests.telemetry.processes import start_light

pytestmark = pytest.mark.e2e

#: The research's first LLM call: routing the question.
FIRST = "route"


async def attempts_of(handle: WorkflowHandle, role: str) -> list[tuple[int, str]]:
    """(attempt, worker identity) of each recorded run of ROLE's activities, in order."""
    history = await handle.fetch_history()
    roles = {
        e.event_id: e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    }
    started = [
        e.activity_task_started_event_attributes
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    ]
    return [(s.attempt, s.identity) for s in started if roles[s.scheduled_event_id] == role]


async def sigterm_mid_call(
    client: Client, address: str, folder: Path, grace_s: float, call_s: float
) -> tuple[str, list[tuple[int, str]], ScriptedLLM]:
    """A research begun on worker A, which is sent SIGTERM while it holds the first LLM call (the
    endpoint answers it after CALL_S); worker B is polling by then. Checks that A exits 0 and the
    research completes, stored once; returns A's identity, the first call's recorded attempts and
    the LLM server."""
    prepare_corpus(folder / "index")
    with running_llm() as llm:
        llm.fail_next(FIRST, Fault(hang_s=call_s))
        queue = f"tq-sigterm-{uuid.uuid4().hex[:8]}"
        env = worker_env(address, queue, llm.base_url, folder, WORKER_SHUTDOWN_GRACE_S=str(grace_s))
        a = WorkerProcess(env, folder / "worker-a.log").start()
        b = None
        try:
            handle = await start_light(client, a)
            while not llm.requests(FIRST):
                await asyncio.sleep(0.02)
            b = WorkerProcess(env, folder / "worker-b.log").start()
            assert a.process is not None
            a.process.terminate()
            assert await asyncio.to_thread(a.process.wait, 60) == 0
            result = await asyncio.wait_for(handle.result(), timeout=120)
        finally:
            for worker in (a, b):
                if worker is not None:
                    worker.stop()
        attempts = await attempts_of(handle, FIRST)
    assert result.outcome.value == "completed"
    with sqlite3.connect(folder / "library.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM research WHERE workflow_id = ?", (handle.id,))
        assert stored.fetchone() == (1,)
    return f"{a.pid}@{socket.gethostname()}", attempts, llm


async def test_a_stopping_worker_finishes_the_call_it_holds_within_its_grace(
    dev_client: Client, dev_address: str, tmp_path: Path
) -> None:
    a, attempts, llm = await sigterm_mid_call(dev_client, dev_address, tmp_path, 30, call_s=2)
    assert attempts == [(1, a)]  # the call A held was answered on A, once
    assert len(llm.requests(FIRST)) == 1


async def test_past_its_grace_a_stopping_worker_hands_the_call_back(
    dev_client: Client, dev_address: str, tmp_path: Path
) -> None:
    a, attempts, llm = await sigterm_mid_call(dev_client, dev_address, tmp_path, 0.5, call_s=20)
    ((attempt, identity),) = attempts
    assert attempt == 2 and identity != a  # A gave its attempt up; B ran the call again
    assert len(llm.requests(FIRST)) == 2
