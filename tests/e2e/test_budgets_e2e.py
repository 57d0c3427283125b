"""Budgets, prices and language with the real worker, the `openai` engine and an
OpenAI-protocol test server whose token counts follow the texts (as a real endpoint's do).

What a user would notice: a token budget of a third of what the research needs stops it early,
says so on the report's first line and spends at most one call over; a cost budget is priced per
tier model from LLM_PRICES and adds up to what the endpoint served; a German question makes every
prompt that writes for the reader ask for German.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from tests.e2e.test_llm_research import RunningWorker, start_worker, worker_env
from tests.support.llm_server import Fault, ScriptedLLM, running_llm, write_like_a_model
from workflows.models import BudgetKind, Depth, ResearchRequest, ResearchResult, Stage
from workflows.research import DeepResearchWorkflow
from workflows.roles import PROMPTS

pytestmark = pytest.mark.e2e

QUESTION = "How do Rust's ownership and borrowing rules prevent memory errors?"
PRICES = {
    "cheap-model": {"input": 0.5, "output": 1.0},
    "mid-model": {"input": 2.0, "output": 4.0},
    "dear-model": {"input": 10.0, "output": 30.0},
}


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with running_llm(usage_from_text=True) as server:
        yield server


@pytest_asyncio.fixture(scope="module")
async def worker(
    dev_env: WorkflowEnvironment,
    llm: ScriptedLLM,
    tmp_path_factory: pytest.TempPathFactory,
    rust_notes: Path,
) -> AsyncIterator[RunningWorker]:
    """One model per tier, each with its price, searching the project's own notes on Rust."""
    folder = tmp_path_factory.mktemp("budgets")
    running = start_worker(
        worker_env(
            dev_env,
            folder,
            llm,
            LLM_MODEL_SIMPLE="cheap-model",
            LLM_MODEL_ANALYTICAL="mid-model",
            LLM_MODEL_COMPLEX="dear-model",
            LLM_PRICES=json.dumps(PRICES),
            RESEARCH_CORPUS_DIR=str(rust_notes),
        ),
        folder,
    )
    yield running
    running.stop()


async def run(client: Client, worker: RunningWorker, **request: Any) -> ResearchResult:
    handle = await client.start_workflow(
        DeepResearchWorkflow.run,
        ResearchRequest(**{"query": QUESTION, **request}),
        id=f"budget-{uuid.uuid4().hex[:8]}",
        task_queue=worker.env["TEMPORAL_TASK_QUEUE"],
    )
    return await asyncio.wait_for(handle.result(), timeout=120)


def spent(llm: ScriptedLLM) -> int:
    return sum(p + c for p, c in (s.usage for s in llm.completions()))


async def test_a_third_of_the_tokens_stops_early_says_so_and_spends_at_most_one_call_over(
    dev_client: Client,
    llm: ScriptedLLM,
    worker: RunningWorker,
) -> None:
    llm.reset()
    write_like_a_model(llm)
    full = await run(dev_client, worker, depth=Depth.MEDIUM)
    unbudgeted = spent(llm)
    print(f"unbudgeted medium research: {unbudgeted} tokens in {len(llm.completions())} calls")
    assert full.budget is not None and full.budget.exhausted is None
    assert full.budget.spent_tokens == unbudgeted and full.plan is not None
    assert sum(s.status.value == "completed" for s in full.plan.steps) == 4

    llm.reset()
    write_like_a_model(llm)
    limit = unbudgeted // 3
    partial = await run(dev_client, worker, depth=Depth.MEDIUM, max_tokens=limit)

    assert partial.outcome is Stage.COMPLETED and partial.budget is not None
    assert partial.budget.exhausted is BudgetKind.TOKENS
    done = sum(s.status.value == "completed" for s in partial.plan.steps) if partial.plan else 0
    assert done < 4
    first_line = partial.report_markdown.splitlines()[0]
    assert (
        first_line
        == f"> Partial report: the token budget of {limit:,} ran out after {done} of 4 steps."
    )
    print(
        f"a third ({limit}): {partial.budget.spent_tokens} tokens spent, {done} of 4 steps; report:\n"
        + partial.report_markdown[:1500]
    )
    largest_call = max(p + c for p, c in (s.usage for s in llm.completions()))
    assert partial.budget.spent_tokens == spent(llm) <= limit + largest_call
    assert (
        partial.stats.prompt_tokens + partial.stats.completion_tokens == partial.budget.spent_tokens
    )


async def test_a_third_of_a_medium_researchs_tokens_buys_a_step_and_the_report_that_cites_it(
    dev_client: Client, llm: ScriptedLLM, worker: RunningWorker
) -> None:
    """With a third (or a quarter) of an unbudgeted medium research's tokens, the step
    was admitted beside a reserve sized before it (and counting text the report never shows), so
    a quarter researched 0 of 3 steps and spent what it kept on a report of nothing, and a third
    bought a step whose findings then left no room for the report: the synthesizer was skipped
    and the observations listed as found. Now a third researches a step and writes the report
    citing it; a quarter still researches a step, its findings cited in the report."""
    llm.reset()
    write_like_a_model(llm, steps=3)  # a medium plan of three steps, as in the issue
    await run(dev_client, worker, depth=Depth.MEDIUM)
    unbudgeted = spent(llm)

    for share, written in ((3, True), (4, False)):
        llm.reset()
        write_like_a_model(llm, steps=3)
        limit = unbudgeted // share
        partial = await run(dev_client, worker, depth=Depth.MEDIUM, max_tokens=limit)

        served = [s.role for s in llm.completions()]
        print(f"1/{share} of {unbudgeted}: {partial.budget} {served}")
        assert partial.outcome is Stage.COMPLETED and partial.budget is not None
        plan = partial.plan.steps if partial.plan else []
        assert sum(s.status.value == "completed" for s in plan) >= 1, (served, partial.notes)
        body = partial.report_markdown.split("\n## Sources", 1)[0]
        assert re.search(r"\[\d+\]", body), partial.report_markdown[:600]
        if written:
            assert "synthesize" in served, partial.notes
            assert not [n for n in partial.notes if "synthesizer was unavailable" in n]
        largest_call = max(p + c for p, c in (s.usage for s in llm.completions()))
        assert partial.budget.spent_tokens == spent(llm) <= limit + largest_call


@pytest_asyncio.fixture(scope="module")
async def long_pages_worker(
    dev_env: WorkflowEnvironment,
    llm: ScriptedLLM,
    tmp_path_factory: pytest.TempPathFactory,
    rust_notes: Path,
) -> AsyncIterator[RunningWorker]:
    """The notes with three times their text each, so every page read is as long as a page may
    be (PAGE_TEXT_LIMIT), as the Python documentation's pages are."""
    folder = tmp_path_factory.mktemp("long-pages")
    corpus = folder / "notes"
    corpus.mkdir()
    for note in rust_notes.glob("*.md"):
        text = note.read_text()
        (corpus / note.name).write_text(f"{text}\n\n## Again\n\n{text}\n\n## Once more\n\n{text}")
    running = start_worker(
        worker_env(dev_env, folder, llm, RESEARCH_CORPUS_DIR=str(corpus)), folder
    )
    yield running
    running.stop()


async def test_a_third_of_the_tokens_buys_a_step_over_long_pages_read_in_part(
    dev_client: Client, llm: ScriptedLLM, long_pages_worker: RunningWorker
) -> None:
    """Long pages made a step's observation dearer than a third of the tokens could pay for
    beside the report: every step was skipped and the report cited nothing. Now the step reads
    the best of its pages as far as the budget allows, and the report cites what it found."""
    llm.reset()
    write_like_a_model(llm, steps=3)  # a medium plan of three steps, as in the issue
    await run(dev_client, long_pages_worker, depth=Depth.MEDIUM)
    limit = spent(llm) // 3

    llm.reset()
    write_like_a_model(llm, steps=3)  # a medium plan of three steps, as in the issue
    handle = await dev_client.start_workflow(
        DeepResearchWorkflow.run,
        ResearchRequest(query=QUESTION, depth=Depth.MEDIUM, max_tokens=limit),
        id=f"budget-{uuid.uuid4().hex[:8]}",
        task_queue=long_pages_worker.env["TEMPORAL_TASK_QUEUE"],
    )
    partial = await asyncio.wait_for(handle.result(), timeout=120)

    assert partial.budget is not None and partial.budget.exhausted is BudgetKind.TOKENS
    done = [s for s in partial.plan.steps if s.status.value == "completed"] if partial.plan else []
    assert len(done) >= 1, partial.report_markdown[:600]
    body = partial.report_markdown.split("\n## Sources", 1)[0]
    assert re.search(r"\[\d+\]", body), partial.report_markdown[:600]
    assert any(
        "of its sources' " in note and "the token budget had room for no more" in note
        for note in partial.notes
    ), partial.notes
    largest_call = max(p + c for p, c in (s.usage for s in llm.completions()))
    assert partial.budget.spent_tokens <= limit + largest_call
    history = await handle.fetch_history()  # the step cut to fit replays
    await Replayer(
        workflows=[DeepResearchWorkflow], data_converter=dev_client.data_converter
    ).replay_workflow(history)


async def test_cost_is_priced_per_tier_model_and_a_cost_budget_holds(
    dev_client: Client,
    llm: ScriptedLLM,
    worker: RunningWorker,
) -> None:
    llm.reset()
    llm.fail_next("plan", Fault(body="{not json"))  # served, paid for, unusable: asked again
    result = await run(dev_client, worker, depth=Depth.LIGHT, max_cost_usd=5.0)

    served = llm.completions()
    assert [s.role for s in served].count("plan") == 2 and result.stats.llm_reasked == 1
    assert {s.body["model"] for s in served} == {"cheap-model", "mid-model", "dear-model"}
    expected = sum(
        (p * PRICES[s.body["model"]]["input"] + c * PRICES[s.body["model"]]["output"]) / 1e6
        for s in served
        for p, c in [s.usage]
    )
    assert result.stats.cost_usd == pytest.approx(expected, abs=1e-6)
    assert result.budget is not None and result.budget.spent_cost_usd == pytest.approx(
        expected, abs=1e-6
    )
    assert result.budget.spent_tokens == spent(llm)  # the retried call's tokens count too
    assert result.budget.exhausted is None and result.budget.max_cost_usd == 5.0

    llm.reset()
    tight = await run(dev_client, worker, depth=Depth.LIGHT, max_cost_usd=expected / 3)
    assert tight.budget is not None and tight.budget.exhausted is BudgetKind.COST
    assert tight.report_markdown.startswith("> Partial report: the cost budget of $")
    costliest = max(
        (p * PRICES[s.body["model"]]["input"] + c * PRICES[s.body["model"]]["output"]) / 1e6
        for s in llm.completions()
        for p, c in [s.usage]
    )
    assert tight.stats.cost_usd is not None and tight.stats.cost_usd <= expected / 3 + costliest


async def test_a_german_question_asks_every_writer_for_german(
    dev_client: Client,
    llm: ScriptedLLM,
    worker: RunningWorker,
) -> None:
    llm.reset()
    write_like_a_model(llm)
    result = await run(
        dev_client,
        worker,
        query="Wie verhindern die Ownership- und Borrowing-Regeln von Rust Speicherfehler?",
        depth=Depth.MEDIUM,
    )

    assert result.language == "de"
    writers = {"observe", "outline_report", "write_section", "summarize_report"}
    prompts = [s for s in llm.completions() if s.role in writers]
    assert {s.role for s in prompts} == writers
    assert all("German" in s.content for s in prompts)
    assert all(
        s.body["max_tokens"] in {p.max_tokens for p in PROMPTS.values()} for s in llm.completions()
    )
