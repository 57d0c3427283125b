"""A worker started with WORKER_METRICS_PORT, as Kubernetes runs it: Prometheus scrapes the Temporal
SDK's metrics and the product's counters from /metrics during a research, and /healthz says 200
while the worker polls and stops saying it the moment a SIGTERM starts the drain."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.client import Client

from tests.support.llm_server import Fault, running_llm
from tests.support.workers import REPO
from tests.telemetry.processes import start_light, worker_with_metrics
from tests.telemetry.scrape import get, total, wait_for


@pytest.mark.e2e
async def test_a_research_shows_in_the_sdk_metrics_and_the_product_counters(
    dev_client: Client, dev_address: str, tmp_path: Path
) -> None:
    with running_llm() as llm:
        worker, base = worker_with_metrics(dev_address, llm, tmp_path)
        try:
            llm.fail_next("route", Fault(status=500))  # one LLM call fails and is retried
            result = await (await start_light(dev_client, worker)).result()
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
    unanswered = total(
        text, "deep_research_llm_calls_total", activity_type="route", outcome="unanswered"
    )
    assert unanswered == 1
    answered = total(text, "deep_research_llm_calls_total", outcome="answered")
    assert answered == len(llm.completions())
    prompt = total(text, "deep_research_llm_tokens_total", kind="prompt")
    assert prompt == sum(s.usage[0] for s in llm.completions())


@pytest.mark.e2e
async def test_healthz_turns_unready_when_the_drain_starts(
    dev_client: Client, dev_address: str, tmp_path: Path
) -> None:
    with running_llm(latency_s=3.0) as llm:
        worker, base = worker_with_metrics(dev_address, llm, tmp_path)
        health = f"{base}/healthz"
        try:
            assert get(health) == (200, "polling\n")
            await start_light(dev_client, worker)
            while not llm.served:  # an LLM call is in flight: the drain has something to wait for
                await asyncio.sleep(0.05)
            assert worker.process is not None
            worker.process.terminate()
            wait_for(health, 503, timeout_s=2.5)
            assert get(health) == (503, "not polling\n")
            assert worker.process.wait(30) == 0
        finally:
            worker.stop()
    assert get(health)[0] == 0  # gone with the process


def test_a_metrics_port_in_use_is_one_line(tmp_path: Path) -> None:
    """Nothing else is tried (not even Temporal): exit 2 and the reason, no traceback."""
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run(
            [sys.executable, "worker.py"],
            cwd=REPO,
            env={
                "PATH": "/usr/bin:/bin",
                "WORKER_METRICS_PORT": str(port),
                "LLM_PROVIDER": "offline",
                "SEARCH_PROVIDER": "local",
                "TEMPORAL_ADDRESS": "127.0.0.1:1",
            },
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1] == (
        f"error: WORKER_METRICS_PORT: cannot listen on port {port}: Address already in use"
    )
    assert "Traceback" not in run.stderr
