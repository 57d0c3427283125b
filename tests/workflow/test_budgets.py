"""Budgets, language and long reports in sections, through the real workflow on the time-skipping
server with scripted activities whose usage is scripted too (workflows/accounting/budget.py, language.py,
reporting.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from tests.support.doubles import DEFAULTS, Script
from tests.workflow.test_events import run_watched
from tests.workflow.test_workflow import run_research
from workflows.accounting import budget, calls
from workflows.accounting.state import ResearchState
from workflows.activity_models import (
    CoordinateOutput,
    ReadPageOutput,
    Usage,
)
from workflows.events import EventKind
from workflows.models import (
    Budget,
    BudgetKind,
    Complexity,
    Depth,
    ResearchRequest,
    Stage,
    StepStatus,
)
from workflows.report_models import (
    OutlineInput,
    OutlineOutput,
    ReportSection,
    SectionInput,
    SectionOutput,
)
from workflows.research import DeepResearchWorkflow
from workflows.roles import LLM_ROLES, PLAN, REFLECT
from workflows.text import language

QUESTION = "How does Rust's borrow checker prevent data races?"
#: What every scripted LLM call reports: 3,000 prompt tokens, 400 completion tokens (a call of a
#: real model reading pages), so the calls' worst cases (their max_tokens) do not dwarf them.
PER_CALL = (3000, 400)


def costing(
    behaviour: Callable[[Any], Any], prompt: int = PER_CALL[0], completion: int = PER_CALL[1]
) -> Callable[[Any], Any]:
    def run(inp: Any) -> Any:
        out = behaviour(inp)
        out.usage = Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            requests=1,
            cost_usd=0.001,
            price_in=1.0,
            price_out=2.0,
        )
        return out

    return run


def medium(inp: Any) -> CoordinateOutput:
    return CoordinateOutput(
        complexity=Complexity.MODERATE,
        is_simple=False,
        recommended_depth=Depth.MEDIUM,
        reasoning="several facets",
    )


def scripted(**overrides: Callable[[Any], Any]) -> Script:
    """Every LLM role reports PER_CALL tokens; the plan has four steps."""
    behaviour = {
        role.name: costing(overrides.get(role.name, DEFAULTS[role.name])) for role in LLM_ROLES
    }
    behaviour["coordinate"] = costing(medium)
    return Script(**behaviour)


def priced_like_a_model() -> Script:
    """`scripted`, but the short calls (routing, classifying, queries, reflecting) cost what a
    short call costs (800 prompt, 60 completion tokens): reading pages and writing are what a
    research spends its tokens on."""
    script = scripted()
    for role in ("route", "coordinate", "write_queries", "reflect"):
        script.behaviour[role] = costing(
            medium if role == "coordinate" else DEFAULTS[role], 800, 60
        )
    return script


# --- arithmetic ---------------------------------------------------------------------------------------


def test_a_budget_is_exceeded_only_past_its_limit() -> None:
    limit = Budget(max_tokens=1000, max_cost_usd=0.5)
    assert budget.exceeded(limit, 1000, 0.5) is None  # exactly at the limit is within it
    assert budget.exceeded(limit, 1001, 0.1) is BudgetKind.TOKENS
    assert budget.exceeded(limit, 10, 0.5000001) is BudgetKind.COST
    assert budget.exceeded(Budget(), 10**9, 10**6) is None


def _state_at(spent: int, limit: int) -> ResearchState:
    state = ResearchState(request=ResearchRequest(query=QUESTION, max_tokens=limit))
    state.stage = Stage.PLANNING
    state.ledger.budget = Budget(max_tokens=limit, spent_tokens=spent)
    return state


@pytest.fixture
def no_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """`admit` outside a workflow: the budget event it emits needs the workflow's clock."""
    monkeypatch.setattr(budget, "announce", lambda state: None)


@pytest.mark.usefixtures("no_events")
def test_a_call_that_fits_exactly_with_the_reserve_runs_and_one_token_less_stops_the_research() -> (
    None
):
    from workflows.activity_models import PlanInput

    arg = PlanInput(
        query=QUESTION, background="", completed_steps=[], iteration=1, min_steps=3, max_steps=6
    )
    probe = _state_at(1000, 10**8)
    need = (
        budget.likely(probe.ledger.spending, PLAN, arg).tokens + budget.research_reserve(probe)[0]
    )

    fits = _state_at(1000, 1000 + need)
    assert calls.admit(fits, PLAN, arg) is not None
    assert (
        fits.ledger.spending.in_flight_tokens
        == budget.likely(fits.ledger.spending, PLAN, arg).tokens
    )

    short = _state_at(1000, 1000 + need - 1)
    with pytest.raises(budget.BudgetSpent):
        calls.admit(short, PLAN, arg)
    assert short.ledger.budget.exhausted is BudgetKind.TOKENS


def test_a_call_is_held_at_what_its_role_wrote_before_not_at_its_max_tokens() -> None:
    from workflows.activity_models import ObserveInput
    from workflows.models import PlanStep
    from workflows.roles import OBSERVE

    arg = ObserveInput(
        query=QUESTION, step=PlanStep(title="Borrowing", description="d"), passages=[]
    )
    spending = _state_at(0, 10**6).ledger.spending
    first = budget.likely(spending, OBSERVE, arg)
    worst = budget.input_tokens(arg) + budget.PROMPT_OVERHEAD + OBSERVE.max_tokens
    assert first.tokens < worst  # half max_tokens, not all of it
    budget.remember(spending, "observe", 900, 200, 1, None, first.input_tokens)
    held = budget.likely(spending, OBSERVE, arg)
    assert 900 + 200 < held.tokens <= 900 * 1.05 + 200 * budget.COMPLETION_MARGIN + 20
    assert held.tokens < first.tokens  # learned: cheaper than the prior (1,200 max_tokens)


def test_under_a_tight_budget_independent_steps_go_one_wave_at_a_time_not_cancelled_together() -> (
    None
):
    from workflows.models import Plan, PlanStep

    def state(limit: int | None) -> ResearchState:
        s = _state_at(3000, limit or 10**8)
        s.ledger.budget.max_tokens = limit
        s.inquiry.plan = Plan(
            title="p",
            steps=[PlanStep(title=f"s{i}", description="d", independent=True) for i in range(4)],
        )
        return s

    assert budget.affordable(state(None), [0, 1, 2, 3]) == [0, 1, 2, 3]  # no budget: all at once
    assert budget.affordable(state(10**6), [0, 1, 2, 3]) == [0, 1, 2, 3]
    assert budget.affordable(state(12_000), [0, 1, 2, 3]) == [0]  # room for about one step
    roomy = budget.affordable(state(40_000), [0, 1, 2, 3])
    assert 1 < len(roomy) < 4 and roomy == [0, 1, 2, 3][: len(roomy)]


@pytest.mark.usefixtures("no_events")
def test_a_step_too_dear_over_all_its_pages_reads_them_in_part_and_is_admitted() -> None:
    from workflows.accounting import step_budget
    from workflows.activity_models import ObserveInput
    from workflows.models import Passage, Plan, PlanStep
    from workflows.roles import OBSERVE

    page = ("The borrow checker rejects two mutable references to one value. " * 70)[:4000]
    step = PlanStep(title="Borrowing", description="d")
    whole = ObserveInput(
        query=QUESTION,
        step=step,
        passages=[Passage(source_id=i, title=f"p{i}", url=f"u{i}", text=page) for i in (1, 2, 3)],
    )

    def state(limit: int) -> ResearchState:
        s = _state_at(2000, limit)
        s.stage = Stage.RESEARCHING
        s.inquiry.plan = Plan(title="p", steps=[step])
        return s

    probe = state(10**8)
    need = budget.likely(probe.ledger.spending, OBSERVE, whole).tokens
    need += budget.research_reserve(probe)[0]
    assert step_budget.affordable_passages(state(2000 + need), whole) is whole  # it fits

    tight = state(2000 + need * 2 // 3)
    cut = step_budget.affordable_passages(tight, whole)
    kept = sum(len(p.text) for p in cut.passages)
    assert step_budget.MIN_CHARS <= kept < 12000
    assert [p.source_id for p in cut.passages] == [1, 2, 3][: len(cut.passages)]  # best first
    assert calls.admit(tight, OBSERVE, cut) is not None  # the cut step is admitted
    assert tight.writeup.notes == [
        f"Step 1 read {kept:,} of its sources' 12,000 characters: "
        "the token budget had room for no more."
    ]

    starved = state(2000 + budget.research_reserve(probe)[0] + 100)
    assert step_budget.affordable_passages(starved, whole) is whole  # no finding to buy
    with pytest.raises(budget.BudgetSpent):
        calls.admit(starved, OBSERVE, whole)


@pytest.mark.usefixtures("no_events")
def test_while_the_report_is_written_a_call_without_room_is_skipped_not_fatal() -> None:
    state = _state_at(990, 1000)
    state.stage = Stage.SYNTHESIZING  # the budget's report phase follows the stage
    from workflows.activity_models import ReflectInput
    from workflows.models import Plan

    assert (
        calls.admit(
            state,
            REFLECT,
            ReflectInput(
                query=QUESTION,
                plan=Plan(title="p"),
                completed_steps=0,
                min_steps=1,
                sources_count=0,
            ),
        )
        is None
    )
    assert state.writeup.notes[-1].startswith(
        "reflect was skipped: the tokens budget had no room left"
    )


@pytest.mark.parametrize(
    "text, code",
    [
        ("How does Rust manage memory?", "en"),
        ("Wie verwaltet Rust den Speicher, und warum ist das sicher?", "de"),
        ("Comment Rust gère-t-il la mémoire ?", "fr"),
        ("¿Cómo gestiona Rust la memoria?", "es"),
        ("Rust quản lý bộ nhớ như thế nào?", "vi"),
        ("Как Rust управляет памятью?", "ru"),
        ("Rust 是如何管理内存的？", "zh"),
        ("Rustはどのようにメモリを管理しますか？", "ja"),
        ("Rust는 메모리를 어떻게 관리합니까?", "ko"),
        ("كيف تدير لغة Rust الذاكرة؟", "ar"),
        ("Πώς διαχειρίζεται η Rust τη μνήμη;", "el"),
        ("Tell me more about asyncio", "en"),
    ],
)
def test_the_question_s_language_is_detected_in_any_script(text: str, code: str) -> None:
    assert language.detect(text) == code


# --- whole researches -----------------------------------------------------------------------------------


async def test_a_token_budget_stops_the_research_before_the_report_s_reserve_and_says_so(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    full, _ = await run_research(
        time_skipping_env.client, scripted(), ResearchRequest(query=QUESTION, depth=Depth.MEDIUM)
    )
    assert full.budget is not None and full.budget.exhausted is None
    planned = len(full.plan.steps) if full.plan else 0
    assert planned >= 3 and full.budget.spent_tokens == sum(PER_CALL) * full.stats.llm_calls

    limit = full.budget.spent_tokens * 2 // 3
    script = scripted()
    result, status, seen = await run_watched(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, depth=Depth.MEDIUM, max_tokens=limit),
    )

    assert result.budget is not None and result.budget.exhausted is BudgetKind.TOKENS
    assert result.budget.spent_tokens <= limit  # the reserve held: not even one call over
    done = sum(s.status is StepStatus.COMPLETED for s in result.plan.steps) if result.plan else 0
    assert 1 <= done < planned
    assert result.report_markdown.splitlines()[0] == (
        f"> Partial report: the token budget of {limit:,} ran out after {done} of {planned} steps."
    )
    assert all(s.status is StepStatus.SKIPPED for s in result.plan.steps[done:])  # type: ignore[union-attr]
    # The report was written and checked in full: nothing of it was skipped for lack of budget.
    assert script.calls["synthesize"] and script.calls["critique"]
    assert not any("was skipped" in n for n in result.notes)
    assert any(n.startswith(f"The token budget of {limit:,} ran out") for n in result.notes)
    assert result.outcome is Stage.COMPLETED and Stage.SYNTHESIZING in status.stage_history
    [spent] = [e for e in seen if e.kind is EventKind.BUDGET]  # the event stream says so too
    assert spent.data["exhausted"] == "tokens" and spent.data["max_tokens"] == limit
    assert f"tokens of {limit:,}" in seen[-1].text and "(tokens budget spent)" in seen[-1].text


async def test_a_third_of_the_tokens_buys_a_researched_cited_step_and_is_spent(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """Admission by what calls cost (not by their max_tokens) and, before the first step, a
    reserve for the report alone: a third of a medium research's tokens researches at least one
    step, cites it, and spends most of what it was given without going over by more than a call."""
    full, _ = await run_research(
        time_skipping_env.client,
        priced_like_a_model(),
        ResearchRequest(query=QUESTION, depth=Depth.MEDIUM),
    )
    assert full.budget is not None and full.budget.exhausted is None
    limit = full.budget.spent_tokens // 3

    script = priced_like_a_model()
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, depth=Depth.MEDIUM, max_tokens=limit),
    )

    assert result.budget is not None and result.budget.exhausted is BudgetKind.TOKENS
    steps = result.plan.steps if result.plan else []
    done = [s for s in steps if s.status is StepStatus.COMPLETED]
    assert done and done[0].source_ids, [(s.title, s.status) for s in steps]
    assert script.calls["synthesize"]  # written by the synthesizer, not the plain fallback
    assert any(
        f"[{n}]" in result.report_markdown for n in done[0].source_ids
    )  # cited in the report
    assert result.report_markdown.splitlines()[0] == (
        f"> Partial report: the token budget of {limit:,} ran out after {len(done)} of {len(steps)} steps."
    )
    assert 0.6 * limit <= result.budget.spent_tokens <= limit + sum(PER_CALL)


async def test_a_refinement_rewrites_rather_than_researches_once_a_budget_has_run_out(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """Research what is missing goes through the budget-guarded wave loop: once the token budget
    stopped the research, the critic's coverage issue gets a rewrite, not steps nobody pays for."""
    from tests.workflow.test_reviews import FINE, UNCOVERED, critic

    full, _ = await run_research(
        time_skipping_env.client, scripted(), ResearchRequest(query=QUESTION, depth=Depth.MEDIUM)
    )
    assert full.budget is not None
    limit = full.budget.spent_tokens * 2 // 3
    script = scripted(critique=critic(UNCOVERED, FINE))
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, depth=Depth.MEDIUM, max_tokens=limit),
    )
    assert result.budget is not None and result.budget.exhausted is BudgetKind.TOKENS
    assert [(r.round, r.action) for r in result.refinements] == [(1, "rewrite")]
    assert len(script.calls["plan"]) == 1  # no plan for what is missing


async def test_cost_adds_up_and_the_report_is_in_the_question_s_language(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = scripted()
    script.behaviour["read_page"] = lambda req: ReadPageOutput(
        url=req.url,
        title="The borrow checker",
        text="The borrow checker rejects code with data races at compile time, so safe Rust has none.",
    )
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(
            query="Wie verhindert der Borrow-Checker von Rust Data Races?", depth=Depth.LIGHT
        ),
    )
    assert result.stats.cost_usd == pytest.approx(0.001 * result.stats.llm_calls)
    assert result.language == "de"
    assert {inp.language for inp in script.calls["observe"]} == {"de"}
    assert {inp.language for inp in script.calls["synthesize"]} == {"de"}
    assert "Most sources were in English, not German." in result.notes

    script = scripted()
    named, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, depth=Depth.LIGHT, language="fr"),
    )
    assert named.language == "fr" and {inp.language for inp in script.calls["synthesize"]} == {"fr"}


async def test_a_long_report_is_outlined_written_by_section_and_assembled_with_global_citations(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    def outline(inp: OutlineInput) -> OutlineOutput:
        done = [i for i, s in enumerate(inp.plan.steps) if s.observation]
        # The last two steps explain the same thing: one section; a step left out gets its own.
        return OutlineOutput(
            title="Borrowing, explained",
            sections=[
                ReportSection(heading="How it fits together", brief="b", step_indexes=done[1:]),
                ReportSection(heading="Not a step", brief="b", step_indexes=[99]),
            ],
            engine="double",
        )

    def section(inp: SectionInput) -> SectionOutput:
        ids = sorted({e.source_id for e in inp.evidence} | {s.id for s in inp.sources})
        return SectionOutput(
            markdown=" ".join(
                f"{s.title} is explained [{n}]." for s, n in zip(inp.steps, ids, strict=False)
            )
        )

    script = Script(coordinate=medium, outline_report=outline, write_section=section)
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, depth=Depth.MEDIUM, verify=False),
    )

    assert not script.calls["synthesize"] and len(script.calls["outline_report"]) == 1
    steps = result.plan.steps if result.plan else []
    written = {tuple(s.title for s in inp.steps) for inp in script.calls["write_section"]}
    assert written == {tuple(s.title for s in steps[1:]), (steps[0].title,)}
    for inp in script.calls["write_section"]:  # each section sees only its own steps' sources
        own = {n for s in inp.steps for n in s.source_ids}
        assert {s.id for s in inp.sources} == own
    report = result.report_markdown
    assert report.startswith("# Borrowing, explained\n")
    assert (
        report.index("## Summary")
        < report.index("## How it fits together")
        < report.index(f"## {steps[0].title}")
    )
    assert "Not a step" not in report
    cited = {n for s in steps for n in s.source_ids}
    assert all(f"[{n}]" in report for n in cited) and "## Sources" in report
    assert all(inp.target_words < 1200 for inp in script.calls["write_section"])


# --- a long research continued as new ----------------------------------------------------------------


async def test_a_research_continued_as_new_at_step_boundaries_carries_its_whole_state(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """`steps_per_run=1` forces what Temporal's `is_continue_as_new_suggested()` asks for in a
    long research: after every step the research hands its state to a fresh run of itself."""
    from temporalio.api.enums.v1 import EventType

    script = scripted()
    request = ResearchRequest(query=QUESTION, depth=Depth.MEDIUM, steps_per_run=1, max_tokens=10**7)
    task_queue = f"tq-{uuid.uuid4()}"
    async with Worker(
        time_skipping_env.client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow],
        activities=script.activities(),
    ):
        handle = await time_skipping_env.client.start_workflow(
            DeepResearchWorkflow.run, request, id=f"wf-{uuid.uuid4()}", task_queue=task_queue
        )
        result = await handle.result()  # follows the runs to the last
        seen = await handle.query(DeepResearchWorkflow.events, 0)
        first_run = time_skipping_env.client.get_workflow_handle(
            handle.id, run_id=handle.first_execution_run_id
        )
        first = await first_run.fetch_history()

    steps = result.plan.steps if result.plan else []
    assert len(steps) >= 3 and all(s.status is StepStatus.COMPLETED for s in steps)
    assert first.events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    # Nothing was lost on the way: every step's reflection, every call's cost, every event.
    assert len(result.reflections) == len(steps)
    assert (
        result.budget is not None
        and result.budget.spent_tokens == sum(PER_CALL) * result.stats.llm_calls
    )
    assert (
        result.stats.llm_calls_by_role["route"] == 1 and result.stats.llm_calls_by_role["plan"] == 1
    )
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))
    assert [e.data["stage"] for e in seen if e.kind is EventKind.STAGE] == [
        s.value for s in result.stage_history
    ]
    assert result.outcome is Stage.COMPLETED and result.report_markdown.startswith("# ")
