"""Whole research runs with the `openai` engine: a real worker process talks over real sockets to
an OpenAI-compatible test server (tests/support/llm_server.py) and to a Langfuse stand-in
(tests/support/langfuse_server.py), on the Temporal dev server. What a user would notice: retries that
wait as long as the server asked, failures that end in one clear line, costs that add up to what
the endpoint served, and every LLM call of a run in one Langfuse trace.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities import tracing
from activities.prompts.loader import load_prompt
from tests.conftest import REPO
from tests.support.langfuse_server import FakeLangfuse, running_langfuse
from tests.support.llm_server import USAGE, Fault, ScriptedLLM, running_llm
from workflows.models import Depth, ResearchRequest, ResearchResult, Stage
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

API_KEY = "sk-proj-LIVE-do-not-leak-7f3a9c0e5d"
QUESTION = "How does the with statement use context managers in Python?"
PLANNER_MARKER = "PLANNER PROMPT SERVED BY LANGFUSE"


@dataclass
class RunningWorker:
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()


def worker_env(
    dev_env: WorkflowEnvironment, folder: Path, llm: ScriptedLLM, **extra: str
) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "LLM_", "LANGFUSE_", "TEMPORAL_", "SEARCH_", "RESEARCH_"))
    }
    env.update(
        TEMPORAL_ADDRESS=dev_env.client.service_client.config.target_host,
        TEMPORAL_TASK_QUEUE=f"tq-llm-{uuid.uuid4().hex[:8]}",
        OPENAI_BASE_URL=llm.base_url,
        OPENAI_API_KEY=API_KEY,
        LLM_MODEL="test-model",
        # A request that sends nothing for 1.5 s times out (no allowance for reading the prompt).
        LLM_SILENCE_TIMEOUT_S="1.5",
        LLM_PROMPT_TOKENS_PER_S="1000000",
        SEARCH_PROVIDER="local",
        RESEARCH_INDEX_DIR=str(folder / "index"),
        RESEARCH_DB_URL=f"sqlite:///{folder / 'library.sqlite'}",
        LANGFUSE_FLUSH_INTERVAL="0.3",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def start_worker(env: dict[str, str], folder: Path) -> RunningWorker:
    log = folder / f"worker-{env['TEMPORAL_TASK_QUEUE']}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "worker.py"], cwd=REPO, env=env, stderr=out, stdout=out
        )
    return RunningWorker(env, process, log)


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with running_llm() as server:
        yield server


@pytest.fixture(scope="module")
def langfuse() -> Iterator[FakeLangfuse]:
    # A public key of its own: the Langfuse SDK keeps one client per public key in a process.
    with running_langfuse(
        public_key=f"pk-lf-{uuid.uuid4().hex[:8]}", secret_key="sk-lf-test"
    ) as server:
        yield server


@pytest_asyncio.fixture(scope="module")
async def traced_worker(
    dev_env: WorkflowEnvironment,
    llm: ScriptedLLM,
    langfuse: FakeLangfuse,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[RunningWorker]:
    """A worker with Langfuse configured; the planner's prompt is managed there (version 3)."""
    local = load_prompt("agent_planner").template
    for text in ("an old version", "another old version", f"{PLANNER_MARKER}\n\n{local}"):
        langfuse.add_prompt("agent_planner", text, labels=["production"])
    folder = tmp_path_factory.mktemp("traced")
    running = start_worker(
        worker_env(
            dev_env,
            folder,
            llm,
            LANGFUSE_HOST=langfuse.url,
            LANGFUSE_PUBLIC_KEY=_public_key(langfuse),
            LANGFUSE_SECRET_KEY="sk-lf-test",
            # The test is about which prompt is used, not how fast Langfuse answers a busy machine.
            LANGFUSE_PROMPT_WAIT_S="30",
        ),
        folder,
    )
    yield running
    running.stop()


@pytest_asyncio.fixture(scope="module")
async def plain_worker(
    dev_env: WorkflowEnvironment, llm: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[RunningWorker]:
    """A worker without Langfuse (the default)."""
    folder = tmp_path_factory.mktemp("plain")
    running = start_worker(worker_env(dev_env, folder, llm), folder)
    yield running
    running.stop()


def _public_key(langfuse: FakeLangfuse) -> str:
    import base64

    return base64.b64decode(langfuse.auth.split()[1]).decode().split(":")[0]


async def research(
    client: Client, worker: RunningWorker, **overrides: Any
) -> tuple[str, str, ResearchResult, float]:
    request = ResearchRequest(query=QUESTION, depth=Depth.LIGHT, **overrides)
    workflow_id = f"llm-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    handle = await client.start_workflow(
        DeepResearchWorkflow.run,
        request,
        id=workflow_id,
        task_queue=worker.env["TEMPORAL_TASK_QUEUE"],
    )
    result = await asyncio.wait_for(handle.result(), timeout=120)
    return workflow_id, handle.result_run_id or "", result, time.monotonic() - started


def assert_accounting_matches_the_server(result: ResearchResult, llm: ScriptedLLM) -> None:
    served = llm.completions()
    assert result.stats.llm_calls == len(served)
    assert result.stats.llm_calls_by_role == dict(Counter(s.role for s in served))
    assert result.stats.prompt_tokens == USAGE[0] * len(served)
    assert result.stats.completion_tokens == USAGE[1] * len(served)


# --- tracing and prompts ------------------------------------------------------------------------------


async def test_every_llm_call_of_a_run_lands_in_one_langfuse_trace(
    dev_client: Client, llm: ScriptedLLM, langfuse: FakeLangfuse, traced_worker: RunningWorker
) -> None:
    llm.reset()

    workflow_id, run_id, result, _ = await research(dev_client, traced_worker)

    assert result.outcome is Stage.COMPLETED
    assert_accounting_matches_the_server(result, llm)
    trace = tracing.trace_id(workflow_id, run_id)
    generations = await _generations_of(langfuse, workflow_id, expected=len(llm.served))
    assert {g.trace_id for g in generations} == {trace}
    assert all(g.attributes["langfuse.trace.name"] == "DeepResearchWorkflow" for g in generations)
    assert len(generations) == len(llm.served)  # one generation per request the endpoint saw
    assert {g.name for g in generations} >= {
        "agent_orchestrator",
        "agent_coordinator",
        "agent_background",
        "agent_planner",
        "agent_researcher_queries",
        "agent_researcher",
        "agent_reflector",
        "agent_synthesizer",
    }
    for generation in generations:
        usage = json.loads(generation.attributes["langfuse.observation.usage_details"])
        assert usage == {"input": USAGE[0], "output": USAGE[1]}
        assert generation.attributes["langfuse.observation.model.name"] == "test-model"
    planner = [g for g in generations if g.name == "agent_planner"]
    others = [g for g in generations if g.name != "agent_planner"]
    assert planner and all(
        g.attributes.get("langfuse.observation.prompt.name") == "agent_planner" for g in planner
    )
    assert all(g.attributes.get("langfuse.observation.prompt.version") == 3 for g in planner)
    assert all("langfuse.observation.prompt.version" not in g.attributes for g in others)
    routing = [g for g in generations if g.name == "agent_orchestrator"]
    assert routing, "the first message is routed by the LLM"
    metadata = {
        k.rsplit(".", 1)[-1]: json.loads(v)
        for k, v in routing[0].attributes.items()
        if ".metadata." in k
    }
    assert metadata["next_agent"] == "coordinator"
    assert metadata["clarification_count"] == 0 and metadata["iteration"] == 0
    assert metadata["attempt"] == 1 and metadata["workflow_id"] == workflow_id


async def test_a_prompt_served_by_langfuse_overrides_the_file(
    dev_client: Client, llm: ScriptedLLM, traced_worker: RunningWorker
) -> None:
    llm.reset()

    await research(dev_client, traced_worker)

    planner = llm.requests("plan")
    assert planner and all(PLANNER_MARKER in r.content for r in planner)
    coordinator = llm.requests("coordinate")
    assert coordinator and PLANNER_MARKER not in coordinator[0].content


async def _generations_of(langfuse: FakeLangfuse, workflow_id: str, expected: int) -> list[Any]:
    """The run's generations, once the worker's batch exporter has sent them all."""
    deadline = time.monotonic() + 20
    while True:
        found = [g for g in langfuse.generations() if g.attributes.get("session.id") == workflow_id]
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.2)


# --- retries and failures -----------------------------------------------------------------------------


async def test_rate_limiting_waits_as_long_as_the_server_asks(
    dev_client: Client, llm: ScriptedLLM, langfuse: FakeLangfuse, traced_worker: RunningWorker
) -> None:
    llm.reset()
    llm.fail_next(
        "plan",
        Fault(
            429,
            {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
            headers={"Retry-After": "2"},
        ),
    )

    workflow_id, _, result, _ = await research(dev_client, traced_worker)

    first, second = llm.requests("plan")[:2]
    waited = second.at - first.at
    print(f"429 with Retry-After: 2 -> retried after {waited:.2f} s")
    assert 1.9 <= waited < 3.5, (
        f"the retry came {waited:.2f} s after the 429 (policy backoff is 1 s)"
    )
    assert result.outcome is Stage.COMPLETED
    assert result.stats.llm_retries_by_role == {"plan": 1}
    assert_accounting_matches_the_server(result, llm)
    failed = [
        g
        for g in await _generations_of(langfuse, workflow_id, expected=len(llm.served))
        if g.attributes.get("langfuse.observation.level") == "ERROR"
    ]
    assert [g.name for g in failed] == ["agent_planner"]
    assert "rate" in failed[0].attributes["langfuse.observation.status_message"].lower()
    assert json.loads(failed[0].attributes["langfuse.observation.metadata.attempt"]) == 1


async def test_a_server_error_is_retried_and_counted_as_a_retry(
    dev_client: Client, llm: ScriptedLLM, plain_worker: RunningWorker
) -> None:
    llm.reset()
    llm.fail_next("reflect", Fault(500))

    _, _, result, _ = await research(dev_client, plain_worker)

    assert result.outcome is Stage.COMPLETED
    assert [r.status for r in llm.requests("reflect")][:2] == [500, 200]
    assert result.stats.llm_retries_by_role == {"reflect": 1}
    assert_accounting_matches_the_server(result, llm)


async def test_garbage_then_valid_json_is_asked_again_and_both_replies_are_paid_for(
    dev_client: Client, llm: ScriptedLLM, plain_worker: RunningWorker
) -> None:
    llm.reset()
    llm.fail_next("plan", Fault(body="Sure! Here is your plan: {steps: [the with statement"))

    _, _, result, _ = await research(dev_client, plain_worker)

    assert result.outcome is Stage.COMPLETED
    assert result.stats.llm_calls_by_role["plan"] == 2  # the unreadable reply cost tokens too
    # Asked again in the same call, shown why its reply could not be read: no activity retry.
    assert result.stats.llm_retries_by_role == {} and result.stats.llm_reasked == 1
    asked_again = llm.requests("plan")[1].body["messages"]
    assert asked_again[1]["content"].startswith("Sure! Here is your plan")
    assert "could not be read" in asked_again[2]["content"]
    assert result.stats.tokens_by_role["plan"].prompt_tokens == 2 * USAGE[0]
    assert_accounting_matches_the_server(result, llm)
    assert (
        result.plan is not None
        and result.plan.steps[0].title == "The with statement and context managers"
    )


async def test_a_hung_server_times_out_and_the_call_is_retried(
    dev_client: Client, llm: ScriptedLLM, plain_worker: RunningWorker
) -> None:
    llm.reset()
    llm.fail_next("coordinate", Fault(hang_s=4.0))  # the worker gives a request 1.5 s

    _, _, result, _ = await research(dev_client, plain_worker)

    assert result.outcome is Stage.COMPLETED
    assert len(llm.requests("coordinate")) == 2
    assert result.stats.llm_retries_by_role == {"coordinate": 1}
    assert_accounting_matches_the_server(result, llm)


async def test_a_rejected_key_ends_the_research_at_once_with_one_line_and_no_key_anywhere(
    dev_client: Client, llm: ScriptedLLM, plain_worker: RunningWorker
) -> None:
    llm.reset()
    rejection = Fault(
        401,
        {
            "error": {
                "message": f"Incorrect API key provided: {API_KEY}.",
                "code": "invalid_api_key",
            }
        },
    )
    for role in ("route", "coordinate", "write_queries", "plan"):
        llm.fail_next(role, rejection)
    workflow_id = f"llm-401-{uuid.uuid4().hex[:6]}"
    env = {**plain_worker.env, "OPENAI_API_KEY": ""}  # the starter never needs the key

    started = time.monotonic()
    run = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "starter", "research", QUESTION, "--id", workflow_id],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    elapsed = time.monotonic() - started
    print(f"a rejected key: the starter exited after {elapsed:.2f} s")

    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    # The coordinator is asked alongside the first routing call:
    # whichever of the two is refused first names the research's failure.
    assert re.match(
        rf"error: research {workflow_id} failed: (route|coordinate): the LLM endpoint rejected the API key \(401\)",
        last,
    )
    assert "Traceback" not in run.stderr
    assert (
        len(llm.served) == 2
    )  # one request per role asked (route, coordinate): no retries for a permanent error
    assert elapsed < 15
    history = (await dev_client.get_workflow_handle(workflow_id).fetch_history()).to_json()
    assert API_KEY not in history and API_KEY not in run.stdout + run.stderr
    assert API_KEY not in plain_worker.log.read_text()


async def test_the_key_never_enters_a_completed_research_history(
    dev_client: Client, llm: ScriptedLLM, plain_worker: RunningWorker
) -> None:
    llm.reset()

    workflow_id, _, result, _ = await research(dev_client, plain_worker)

    assert result.outcome is Stage.COMPLETED
    history = (await dev_client.get_workflow_handle(workflow_id).fetch_history()).to_json()
    assert len(history) > 10_000 and API_KEY not in history and "LIVE-do-not-leak" not in history
    assert all(API_KEY not in s.content for s in llm.served)
    assert all(
        s.headers.get("authorization") == f"Bearer {API_KEY}" for s in llm.served
    )  # yet it was used


# --- a Langfuse outage --------------------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module")
async def worker_with_langfuse_down(
    dev_env: WorkflowEnvironment, llm: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[RunningWorker]:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    folder = tmp_path_factory.mktemp("down")
    running = start_worker(
        worker_env(
            dev_env,
            folder,
            llm,
            LANGFUSE_HOST=f"http://127.0.0.1:{port}",
            LANGFUSE_PUBLIC_KEY="pk-lf-down",
            LANGFUSE_SECRET_KEY="sk-lf-down",
        ),
        folder,
    )
    yield running
    running.stop()


async def test_with_langfuse_down_the_files_are_used_and_research_takes_no_longer(
    dev_client: Client,
    llm: ScriptedLLM,
    plain_worker: RunningWorker,
    worker_with_langfuse_down: RunningWorker,
) -> None:
    await research(dev_client, plain_worker)  # both workers warm (index built, connections open)
    await research(dev_client, worker_with_langfuse_down)
    llm.reset()

    _, _, without, plain_s = await research(dev_client, plain_worker)
    _, _, down, down_s = await research(dev_client, worker_with_langfuse_down)

    print(f"research: {plain_s:.2f} s without Langfuse, {down_s:.2f} s with Langfuse down")
    assert down.outcome is without.outcome is Stage.COMPLETED
    assert not any(PLANNER_MARKER in s.content for s in llm.served)
    local_planner = load_prompt("agent_planner").template.splitlines()[0]
    assert all(local_planner in s.content for s in llm.requests("plan"))
    # No per-call wait for Langfuse: a blocked fetch would cost its 2 s timeout on every call.
    assert down_s < plain_s + 1.0, (
        f"{down_s:.2f} s with Langfuse down vs {plain_s:.2f} s without it"
    )
