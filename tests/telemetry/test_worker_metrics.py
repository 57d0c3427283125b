"""A worker started with WORKER_METRICS_PORT, as Kubernetes runs it: Prometheus scrapes the Temporal
SDK's metrics and the product's counters from /metrics during a research, and /healthz says 200
while the worker polls and stops saying it the moment a SIGTERM starts the drain."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from tests.support.llm_server import Fault, running_llm
from tests.support.workers import WorkerProcess, prepare_corpus, worker_env
from tests.telemetry.scrape import free_port, get, total, wait_for
from workflows.models import Depth, ResearchRequest
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

QUESTION = "How does the with statement use context managers in Python?"


async def test_a_research_shows_in_the_sdk_metrics_and_the_product_counters(
    dev_client: Client, dev_address: str, tmp_path: Path
) -> None:
    prepare_corpus(tmp_path / "index")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with running_llm() as llm:
        env = worker_env(
            dev_address,
            f"tq-metrics-{uuid.uuid4().hex[:8]}",
            llm.base_url,
            tmp_path,
            WORKER_METRICS_PORT=str(port),
        )
        worker = WorkerProcess(env, tmp_path / "worker.log").start()
        try:
            wait_for(f"{base}/healthz", 200)
            llm.fail_next("route", Fault(status=500))  # one LLM call fails and is retried
            result = await dev_client.execute_workflow(
                DeepResearchWorkflow.run,
                ResearchRequest(query=QUESTION, depth=Depth.LIGHT),
                id=f"metrics-{uuid.uuid4().hex[:8]}",
                task_queue=env["TEMPORAL_TASK_QUEUE"],
            )
            status, text = get(f"{base}/metrics")
        finally:
            worker.stop()

    assert result.outcome.value == "completed"
    assert status == 200
    # The SDK's own: slots, schedule-to-start latency, activity failures (the scripted 500).
    assert "temporal_worker_task_slots_available" in text
    assert total(text, "temporal_activity_schedule_to_start_latency_count") >= 1
    assert total(text, "temporal_activity_execution_failed_total", activity_type="route") == 1
    # The product's.
    assert total(text, "deep_research_researches_started_total") == 1
    assert total(text, "deep_research_researches_completed_total", outcome="completed") == 1
    assert total(text, "deep_research_researches_failed_total") == 0
    assert (
        total(text, "deep_research_llm_calls_total", activity_type="route", outcome="unanswered")
        == 1
    )
    answered = total(text, "deep_research_llm_calls_total", outcome="answered")
    assert answered == len(llm.completions())
    prompt = total(text, "deep_research_llm_tokens_total", kind="prompt")
    assert prompt == sum(s.usage[0] for s in llm.completions())


async def test_healthz_turns_unready_when_the_drain_starts(
    dev_client: Client, dev_address: str, tmp_path: Path
) -> None:
    prepare_corpus(tmp_path / "index")
    port = free_port()
    health = f"http://127.0.0.1:{port}/healthz"
    with running_llm(latency_s=3.0) as llm:
        env = worker_env(
            dev_address,
            f"tq-health-{uuid.uuid4().hex[:8]}",
            llm.base_url,
            tmp_path,
            WORKER_METRICS_PORT=str(port),
        )
        worker = WorkerProcess(env, tmp_path / "worker.log").start()
        try:
            wait_for(health, 200)
            assert get(health)[1] == "polling\n"
            await dev_client.start_workflow(
                DeepResearchWorkflow.run,
                ResearchRequest(query=QUESTION, depth=Depth.LIGHT),
                id=f"health-{uuid.uuid4().hex[:8]}",
                task_queue=env["TEMPORAL_TASK_QUEUE"],
            )
            while not llm.served:  # an LLM call is in flight: the drain has something to wait for
                await asyncio.sleep(0.05)
            assert worker.process is not None
            worker.process.terminate()
            wait_for(health, 503, timeout_s=2.5)
            assert get(health)[1] == "not polling\n"
            assert worker.process.wait(30) == 0
        finally:
            worker.stop()
    assert get(health)[0] == 0  # gone with the process
