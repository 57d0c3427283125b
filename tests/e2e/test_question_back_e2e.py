"""A question back that repeats the question is not asked, end to end: the
real worker and `openai` engine against the scripted OpenAI-protocol server, whose router asks to
clarify a clear question and whose clarifier hands the question back word for word, as
SmolLM2-135M does. The research must not wait for an answer: it completes, asks nothing, and its
notes (given to the synthesizer, shown by the CLI and the research page) say why."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.openai_engine import grounding
from tests.e2e.test_llm_research import start_worker, worker_env
from tests.support.llm_server import running_llm
from workflows.models import Depth, ResearchRequest, ResearchResult, Stage
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

QUESTION = "How did lighthouse keepers live?"


async def test_a_question_back_that_repeats_the_question_is_not_asked_and_the_notes_say_so(
    dev_env: WorkflowEnvironment, dev_client: Client, tmp_path: Path
) -> None:
    with running_llm() as llm:
        llm.answers["route"] = {"decision": "CLARIFICATION", "reasoning": "It could mean much."}
        llm.answers["clarify"] = {"question": QUESTION}
        worker = start_worker(worker_env(dev_env, tmp_path, llm), tmp_path)
        try:
            handle = await dev_client.start_workflow(
                DeepResearchWorkflow.run,
                ResearchRequest(query=QUESTION, depth=Depth.LIGHT, max_clarifications=2),
                id=f"echo-{uuid.uuid4().hex[:8]}",
                task_queue=worker.env["TEMPORAL_TASK_QUEUE"],
            )
            # A question asked would wait 24 hours for its answer: this would time out.
            result: ResearchResult = await asyncio.wait_for(handle.result(), timeout=120)
        finally:
            worker.stop()
        clarify_calls = len(llm.completions("clarify"))

    assert result.outcome is Stage.COMPLETED
    assert result.clarifications == []
    assert Stage.AWAITING_ANSWER not in result.stage_history
    assert clarify_calls == 1
    assert grounding.ECHO_SKIPPED in result.notes
