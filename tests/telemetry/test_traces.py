"""With OTEL_EXPORTER_OTLP_ENDPOINT set, a research started from the web app arrives at a real
OTLP/HTTP receiver as one trace: the web request, the workflow started from it, its activities on
the worker, and their HTTP calls to the LLM. Unset, nothing is sent."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.support.llm_server import running_llm
from tests.support.workers import WorkerProcess, prepare_corpus, worker_env
from tests.telemetry.processes import TOKEN, Collector, web_app
from tests.telemetry.scrape import get

pytestmark = pytest.mark.e2e

QUESTION = "How does the with statement use context managers in Python?"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def start_research(base: str) -> str:
    body = json.dumps({"question": QUESTION, "depth": "light"}).encode()
    request = urllib.request.Request(
        f"{base}/api/research",
        data=body,
        headers={**AUTH, "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return str(json.loads(answer.read())["id"])


async def finished(base: str, research_id: str, timeout_s: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, text = get(f"{base}/api/research/{research_id}", AUTH)
        shown = json.loads(text) if status == 200 else {}
        if shown and not shown["running"]:
            return shown
        await asyncio.sleep(0.2)
    raise AssertionError(f"research {research_id} did not finish in {timeout_s} s")


async def spans_named(collector: Collector, wanted: set[str], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not wanted <= {s["name"] for s in collector.spans}:
        if time.monotonic() > deadline:
            names = sorted({s["name"] for s in collector.spans})
            raise AssertionError(f"spans missing: {wanted - set(names)}; received {names}")
        await asyncio.sleep(0.1)


async def test_a_research_from_the_web_app_is_one_trace_down_to_the_llm_calls(
    dev_address: str, tmp_path: Path
) -> None:
    prepare_corpus(tmp_path / "index")
    collector = Collector()
    with collector.running(), running_llm() as llm:
        env = worker_env(
            dev_address,
            f"tq-traces-{uuid.uuid4().hex[:8]}",
            llm.base_url,
            tmp_path,
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint,
            OTEL_BSP_SCHEDULE_DELAY="200",
        )
        worker = WorkerProcess(env, tmp_path / "worker.log").start()
        try:
            with web_app(env, tmp_path / "web.log") as base:
                research_id = start_research(base)
                shown = await finished(base, research_id)
                await spans_named(
                    collector,
                    {
                        "POST /api/research",
                        "StartWorkflow:DeepResearchWorkflow",
                        "RunWorkflow:DeepResearchWorkflow",
                        "RunActivity:plan",
                        "POST",
                    },
                )
        finally:
            worker.stop()

    assert shown["status"] == "completed"
    assert "traces on (OTLP)" in (tmp_path / "worker.log").read_text()
    by_name = {s["name"]: s for s in collector.spans}
    assert by_name["POST /api/research"]["service"] == "deep-research-web"
    assert by_name["StartWorkflow:DeepResearchWorkflow"]["service"] == "deep-research-web"
    assert by_name["RunWorkflow:DeepResearchWorkflow"]["service"] == "deep-research-worker"
    llm_calls = [s for s in collector.spans if s["scope"].endswith("instrumentation.httpx")]
    assert llm_calls and {s["service"] for s in llm_calls} == {"deep-research-worker"}
    # One trace from the request to the LLM calls.
    trace = by_name["POST /api/research"]["trace_id"]
    assert by_name["RunWorkflow:DeepResearchWorkflow"]["trace_id"] == trace
    assert by_name["RunActivity:plan"]["trace_id"] == trace
    assert {s["trace_id"] for s in llm_calls} == {trace}


async def test_a_research_from_the_cli_is_one_trace_rooted_in_its_start(
    dev_address: str, tmp_path: Path
) -> None:
    """The CLI's start span is the root; the workflow's own span is beneath it and the
    activities' beneath that, on the worker."""
    prepare_corpus(tmp_path / "index")
    collector = Collector()
    with collector.running(), running_llm() as llm:
        env = worker_env(
            dev_address,
            f"tq-cli-traces-{uuid.uuid4().hex[:8]}",
            llm.base_url,
            tmp_path,
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint,
            OTEL_BSP_SCHEDULE_DELAY="200",
        )
        worker = WorkerProcess(env, tmp_path / "worker.log").start()
        try:
            done = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "starter", "research", QUESTION, "--depth", "light"]
                + ["--json"],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=180,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            await spans_named(
                collector,
                {
                    "StartWorkflow:DeepResearchWorkflow",
                    "RunWorkflow:DeepResearchWorkflow",
                    "RunActivity:plan",
                },
            )
        finally:
            worker.stop()
    by_name = {s["name"]: s for s in collector.spans}
    start = by_name["StartWorkflow:DeepResearchWorkflow"]
    assert start["service"] == "deep-research-cli" and not start["parent_id"].strip("0")
    run = by_name["RunWorkflow:DeepResearchWorkflow"]
    assert run["service"] == "deep-research-worker"
    assert run["trace_id"] == start["trace_id"] and run["parent_id"] == start["span_id"]
    activities = [s for s in collector.spans if s["name"].startswith("RunActivity:")]
    assert activities and {s["trace_id"] for s in activities} == {start["trace_id"]}
    # each activity's span hangs under the workflow's StartActivity span, which Temporal's
    # interceptor parents on the start (workflow spans end at once: a workflow replays)
    spans = {s["span_id"]: s for s in collector.spans}
    for activity in activities:
        chain, parent = [], activity["parent_id"]
        while parent in spans and len(chain) < 10:
            chain.append(spans[parent]["name"])
            parent = spans[parent]["parent_id"]
        expected = f"StartActivity:{activity['name'].split(':', 1)[1]}"
        assert chain[0] == expected and chain[-1] == start["name"], (activity["name"], chain)


async def test_the_worker_says_whether_it_sends_traces(dev_address: str, tmp_path: Path) -> None:
    """Without OTEL_EXPORTER_OTLP_ENDPOINT no tracer provider is set up at all (telemetry/traces.py),
    and the start line a person reads says nothing of traces."""
    prepare_corpus(tmp_path / "index")
    with running_llm() as llm:
        env = worker_env(dev_address, f"tq-untraced-{uuid.uuid4().hex[:8]}", llm.base_url, tmp_path)
        worker = WorkerProcess(env, tmp_path / "worker.log").start()
        worker.stop()
    line = next(
        x for x in (tmp_path / "worker.log").read_text().splitlines() if "worker: task queue" in x
    )
    assert "traces" not in line
