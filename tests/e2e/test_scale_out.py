"""Several worker processes on one task queue share the research; when one dies mid-run (SIGKILL,
as a machine that loses power), every research still completes and the library holds each one
exactly once. The short version of `make bench`'s scale-out run (3 workers x 30 researches)."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from tests.support.llm_server import running_llm
from tests.support.workers import WorkerProcess, prepare_corpus, worker_env
from workflows.models import Depth, ResearchRequest
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

QUESTION = "How does the with statement use context managers in Python?"
RESEARCHES = 6
#: A light research against the test server makes 10 LLM calls.
CALLS_PER_RESEARCH = 10


async def test_a_worker_killed_mid_run_loses_no_research_and_each_is_stored_once(
    dev_client: Client, dev_address: str, tmp_path: Path
) -> None:
    prepare_corpus(tmp_path / "index")
    library = tmp_path / "library.sqlite"
    with running_llm(latency_s=0.25) as llm:
        env = worker_env(dev_address, f"tq-scale-{uuid.uuid4().hex[:8]}", llm.base_url, tmp_path)
        workers = [WorkerProcess(env, tmp_path / f"worker-{n}.log").start() for n in range(2)]
        victim = workers[0]
        try:
            handles = await asyncio.gather(
                *(
                    dev_client.start_workflow(
                        DeepResearchWorkflow.run,
                        ResearchRequest(query=QUESTION, depth=Depth.LIGHT),
                        id=f"scale-{n}-{uuid.uuid4().hex[:6]}",
                        task_queue=env["TEMPORAL_TASK_QUEUE"],
                    )
                    for n in range(RESEARCHES)
                )
            )
            while len(llm.completions()) < RESEARCHES * CALLS_PER_RESEARCH // 3:
                await asyncio.sleep(0.05)
            victim.kill()
            results = await asyncio.wait_for(
                asyncio.gather(*(h.result() for h in handles)), timeout=120
            )
        finally:
            for worker in workers:
                worker.stop()

    assert [r.outcome.value for r in results] == ["completed"] * RESEARCHES
    with sqlite3.connect(library) as db:
        stored = db.execute(
            "SELECT workflow_id, COUNT(*) FROM research GROUP BY workflow_id"
        ).fetchall()
    assert sorted(stored) == sorted((h.id, 1) for h in handles)
    # The killed worker had taken part: some research was handed from it to the survivor.
    identity = f"{victim.pid}@{socket.gethostname()}"
    histories = [await h.fetch_history() for h in handles]
    assert any(identity in str(event) for history in histories for event in history.events)
