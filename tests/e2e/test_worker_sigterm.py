"""A worker stopped with SIGTERM in the middle of an LLM call (a rolling update, a scale-down)
loses nothing: within its grace period (WORKER_SHUTDOWN_GRACE_S) it finishes the call it holds;
past it, it hands the call back and another worker runs it again. Either way the research
completes on the other worker and is stored once."""

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
from workflows.models import Depth, ResearchRequest
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

QUESTION = "How does the with statement use context managers in Python?"


#: The research's first LLM call: routing the question.
FIRST = "route"


async def first_call_in_flight(llm: ScriptedLLM) -> None:
    """Once the first LLM call's request has arrived (it is answered after its scripted delay)."""
    while not llm.requests(FIRST):
        await asyncio.sleep(0.02)


async def attempts_of(handle: WorkflowHandle, role: str) -> list[tuple[int, str]]:
    """(attempt, worker identity) of each recorded run of ROLE's activities, in order."""
    history = await handle.fetch_history()
    roles = {
        e.event_id: e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    }
    return [
        (
            e.activity_task_started_event_attributes.attempt,
            e.activity_task_started_event_attributes.identity,
        )
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
        and roles[e.activity_task_started_event_attributes.scheduled_event_id] == role
    ]


async def research_through_a_sigterm(
    client: Client, address: str, folder: Path, grace_s: float, call_s: float
) -> tuple[str, str, list[tuple[int, str]], int, ScriptedLLM]:
    """A research begun on worker A, which is sent SIGTERM while it holds the first LLM call (the
    endpoint answers it after CALL_S); worker B is polling by then. Returns the outcome, A's
    identity, the first call's recorded attempts, A's exit status and the LLM server."""
    prepare_corpus(folder / "index")
    with running_llm() as llm:
        llm.fail_next(FIRST, Fault(hang_s=call_s))
        env = worker_env(
            address,
            f"tq-sigterm-{uuid.uuid4().hex[:8]}",
            llm.base_url,
            folder,
            WORKER_SHUTDOWN_GRACE_S=str(grace_s),
        )
        a = WorkerProcess(env, folder / "worker-a.log").start()
        b = None
        try:
            handle = await client.start_workflow(
                DeepResearchWorkflow.run,
                ResearchRequest(query=QUESTION, depth=Depth.LIGHT),
                id=f"sigterm-{uuid.uuid4().hex[:8]}",
                task_queue=env["TEMPORAL_TASK_QUEUE"],
            )
            await first_call_in_flight(llm)
            b = WorkerProcess(env, folder / "worker-b.log").start()
            assert a.process is not None
            a.process.terminate()
            exit_status = await asyncio.to_thread(a.process.wait, 60)
            result = await asyncio.wait_for(handle.result(), timeout=120)
        finally:
            a.stop()
            if b is not None:
                b.stop()
        attempts = await attempts_of(handle, FIRST)
    with sqlite3.connect(folder / "library.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM research WHERE workflow_id = ?", (handle.id,))
        assert stored.fetchone() == (1,)
    return result.outcome.value, f"{a.pid}@{socket.gethostname()}", attempts, exit_status, llm


async def test_a_stopping_worker_finishes_the_call_it_holds_within_its_grace(
    dev_client: Client, dev_address: str, tmp_path: Path
) -> None:
    outcome, a, attempts, exit_status, llm = await research_through_a_sigterm(
        dev_client, dev_address, tmp_path, grace_s=30, call_s=2.0
    )
    assert outcome == "completed"
    assert exit_status == 0
    assert attempts == [(1, a)]  # the call A held was answered on A, once
    assert len(llm.requests(FIRST)) == 1


async def test_past_its_grace_a_stopping_worker_hands_the_call_back(
    dev_client: Client, dev_address: str, tmp_path: Path
) -> None:
    outcome, a, attempts, exit_status, llm = await research_through_a_sigterm(
        dev_client, dev_address, tmp_path, grace_s=0.5, call_s=20.0
    )
    assert outcome == "completed"
    assert exit_status == 0
    ((attempt, identity),) = attempts
    assert attempt == 2 and identity != a  # A gave its attempt up; B ran the call again
    assert len(llm.requests(FIRST)) == 2
