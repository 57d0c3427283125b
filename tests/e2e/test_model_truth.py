"""The truth about the model, end to end: a real worker against an OpenAI-compatible
test server that fails the way real ones do. A research its model never answered fails in one
line that names the endpoint and quotes the server; one where some roles fell back says so at
the top of its report and in its notes, and the starter's exit code tells a script which is which.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowFailureError
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_llm_research import RunningWorker, start_worker, worker_env
from tests.starter.cli.test_starter import starter
from tests.support.llm_server import CONTINUATION, Fault, ScriptedLLM, running_llm
from workflows.models import Depth, ResearchRequest, ResearchResult, Stage
from workflows.research import DeepResearchWorkflow
from workflows.roles import LLM_ROLES

pytestmark = pytest.mark.e2e

#: What llama-cpp-python really answered (HTTP 500) when a call carried what it cannot take.
CRASH = {"error": {"message": "llama_decode returned -3: model could not be loaded"}}


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with running_llm() as server:
        yield server


@pytest_asyncio.fixture(scope="module")
async def worker(
    dev_env: WorkflowEnvironment, llm: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[RunningWorker]:
    folder = tmp_path_factory.mktemp("truth")
    running = start_worker(worker_env(dev_env, folder, llm), folder)
    yield running
    running.stop()


def fail_every_call(llm: ScriptedLLM) -> None:
    for role in LLM_ROLES:
        llm.fail_next(role.name, *[Fault(status=500, body=CRASH)] * 40)


async def test_a_model_that_answers_every_call_with_an_error_fails_the_research_in_one_line(
    llm: ScriptedLLM, worker: RunningWorker
) -> None:
    llm.reset()
    fail_every_call(llm)
    run = await starter(
        "research",
        "How does ownership work in Rust?",
        "--depth",
        "light",
        "--max-clarifications",
        "0",
        env=worker.env,
        timeout=120,
    )
    assert run.code != 0
    said = (run.out + run.err).strip().splitlines()
    failure = [line for line in said if "answered none" in line]
    assert len(failure) == 1, said
    assert llm.base_url in failure[0]  # the endpoint, named
    assert "llama_decode returned -3" in failure[0]  # the server's own words
    assert "Traceback" not in run.err


async def test_the_failure_is_the_workflows_own_and_no_report_passes_for_the_models(
    dev_client: Client, llm: ScriptedLLM, worker: RunningWorker
) -> None:
    llm.reset()
    fail_every_call(llm)
    handle = await dev_client.start_workflow(
        DeepResearchWorkflow.run,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.LIGHT),
        id=f"truth-{uuid.uuid4().hex[:8]}",
        task_queue=worker.env["TEMPORAL_TASK_QUEUE"],
    )
    with pytest.raises(WorkflowFailureError) as failed:
        await asyncio.wait_for(handle.result(), timeout=120)
    cause = failed.value.cause
    assert "answered none of the research's calls" in str(cause)
    assert llm.base_url in str(cause)
    description = await handle.describe()
    assert description.status is not None and description.status.name == "FAILED"


async def researched(client: Client, worker: RunningWorker, question: str) -> ResearchResult:
    """A light research of QUESTION on the scripted model, completed."""
    handle = await client.start_workflow(
        DeepResearchWorkflow.run,
        ResearchRequest(query=question, depth=Depth.LIGHT),
        id=f"truth-{uuid.uuid4().hex[:8]}",
        task_queue=worker.env["TEMPORAL_TASK_QUEUE"],
    )
    result: ResearchResult = await asyncio.wait_for(handle.result(), timeout=180)
    assert result.outcome is Stage.COMPLETED
    return result


async def test_roles_that_fell_back_are_named_atop_the_report_and_in_its_notes(
    dev_client: Client, llm: ScriptedLLM, worker: RunningWorker, tmp_path: Path
) -> None:
    llm.reset()
    llm.fail_next("plan", *[Fault(status=500, body=CRASH)] * 4)
    llm.fail_next("critique", *[Fault(status=500, body=CRASH)] * 4)
    result = await researched(dev_client, worker, "How do Rust lifetimes work?")
    first = result.report_markdown.splitlines()[0]
    answered = result.stats.llm_answered
    assert f"The model answered {answered} of {answered + 2} calls" in first
    assert "planning and the critique fell back" in first
    assert any(n.startswith("The model answered") for n in result.notes)
    assert result.stats.llm_unanswered_by_role == {"plan": 1, "critique": 1}
    out = tmp_path / "result.json"
    out.write_text(json.dumps(result.model_dump(mode="json")))


async def test_a_step_whose_reply_was_cut_off_twice_gets_its_sources_sentences_not_a_blank(
    dev_client: Client, llm: ScriptedLLM, worker: RunningWorker
) -> None:
    """SmolLM2 on a busy machine ran out of reply tokens observing "How long is a year on Mars",
    its continuation too: the step said "The researcher could not write an observation" though
    mars.md was read. Now the engine quotes the step's sources, and the report says the step
    findings fell back."""
    llm.reset()
    llm.fail_next("observe", Fault(body='{"observation": "Lifetimes are', finish_reason="length"))
    llm.fail_next(CONTINUATION, Fault(body=" named regions of", finish_reason="length"))
    result = await researched(dev_client, worker, "How does the with statement work in Python?")
    assert result.stats.llm_unanswered_by_role == {"observe": 1}
    assert "the step findings fell back" in result.report_markdown.splitlines()[0]
    assert any(n.startswith("observe failed (") for n in result.notes), result.notes
    steps = result.plan.steps if result.plan else []
    assert steps and all(s.source_ids for s in steps), [(s.title, s.observation) for s in steps]
    assert not any("could not write an observation" in (s.observation or "") for s in steps)
