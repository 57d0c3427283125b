"""`python -m bench.web`: how fast the web app's event stream is, and what its streams cost.
Not part of `make test` (nor of `make bench`, for now).

Four processes, as in production: the Temporal dev server, a worker (the real workflow over the
activity doubles of tests/support/doubles.py, each sleeping 0.2-1.2 s, so a research emits its
events over half a minute as with a quick model), the web app under uvicorn (its CPU read from
/proc), and this process with the SSE clients (httpx).

- latency: one research at a time, one stream each: for every event, the time from the event's
  `at` (the workflow time it happened) to its arrival at the client; median, p90, max.
- load: R researches at once (default 20) with S streams each (default 5: 100 streams), then the
  same streams on R researches that wait for a plan review (idle): the web app's CPU per second of
  wall time, and the latency of every event on every stream.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench.harness import DevServer, free_port
from tests.support.workers import cpu_seconds

REPO = Path(__file__).resolve().parents[1]
QUESTION = "How does asyncio.gather run coroutines concurrently?"


# --- the processes ---------------------------------------------------------------------------------


def run_worker(address: str, task_queue: str) -> None:
    """`--worker`: the real workflow over doubles that sleep like a quick model and search."""
    from temporalio.worker import Worker

    from settings import Settings, connect_temporal
    from tests.support.doubles import DEFAULTS, Script
    from workflows.research import DeepResearchWorkflow

    def sleepy(then: Any) -> Any:
        async def behaviour(inp: Any) -> Any:
            await asyncio.sleep(random.uniform(0.2, 1.2))
            return then(inp)

        return behaviour

    async def main() -> None:
        client = await connect_temporal(Settings(_env_file=None, temporal_address=address).temporal)
        script = Script(**{name: sleepy(then) for name, then in DEFAULTS.items()})
        async with Worker(
            client,
            task_queue=task_queue,
            workflows=[DeepResearchWorkflow],
            activities=script.activities(),
            max_concurrent_activities=1000,
        ):
            print("worker ready", flush=True)
            await asyncio.Event().wait()

    asyncio.run(main())


def start_process(
    args: list[str], log: Path, ready: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, *args],
            cwd=REPO,
            stdout=out,
            stderr=out,
            env=env,
            start_new_session=True,
        )
    deadline = time.monotonic() + 60
    while ready not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{args} did not start:\n{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.1)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()


# --- the clients -----------------------------------------------------------------------------------


async def follow(
    client: httpx.AsyncClient, research_id: str, delays: list[float], heard: asyncio.Event
) -> None:
    """One stream until `end`: the delay of every research event that happened while it was open
    (not the backlog a new stream gets first)."""
    async with client.stream("GET", f"/api/research/{research_id}/events") as response:
        heard.set()
        opened = time.time()
        kind = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                kind = line[7:]
                if kind == "end":
                    return
            elif line.startswith("data: ") and kind not in ("heartbeat", "unavailable"):
                at = datetime.fromisoformat(json.loads(line[6:])["at"]).timestamp()
                if at >= opened:
                    delays.append(time.time() - at)


async def start(client: httpx.AsyncClient, **options: Any) -> str:
    response = await client.post(
        "/api/research", json={"question": QUESTION, "depth": "medium", **options}
    )
    response.raise_for_status()
    research_id: str = response.json()["id"]  # the API's answer to a start: {"id": ...}
    return research_id


async def latency(client: httpx.AsyncClient, runs: int) -> list[float]:
    delays: list[float] = []
    for _ in range(runs):
        heard = asyncio.Event()
        research_id = await start(client)
        await follow(client, research_id, delays, heard)
    return delays


async def load(
    client: httpx.AsyncClient, web_pid: int, researches: int, streams: int, waiting: bool
) -> dict[str, Any]:
    """R researches, S streams each; the web app's CPU while they run (or, WAITING, while they all
    wait for a review for a fixed 20 s)."""
    ids = [await start(client, review_plan=waiting) for _ in range(researches)]
    delays: list[float] = []
    heard = [asyncio.Event() for _ in range(researches * streams)]
    tasks = [
        asyncio.create_task(follow(client, ids[i // streams], delays, heard[i]))
        for i in range(len(heard))
    ]
    await asyncio.gather(*(event.wait() for event in heard))
    cpu0, wall0 = cpu_seconds(web_pid), time.monotonic()
    if waiting:
        await asyncio.sleep(20)
    else:
        await asyncio.gather(*tasks)
    cpu, wall = cpu_seconds(web_pid) - cpu0, time.monotonic() - wall0
    for research_id in ids:
        if waiting:
            await client.post(f"/api/research/{research_id}/cancel")
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "streams": len(tasks),
        "researches": researches,
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_share": cpu / wall,
        "delays": delays,
    }


def figures(delays: list[float]) -> str:
    if not delays:
        return "no events"
    ordered = sorted(delays)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return (
        f"{len(delays)} events: median {statistics.median(delays) * 1000:.0f} ms, "
        f"p90 {p90 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"
    )


async def measure(url: str, web_pid: int, args: argparse.Namespace) -> None:
    limits = httpx.Limits(max_connections=args.researches * args.streams + 20)
    async with httpx.AsyncClient(
        base_url=url, timeout=httpx.Timeout(30, read=120), limits=limits
    ) as client:
        print(
            f"latency, one research at a time, one stream: {figures(await latency(client, args.runs))}"
        )
        for waiting in (False, True):
            got = await load(client, web_pid, args.researches, args.streams, waiting)
            what = "waiting for a review (idle)" if waiting else "running"
            print(
                f"{got['streams']} streams on {got['researches']} researches {what}: web app CPU "
                f"{got['cpu_s']:.1f} s in {got['wall_s']:.1f} s ({got['cpu_share'] * 100:.1f}% of one core); "
                f"latency {figures(got['delays'])}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.web", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="researches for the latency, one at a time"
    )
    parser.add_argument("--researches", type=int, default=20)
    parser.add_argument("--streams", type=int, default=5, help="streams per research")
    parser.add_argument(
        "--worker", nargs=2, metavar=("ADDRESS", "TASK_QUEUE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        return run_worker(*args.worker)
    folder = Path(tempfile.mkdtemp(prefix="bench-web-"))
    server = DevServer().start()
    task_queue = f"bench-web-{uuid.uuid4().hex[:6]}"
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TEMPORAL_", "RESEARCH_", "LLM_", "OPENAI_"))
    }
    env.update(
        TEMPORAL_ADDRESS=server.address,
        TEMPORAL_TASK_QUEUE=task_queue,
        LLM_PROVIDER="offline",
        RESEARCH_DB_URL=f"sqlite:///{folder / 'library.sqlite'}",
    )
    worker = web = None
    try:
        worker = start_process(
            ["-m", "bench.web", "--worker", server.address, task_queue],
            folder / "worker.log",
            "worker ready",
            env,
        )
        web = start_process(
            [
                "-c",
                f"from settings import settings; from starter.web.serve import serve; "
                f"serve('127.0.0.1', {port}, settings())",
            ],
            folder / "web.log",
            "web app:",
            env,
        )
        asyncio.run(measure(f"http://127.0.0.1:{port}", web.pid, args))
    finally:
        for process in (web, worker):
            if process is not None:
                stop(process)
        server.stop()


if __name__ == "__main__":
    main()
