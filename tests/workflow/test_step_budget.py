"""What a tight budget buys a step (workflows/accounting/step_budget.py, budget.py) since the patch
REPORT_AS_AFFORDED: prompts estimated from what the model is shown, a step admitted
beside the report over what it adds, and the research's first step bought even when the report
beside it is not (its findings are then listed as found)."""

from __future__ import annotations

import pytest

from tests.workflow.test_budgets import QUESTION, _state_at
from workflows.accounting import budget, calls, step_budget
from workflows.accounting.state import ResearchState
from workflows.activity_models import ObserveInput, SynthesizeInput
from workflows.models import Evidence, Passage, Plan, PlanStep, Stage, StepStatus
from workflows.roles import OBSERVE, SYNTHESIZE

PAGE = ("The borrow checker rejects two mutable references to one value. " * 70)[:4000]
STEP = PlanStep(title="Borrowing", description="What the borrow checker rejects.")


def _read(pages: int) -> list[Passage]:
    """`pages` sources read in full, each the same page of 4,000 characters."""
    return [
        Passage(source_id=n, title=f"p{n}", url=f"u{n}", text=PAGE) for n in range(1, pages + 1)
    ]


OBSERVE_ALL = ObserveInput(query=QUESTION, step=STEP, passages=_read(3))


@pytest.fixture(autouse=True)
def no_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """`admit` outside a workflow: the budget event it emits needs the workflow's clock."""
    monkeypatch.setattr(budget, "announce", lambda state: None)


def researching(limit: int, afforded: bool = True, done: int = 0) -> ResearchState:
    state = _state_at(2000, limit)
    state.stage = Stage.RESEARCHING
    steps = [STEP.model_copy(update={"title": f"Done {n}"}) for n in range(done)]
    for step in steps:
        step.status, step.observation = StepStatus.COMPLETED, "Found [1]."
    state.inquiry.plan = Plan(title="p", steps=[*steps, STEP])
    state.ledger.spending.afforded_report = afforded
    return state


def test_a_prompt_is_estimated_from_what_the_model_is_shown_not_from_what_was_read() -> None:
    read = [Evidence(source_id=1, position=i, text=PAGE) for i in range(10)]
    report = SynthesizeInput(query=QUESTION, plan=None, sources=[], read=read)
    bare = report.model_copy(update={"read": []})
    shown, before = researching(10**6).ledger.spending, researching(10**6, afforded=False)
    assert budget.likely(shown, SYNTHESIZE, report) == budget.likely(shown, SYNTHESIZE, bare)
    old = before.ledger.spending  # a research from before the patch estimates as it did
    assert (
        budget.likely(old, SYNTHESIZE, report).tokens
        > budget.likely(old, SYNTHESIZE, bare).tokens + 10_000
    )


def test_a_step_leaves_room_for_the_report_over_what_it_adds() -> None:
    state = researching(10**6)
    before = budget.research_reserve(state)[0]
    beside = step_budget.reserve_beside(state, OBSERVE_ALL)[0]
    # its observation and at most three evidence paragraphs of each of its three sources
    assert before < beside <= before + (600 + 3 * 3 * 600) // 3 * 4 + 200


def test_the_first_step_is_bought_even_when_the_report_beside_it_is_not() -> None:
    least = step_budget._cut(OBSERVE_ALL, step_budget.MIN_CHARS)
    alone = budget.likely(researching(10**6).ledger.spending, OBSERVE, least).tokens
    limit = 2000 + alone + 50  # the least step fits, the report beside it does not

    first = researching(limit)
    cut = step_budget.affordable_passages(first, OBSERVE_ALL)
    assert sum(len(p.text) for p in cut.passages) <= step_budget.MIN_CHARS
    assert calls.admit(first, OBSERVE, cut) is not None

    for later in (researching(limit, done=1), researching(limit, afforded=False)):
        assert step_budget.affordable_passages(later, OBSERVE_ALL) is OBSERVE_ALL
        with pytest.raises(budget.BudgetSpent):
            calls.admit(later, OBSERVE, OBSERVE_ALL)
