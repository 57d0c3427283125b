"""Real `worker.py` processes for tests and benchmarks that need more than one, or need to kill one:
each in a session of its own, on the OpenAI engine against a test server, searching the local corpus."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def worker_env(
    address: str, task_queue: str, llm_url: str, folder: Path, **extra: str
) -> dict[str, str]:
    """A worker on the OpenAI engine against the scripted server, searching the local corpus (the
    Python documentation; index under `folder`), storing into a library under `folder`. Other
    variables pass through, so a run can try the worker's levers (`MAX_CONCURRENT_ACTIVITIES=...`)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("OPENAI_", "LLM_", "LANGFUSE_", "TEMPORAL_", "SEARCH_", "RESEARCH_", "CRAWL_")
        )
    }
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
            self.process = subprocess.Popen(
                [sys.executable, "worker.py"],
                cwd=REPO,
                env=self.env,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout_s
        while "worker: task queue" not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the worker did not start:\n{self.log.read_text(errors='replace')[-2000:]}"
                )
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
        """SIGTERM: the worker drains (up to its 20 s grace period) and exits."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.kill()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, its reaped children and its live descendants (the worker's
    extraction processes, say), from /proc (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in [pid, *_descendants(pid)]:
        fields = _stat(p)
        if fields is not None:  # utime, stime, cutime, cstime are fields 14-17
            total += sum(int(v) for v in fields[11:15]) / ticks
    return total


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # fields from 3 on; the name may hold spaces


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


def prepare_corpus(index_dir: Path) -> None:
    """Index the default corpus (the Python documentation) once, before any worker starts, so no
    research pays for it and no two workers build it at the same time."""
    from activities.corpus import LocalCorpus

    LocalCorpus(None, index_dir).search("with statement context manager", 5)
