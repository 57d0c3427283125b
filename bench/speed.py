"""`python -m bench.speed`: how fast research runs, and what the orchestration costs around
the LLM. Part of `make bench`, never of `make test`.

The LLM is an OpenAI-protocol server (tests/support/llm_server.py) that answers every call after a
fixed latency (250 ms), with replies valid for every role, so a research completes as it would
with a model, and the only waiting that is not the LLM's is ours. It runs a real `worker.py`
process (OpenAI engine, local corpus search) against a dev server started as `make dev` starts it.

Sections (`--only a,b`; all by default):
- depths: one research at a time per depth: workflow duration ÷ LLM busy time (the overhead ratio;
  1.00 is the floor), LLM calls on the critical path (busy time ÷ latency: overlapping calls count
  once, as the user waits once), all LLM calls, worker and server CPU, history events and bytes.
- concurrent: N light researches started at once on one worker (default 100): wall time ÷ the
  single light research's floor (its LLM busy time), worker and server CPU per research.
- scaleout: W worker processes on one task queue (default 3), R light researches (default 30);
  one worker is SIGKILLed mid-run; every research must complete and be stored exactly once.
- noop: what one sequential no-op activity costs on the dev server at its default dispatch rate
  and at ours (starter/cli/stack.py), regular and local.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client, WorkflowHandle

from bench.harness import (
    QUESTION,
    DevServer,
    WorkerProcess,
    bench_answer,
    busy_seconds,
    prepare_corpus,
    sequential_calls,
    time_spent,
    worker_env,
)
from tests.support.llm_server import ScriptedLLM, running_llm
from workflows.models import Depth, ResearchRequest, ResearchResult
from workflows.research import DeepResearchWorkflow

SECTIONS = ("depths", "concurrent", "scaleout", "noop")


@dataclass
class Single:
    """One research measured alone."""

    wall_s: float
    workflow_s: float
    busy_s: float
    calls: int
    #: LLM calls one after the other (harness.sequential_calls).
    sequential: int
    worker_cpu_s: float
    server_cpu_s: float
    events: int
    history_bytes: int
    #: time_spent(history): per activity type, (count, dispatch s, execution s).
    spent: dict[str, tuple[int, float, float]]


async def start(
    client: Client, task_queue: str, depth: Depth, prefix: str
) -> WorkflowHandle[DeepResearchWorkflow, ResearchResult]:
    return await client.start_workflow(
        DeepResearchWorkflow.run,
        args=[ResearchRequest(query=QUESTION, depth=depth)],
        id=f"{prefix}-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )


async def one_research(
    client: Client,
    task_queue: str,
    depth: Depth,
    llm: ScriptedLLM,
    worker: WorkerProcess,
    server: DevServer,
) -> Single:
    llm.reset()
    cpu_w, cpu_s = worker.cpu(), server.cpu()
    began = time.perf_counter()
    handle = await start(client, task_queue, depth, f"bench-{depth.value}")
    result = await handle.result()
    wall = time.perf_counter() - began
    cpu_w, cpu_s = worker.cpu() - cpu_w, server.cpu() - cpu_s
    assert result.outcome.value == "completed", result.notes
    described = await handle.describe()
    assert described.close_time is not None
    history = await handle.fetch_history()
    return Single(
        wall_s=wall,
        workflow_s=(described.close_time - described.start_time).total_seconds(),
        busy_s=busy_seconds(llm.served),
        calls=len(llm.completions()),
        sequential=sequential_calls(llm.served),
        worker_cpu_s=cpu_w,
        server_cpu_s=cpu_s,
        events=len(history.events),
        history_bytes=sum(e.ByteSize() for e in history.events),
        spent=time_spent(history),
    )


def _median(values: list[float]) -> float:
    return statistics.median(values)


async def bench_depths(
    client: Client,
    task_queue: str,
    llm: ScriptedLLM,
    worker: WorkerProcess,
    server: DevServer,
    repeat: int,
    latency: float,
) -> float:
    """Prints one line per depth; returns the light research's floor (its LLM busy time)."""
    print(
        f"\n== one research at a time (LLM answers every call after {latency * 1000:.0f} ms; medians of {repeat})"
    )
    print(
        f"{'depth':9} {'workflow':>9} {'LLM busy':>9} {'overhead':>9} {'ratio':>6} {'critical':>9} {'in turn':>8} {'calls':>6} "
        f"{'worker CPU':>11} {'server CPU':>11} {'events':>7} {'history':>9}"
    )
    floor = 0.0
    medium: Single | None = None
    for depth in (Depth.LIGHT, Depth.MEDIUM, Depth.EXTENDED):
        runs = [
            await one_research(client, task_queue, depth, llm, worker, server)
            for _ in range(repeat)
        ]
        if depth is Depth.MEDIUM:
            medium = runs[-1]
        workflow_s = _median([r.workflow_s for r in runs])
        busy = _median([r.busy_s for r in runs])
        if depth is Depth.LIGHT:
            floor = busy
        print(
            f"{depth.value:9} {workflow_s:8.2f}s {busy:8.2f}s {workflow_s - busy:8.2f}s {workflow_s / busy:5.2f}× "
            f"{busy / latency:9.1f} {_median([r.sequential for r in runs]):8.0f} {_median([r.calls for r in runs]):6.0f} "
            f"{_median([r.worker_cpu_s for r in runs]) * 1000:9.0f}ms {_median([r.server_cpu_s for r in runs]) * 1000:9.0f}ms "
            f"{_median([r.events for r in runs]):7.0f} {_median([r.history_bytes for r in runs]) / 1024:6.0f}KiB"
        )
    print(
        "(workflow: start to close as the server recorded it; overhead: workflow - LLM busy; ratio: workflow ÷ "
        "LLM busy; critical: LLM calls on the critical path = busy ÷ latency; in turn: the longest chain of calls "
        "each started after the one before ended; history: protobuf bytes, as "
        "Temporal counts them against its limits)"
    )
    if medium is not None:
        print(
            f"\nwhere the last medium research's {medium.workflow_s:.2f} s went (from its history; LLM calls "
            f"include the {latency * 1000:.0f} ms the LLM takes):"
        )
        for name, (count, dispatch, run) in sorted(medium.spent.items(), key=lambda kv: -kv[1][2]):
            print(
                f"  {name:16} x{count:<3} running {run:6.2f} s ({run / count * 1000:4.0f} ms each), "
                f"waiting to start {dispatch * 1000:4.0f} ms"
            )
    return floor


async def bench_concurrent(
    client: Client,
    task_queue: str,
    llm: ScriptedLLM,
    worker: WorkerProcess,
    server: DevServer,
    count: int,
    floor: float,
    profile: Path | None,
) -> None:
    llm.reset()
    profiler = _py_spy(worker.pid, profile) if profile else None
    cpu_w, cpu_s, cpu_b = worker.cpu(), server.cpu(), time.process_time()
    began = time.perf_counter()
    handles = await asyncio.gather(
        *(start(client, task_queue, Depth.LIGHT, "bench-many") for _ in range(count))
    )
    results = await asyncio.gather(*(h.result() for h in handles))
    wall = time.perf_counter() - began
    cpu_w, cpu_s, cpu_b = worker.cpu() - cpu_w, server.cpu() - cpu_s, time.process_time() - cpu_b
    if profiler is not None:
        profiler.send_signal(signal.SIGINT)
        profiler.wait()
        print(f"worker profile (py-spy, collapsed stacks): {profile}")
    completed = sum(r.outcome.value == "completed" for r in results)
    print(f"\n== {count} light researches started at once on one worker")
    print(
        f"{completed}/{count} completed in {wall:.1f} s; single-research floor {floor:.2f} s (its LLM busy time): "
        f"×{wall / floor:.1f}"
    )
    print(
        f"CPU per research: worker {cpu_w / count * 1000:.0f} ms, Temporal server {cpu_s / count * 1000:.0f} ms "
        f"({len(llm.completions())} LLM calls, {len(llm.completions()) / wall:.0f}/s); this process (the LLM "
        f"server and the client) {cpu_b / count * 1000:.0f} ms, on the same {os.cpu_count()} cores"
    )


def _py_spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy sampling the worker (all its threads: the workflow sandbox runs in a thread pool)."""
    spy = shutil.which("py-spy")
    if spy is None:
        sys.exit("error: --profile needs py-spy on the PATH (pip install py-spy)")
    process = subprocess.Popen(
        [
            spy,
            "record",
            "--pid",
            str(pid),
            "--rate",
            "250",
            "--gil",
            "--format",
            "raw",
            "--nonblocking",
            "--output",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # attached before the first research starts
    return process


async def bench_scaleout(
    client: Client, server: DevServer, llm: ScriptedLLM, folder: Path, workers: int, count: int
) -> None:
    """W workers, one library (SQLite, as `make dev` has it), R researches; SIGKILL one worker once
    a third of the expected LLM calls were served."""
    task_queue = f"bench-scale-{uuid.uuid4().hex[:6]}"
    library = folder / "scaleout" / "library.sqlite"
    library.parent.mkdir(parents=True, exist_ok=True)
    env = worker_env(
        server.address, task_queue, llm.base_url, folder, RESEARCH_DB_URL=f"sqlite:///{library}"
    )
    running = [WorkerProcess(env, folder / f"scale-worker-{i}.log").start() for i in range(workers)]
    try:
        llm.reset()
        began = time.perf_counter()
        handles = await asyncio.gather(
            *(start(client, task_queue, Depth.LIGHT, "bench-scale") for _ in range(count))
        )
        expected_calls = count * 10
        while len(llm.completions()) < expected_calls // 3:
            await asyncio.sleep(0.05)
        victim = running[0]
        victim.kill()
        killed_at = time.perf_counter() - began
        results = await asyncio.gather(*(h.result() for h in handles), return_exceptions=True)
        wall = time.perf_counter() - began
    finally:
        for w in running[1:]:
            w.stop()
    completed = sum(
        isinstance(r, ResearchResult) and r.outcome.value == "completed" for r in results
    )
    with sqlite3.connect(library) as db:
        stored = dict(
            db.execute("SELECT workflow_id, COUNT(*) FROM research GROUP BY workflow_id").fetchall()
        )
    ids = {h.id for h in handles}
    once = sum(stored.get(i) == 1 for i in ids)
    twice = sum((stored.get(i) or 0) > 1 for i in ids)
    print(
        f"\n== scale-out: {workers} worker processes, {count} light researches, one worker SIGKILLed at {killed_at:.1f} s"
    )
    print(
        f"{completed}/{count} completed in {wall:.1f} s; stored exactly once: {once}/{count}, "
        f"more than once: {twice}, missing: {count - once - twice}"
    )
    print(
        "(the killed worker's activities are retried after their 20 s heartbeat timeout, its workflow tasks "
        "after the sticky queue's 5 s)"
    )


async def bench_noop(folder: Path, count: int) -> None:
    """Sequential no-op activities on a dev server at its default dispatch rate and at ours."""
    from temporalio.worker import Worker

    from bench.noop import NoopChain, noop
    from starter.cli.stack import DEV_SERVER_DYNAMIC_CONFIG

    print(f"\n== one sequential no-op activity ({count} in a row, in-process worker)")
    for label, config in (("server default", {}), (f"ours {DEV_SERVER_DYNAMIC_CONFIG}", None)):
        server = DevServer(config).start()
        try:
            client = await server.client(pydantic=False)
            async with Worker(client, task_queue="noop", workflows=[NoopChain], activities=[noop]):
                costs = {}
                for local in (False, True, False):  # the first run warms the worker up
                    began = time.perf_counter()
                    await client.execute_workflow(
                        NoopChain.run,
                        args=[count, local],
                        id=f"noop-{uuid.uuid4().hex[:6]}",
                        task_queue="noop",
                    )
                    costs[local] = (time.perf_counter() - began) / count
            print(
                f"{label:50} regular {costs[False] * 1000:5.1f} ms, local {costs[True] * 1000:5.1f} ms"
            )
        finally:
            server.stop()


async def run(args: argparse.Namespace) -> None:
    sections = set(args.only)
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as tmp:
        folder = Path(tmp)
        if sections - {"noop"}:
            prepare_corpus(folder / "index")
            with running_llm(args.latency, bench_answer) as llm:
                server = DevServer().start()
                try:
                    client = await server.client()
                    if sections & {"depths", "concurrent"}:
                        task_queue = f"bench-speed-{uuid.uuid4().hex[:6]}"
                        worker = WorkerProcess(
                            worker_env(server.address, task_queue, llm.base_url, folder),
                            folder / "worker.log",
                        ).start()
                        try:
                            warm = await one_research(
                                client, task_queue, Depth.LIGHT, llm, worker, server
                            )
                            floor = warm.busy_s
                            if "depths" in sections:
                                floor = await bench_depths(
                                    client,
                                    task_queue,
                                    llm,
                                    worker,
                                    server,
                                    args.repeat,
                                    args.latency,
                                )
                            if "concurrent" in sections:
                                await bench_concurrent(
                                    client,
                                    task_queue,
                                    llm,
                                    worker,
                                    server,
                                    args.concurrent,
                                    floor,
                                    args.profile,
                                )
                        finally:
                            worker.stop()
                    if "scaleout" in sections:
                        await bench_scaleout(
                            client, server, llm, folder, args.workers, args.researches
                        )
                finally:
                    server.stop()
        if "noop" in sections:
            await bench_noop(folder, args.noop_count)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.speed",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        type=lambda text: [s.strip() for s in text.split(",") if s.strip()],
        help=f"comma-separated sections to run: {', '.join(SECTIONS)} (default: all)",
    )
    parser.add_argument(
        "--latency", type=float, default=0.25, help="seconds the LLM takes per call (0.25)"
    )
    parser.add_argument(
        "--repeat", type=int, default=2, help="researches per depth; medians are printed (2)"
    )
    parser.add_argument(
        "--concurrent", type=int, default=100, help="light researches started at once (100)"
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="concurrent: sample the worker with py-spy into this file (collapsed stacks)",
    )
    parser.add_argument("--workers", type=int, default=3, help="scale-out: worker processes (3)")
    parser.add_argument("--researches", type=int, default=30, help="scale-out: researches (30)")
    parser.add_argument("--noop-count", type=int, default=40, help="noop: activities in a row (40)")
    args = parser.parse_args()
    unknown = set(args.only) - set(SECTIONS)
    if unknown or not args.only:
        parser.exit(
            2,
            f"error: --only takes {', '.join(SECTIONS)}; got {', '.join(sorted(unknown)) or 'nothing'}\n",
        )
    print(f"machine: {_machine()}")
    asyncio.run(run(args))


def _machine() -> str:
    import platform

    return f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, {platform.system()}"


if __name__ == "__main__":
    main()
