"""A person's plan is the plan: the steps a person approved or wrote in a plan review
all run, whatever the reflector says; an ADJUST may only add steps after them (or, with
`review_replans`, propose the change as a review), and a step that could not run is in the notes."""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.testing import WorkflowEnvironment

from tests.support.doubles import Script
from tests.workflow.test_reviews import answers
from tests.workflow.test_workflow import run_research, status
from workflows.activity_models import ReflectInput, ReflectOutput
from workflows.models import (
    Depth,
    ResearchRequest,
    ReviewDecision,
    StepOrigin,
    StepStatus,
)
from workflows.research import DeepResearchWorkflow

QUESTION = "How tall is Olympus Mons and how long is a Martian year?"
OWN = [
    {"title": "Height of Olympus Mons", "description": "from the base and above the datum"},
    {"title": "Length of a Martian year", "description": "in Earth days"},
    {"title": "Mars's axial tilt"},
    {"title": "Seasons on Mars"},
    {"title": "Dust storms and the seasons"},
]


def adjust_after(step: int) -> Any:
    """The reflector says ADJUST ("sizes are not covered") once `step` steps are done."""

    def reflect(inp: ReflectInput) -> ReflectOutput:
        if inp.completed_steps == step:
            return ReflectOutput(
                decision="ADJUST",
                reasoning="sizes are not covered",
                suggested_changes=["Compare the sizes of Mars's volcanoes"],
            )
        return ReflectOutput(decision="CONTINUE", reasoning="keep going")

    return reflect


def each_plan(*payloads: Any) -> Any:
    """Answer the review of plan 1, plan 2, ... with the next payload."""

    async def during(handle: Any) -> None:
        for plan, payload in enumerate(payloads, start=1):
            for _ in range(400):
                current = await status(handle)
                if current.pending_review is not None and current.plan_iterations == plan:
                    break
                await asyncio.sleep(0.05)
            await handle.signal(DeepResearchWorkflow.plan_review, payload)

    return during


def request(**fields: Any) -> ResearchRequest:
    return ResearchRequest(query=QUESTION, depth=Depth.MEDIUM, review_plan=True, **fields)


async def test_an_adjust_after_step_3_of_5_own_steps_still_runs_steps_4_and_5(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(reflect=adjust_after(3))
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        request(),
        during=answers({"decision": "approve", "steps": OWN}),
    )
    assert result.plan is not None
    titles = [s.title for s in result.plan.steps]
    own = [s["title"] for s in OWN]
    assert titles[:5] == own  # the person's five, in their order, under their titles
    assert all(s.status is StepStatus.COMPLETED for s in result.plan.steps[:5])
    assert {s.origin for s in result.plan.steps[:5]} == {StepOrigin.REVIEWER}
    researched = [c.step.title for c in script.calls["observe"]]
    assert researched[:5] == own
    # the re-plan happened, and its new step comes after the person's steps, never instead
    assert result.plan_iterations == 2 and len(titles) == 6
    assert any("ADJUST" == r.decision for r in result.reflections)
    assert any("you approved" in n and "kept" in n for n in result.notes), result.notes


async def test_an_approved_planner_plan_keeps_its_steps_through_an_adjust(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(reflect=adjust_after(1))
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        request(),
        during=answers({"decision": "approve"}),
    )
    assert result.plan is not None
    titles = [s.title for s in result.plan.steps]
    assert titles[:3] == [f"Aspect {i} (plan 1)" for i in (1, 2, 3)]
    assert all(s.status is StepStatus.COMPLETED for s in result.plan.steps)
    # the planner was told the approved steps are kept, so it adds only after them
    assert [s.title for s in script.calls["plan"][1].completed_steps] == titles[:3]


async def test_with_review_replans_the_adjust_is_proposed_to_the_person_with_their_steps_kept(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(reflect=adjust_after(3))
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        request(review_replans=True),
        during=each_plan({"decision": "approve", "steps": OWN}, {"decision": "approve"}),
    )
    assert [r.decision for r in result.reviews] == [ReviewDecision.APPROVE] * 2
    assert result.plan is not None
    assert [s.title for s in result.plan.steps][:5] == [s["title"] for s in OWN]
    assert all(s.status is StepStatus.COMPLETED for s in result.plan.steps)


async def test_an_approved_step_that_could_not_run_is_named_in_the_notes(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """A token budget runs out after some of the person's steps: the ones that did not run are
    named in the notes, with why."""
    from tests.workflow.test_budgets import scripted

    approve = answers({"decision": "approve", "steps": OWN})
    full, _ = await run_research(time_skipping_env.client, scripted(), request(), during=approve)
    assert full.budget is not None and full.plan is not None
    assert all(s.status is StepStatus.COMPLETED for s in full.plan.steps)
    assert not any("did not run" in n for n in full.notes)

    limit = full.budget.spent_tokens * 2 // 3
    result, _ = await run_research(
        time_skipping_env.client, scripted(), request(max_tokens=limit), during=approve
    )
    assert result.plan is not None
    skipped = [s.title for s in result.plan.steps if s.status is StepStatus.SKIPPED]
    assert skipped and set(skipped) <= {s["title"] for s in OWN}
    for title in skipped:
        assert any(
            f"“{title}”" in n and "did not run" in n and "budget ran out" in n for n in result.notes
        ), result.notes
