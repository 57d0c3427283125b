"""`make bench`: the scaling figures of docs/team.md. Light researches started all at once against
the scripted LLM (every call answered after 250 ms), on 1 and 2 worker processes and with the
worker's metrics on: researches per second, per worker process, and the CPU one research costs the
workers and the Temporal server. The ratio of the two says where the server becomes the limit: a
server core is busy full time when the workers it serves spend that many cores.

`python -m bench.team [--researches N]`. On a machine with few cores the worker processes
and the server share them, so the throughput of 2 workers is a floor; the CPU per research is the
figure that carries over.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from bench.harness import (
    DevServer,
    WorkerProcess,
    bench_answer,
    free_port,
    prepare_corpus,
    worker_env,
)
from tests.support.llm_server import running_llm
from workflows.models import Depth, ResearchRequest
from workflows.research import DeepResearchWorkflow

QUESTION = "How does the with statement use context managers in Python?"
LATENCY_S = 0.25


@dataclass
class Run:
    workers: int
    metrics: bool
    researches: int
    wall_s: float
    worker_cpu_s: float
    server_cpu_s: float

    def row(self) -> str:
        rate = self.researches / self.wall_s
        worker_ms = self.worker_cpu_s / self.researches * 1000
        server_ms = self.server_cpu_s / self.researches * 1000
        return (
            f"| {self.workers} | {'on' if self.metrics else 'off'} | {self.researches} in {self.wall_s:.1f} s "
            f"| {rate:.2f} | {rate / self.workers:.2f} | {worker_ms:.0f} ms | {server_ms:.0f} ms "
            f"| {worker_ms / server_ms:.1f} |"
        )


async def measure(folder: Path, workers: int, metrics: bool, count: int) -> Run:
    server = DevServer().start()
    try:
        client = await server.client()
        with running_llm(latency_s=LATENCY_S, answers=bench_answer) as llm:
            queue = f"bench-team-{uuid.uuid4().hex[:6]}"
            running = []
            for n in range(workers):
                extra = {"WORKER_METRICS_PORT": str(free_port())} if metrics else {}
                env = worker_env(server.address, queue, llm.base_url, folder, **extra)
                running.append(WorkerProcess(env, folder / f"team-{workers}-{n}.log").start())
            try:
                cpu_w = sum(w.cpu() for w in running)
                cpu_s = server.cpu()
                began = time.perf_counter()
                handles = await asyncio.gather(
                    *(
                        client.start_workflow(
                            DeepResearchWorkflow.run,
                            args=[ResearchRequest(query=QUESTION, depth=Depth.LIGHT)],
                            id=f"bench-team-{uuid.uuid4().hex[:8]}",
                            task_queue=queue,
                        )
                        for _ in range(count)
                    )
                )
                results = await asyncio.gather(*(h.result() for h in handles))
                wall = time.perf_counter() - began
                cpu_w = sum(w.cpu() for w in running) - cpu_w
                cpu_s = server.cpu() - cpu_s
            finally:
                for w in running:
                    w.stop()
        assert all(r.outcome.value == "completed" for r in results)
        return Run(workers, metrics, count, wall, cpu_w, cpu_s)
    finally:
        server.stop()


async def run(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        prepare_corpus(folder / "index")
        print(
            f"== team scaling: {count} light researches at once, LLM answers after {LATENCY_S * 1000:.0f} ms, "
            f"{os.cpu_count()} cores shared by the workers, the server and this process"
        )
        print(
            "| worker processes | metrics | researches | per second | per second per worker "
            "| worker CPU per research | server CPU per research | worker ÷ server CPU |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for workers, metrics in ((1, False), (1, True), (2, False)):
            print((await measure(folder, workers, metrics, count)).row(), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--researches", type=int, default=40, help="researches per run (40)")
    asyncio.run(run(parser.parse_args().researches))


if __name__ == "__main__":
    main()
