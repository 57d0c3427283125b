"""A person reviews the plan before any step runs (time-skipping server: days pass in milliseconds)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment

from tests.doubles import Script
from tests.test_workflow import run_research, status
from workflows.models import Depth, ResearchRequest, ReviewDecision, Stage, StepStatus
from workflows.research import DeepResearchWorkflow

QUESTION = "How do Rust lifetimes work?"
DAY = 24 * 3600.0


def reviewed(**fields: Any) -> ResearchRequest:
    return ResearchRequest(query=QUESTION, depth=Depth.LIGHT, review_plan=True, **fields)


async def wait_for_review(handle: WorkflowHandle[Any, Any], round_: int = 1) -> None:
    for _ in range(400):
        current = await status(handle)
        if current.pending_review is not None and current.review_rounds >= round_:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no review pending; stage {current.stage}")


def answers(*payloads: Any) -> Any:
    """A `during` that answers each review round with the next payload, by signal."""
    async def during(handle: WorkflowHandle[Any, Any]) -> None:
        for round_, payload in enumerate(payloads, start=1):
            await wait_for_review(handle, round_)
            await handle.signal(DeepResearchWorkflow.plan_review, payload)
    return during


async def test_an_approval_three_days_later_runs_the_plan_and_the_budget_did_not_run(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    async def approve_later(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        current = await status(handle)
        assert current.stage is Stage.AWAITING_PLAN_REVIEW and current.plan is not None
        await time_skipping_env.sleep(3 * DAY)
        await handle.signal(DeepResearchWorkflow.plan_review, {"decision": "approve"})

    result, _ = await run_research(time_skipping_env.client, Script(), reviewed(review_timeout_s=7 * DAY),
                                   during=approve_later)
    assert result.outcome is Stage.COMPLETED
    assert [(r.decision, r.by) for r in result.reviews] == [(ReviewDecision.APPROVE, "person")]
    assert Stage.AWAITING_PLAN_REVIEW in result.stage_history
    assert not any("time budget" in n for n in result.notes)  # three days of waiting cost no budget
    assert result.plan is not None and all(s.status is StepStatus.COMPLETED for s in result.plan.steps)


async def test_revise_replans_with_the_persons_feedback_then_the_approved_plan_runs(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script()
    result, _ = await run_research(time_skipping_env.client, script, reviewed(), during=answers(
        {"decision": "revise", "feedback": "Cover lifetime elision too"}, {"decision": "approve"}))
    assert [p.feedback for p in script.calls["plan"]] == [[], ["Cover lifetime elision too"]]
    assert [r.decision for r in result.reviews] == [ReviewDecision.REVISE, ReviewDecision.APPROVE]
    assert result.reviews[0].feedback == "Cover lifetime elision too"


async def test_a_persons_own_steps_replace_the_planned_ones(time_skipping_env: WorkflowEnvironment) -> None:
    steps = [{"title": "Lifetime elision rules", "description": "the three rules"}, {"title": "'static"}]
    script = Script()
    result, _ = await run_research(time_skipping_env.client, script, reviewed(),
                                   during=answers({"decision": "approve", "steps": steps}))
    assert result.plan is not None
    assert [s.title for s in result.plan.steps] == ["Lifetime elision rules", "'static"]
    assert {s.origin for s in result.plan.steps} == {"reviewer"}
    assert [c.step.title for c in script.calls["observe"]] == ["Lifetime elision rules", "'static"]


@pytest.mark.parametrize("bad", [
    {"decision": "approve please"},
    {"decision": "APPROVE"},
    {"decision": "no, approve it"},
    "approve",
    {},
    {"decision": "approve", "verdict": "extra field"},
    {"decision": "revise"},  # revise needs feedback
    {"decision": "approve", "steps": [{"title": "  "}]},
    {"decision": "approve", "steps": [{"title": f"step {i}"} for i in range(4)]},  # light depth: at most 3
])
async def test_an_invalid_review_is_refused_and_recorded_never_taken_as_approval(
    time_skipping_env: WorkflowEnvironment, bad: Any,
) -> None:
    async def bad_then_nothing(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        await handle.signal(DeepResearchWorkflow.plan_review, bad)
        with pytest.raises(WorkflowUpdateFailedError):
            await handle.execute_update(DeepResearchWorkflow.review, bad)
        current = await status(handle)
        assert current.pending_review is not None and current.ignored_signals_count == 1

    result, final = await run_research(time_skipping_env.client, Script(), reviewed(review_timeout_s=600),
                                       during=bad_then_nothing)
    assert [(r.decision, r.by) for r in result.reviews] == [(ReviewDecision.APPROVE, "timeout")]
    assert any("ran as proposed" in n for n in result.notes)
    assert final.ignored_signals[0].startswith("plan_review ignored:")


async def test_after_three_revisions_the_last_plan_runs_and_the_notes_say_so(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    revise = {"decision": "revise", "feedback": "again"}
    script = Script()
    result, _ = await run_research(time_skipping_env.client, script, reviewed(),
                                   during=answers(revise, revise, revise))
    assert len(script.calls["plan"]) == 4
    assert [r.decision for r in result.reviews] == [ReviewDecision.REVISE] * 3
    assert any("revised 3 times" in n for n in result.notes)
    assert result.outcome is Stage.COMPLETED


async def test_cancel_at_the_plan_ends_the_research_as_cancelled_with_a_report(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script()
    result, _ = await run_research(time_skipping_env.client, script, reviewed(),
                                   during=answers({"decision": "cancel"}))
    assert result.outcome is Stage.CANCELLED
    assert not script.calls["observe"] and result.report_markdown
    assert result.reviews[0].decision is ReviewDecision.CANCEL


async def test_the_update_answers_a_pending_review_and_refuses_when_none_is(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    async def by_update(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        assert await handle.execute_update(DeepResearchWorkflow.review, {"decision": "approve"}) == "approve accepted"
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(DeepResearchWorkflow.review, {"decision": "approve"})
        assert "no review is pending" in str(refused.value.cause)

    result, _ = await run_research(time_skipping_env.client, Script(), reviewed(), during=by_update)
    assert [r.by for r in result.reviews] == ["person"]


async def test_without_review_plan_nothing_waits(time_skipping_env: WorkflowEnvironment) -> None:
    result, _ = await run_research(time_skipping_env.client, Script(), ResearchRequest(query=QUESTION))
    assert result.reviews == [] and Stage.AWAITING_PLAN_REVIEW not in result.stage_history
