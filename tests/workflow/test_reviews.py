"""A person reviews the plan before any step runs (time-skipping server: days pass in milliseconds)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment

from tests.support.doubles import Script
from tests.workflow.test_workflow import run_research, status
from workflows.models import (
    Depth,
    ResearchRequest,
    ReviewDecision,
    ReviewTarget,
    Stage,
    StepStatus,
)
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

    result, _ = await run_research(
        time_skipping_env.client, Script(), reviewed(review_timeout_s=7 * DAY), during=approve_later
    )
    assert result.outcome is Stage.COMPLETED
    assert [(r.decision, r.by) for r in result.reviews] == [(ReviewDecision.APPROVE, "person")]
    assert Stage.AWAITING_PLAN_REVIEW in result.stage_history
    assert not any("time budget" in n for n in result.notes)  # three days of waiting cost no budget
    assert result.plan is not None and all(
        s.status is StepStatus.COMPLETED for s in result.plan.steps
    )


async def test_revise_replans_with_the_persons_feedback_then_the_approved_plan_runs(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script()
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        reviewed(),
        during=answers(
            {"decision": "revise", "feedback": "Cover lifetime elision too"},
            {"decision": "approve"},
        ),
    )
    assert [p.feedback for p in script.calls["plan"]] == [[], ["Cover lifetime elision too"]]
    assert [r.decision for r in result.reviews] == [ReviewDecision.REVISE, ReviewDecision.APPROVE]
    assert result.reviews[0].feedback == "Cover lifetime elision too"


async def test_a_persons_own_steps_replace_the_planned_ones(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    steps = [
        {"title": "Lifetime elision rules", "description": "the three rules"},
        {"title": "'static"},
    ]
    script = Script()
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        reviewed(),
        during=answers({"decision": "approve", "steps": steps}),
    )
    assert result.plan is not None
    assert [s.title for s in result.plan.steps] == ["Lifetime elision rules", "'static"]
    assert {s.origin for s in result.plan.steps} == {"reviewer"}
    assert [c.step.title for c in script.calls["observe"]] == ["Lifetime elision rules", "'static"]


@pytest.mark.parametrize(
    "bad",
    [
        {"decision": "approve please"},
        {"decision": "APPROVE"},
        {"decision": "no, approve it"},
        "approve",
        {},
        {"decision": "approve", "verdict": "extra field"},
        {"decision": "revise"},  # revise needs feedback
        {"decision": "approve", "steps": [{"title": "  "}]},
        {
            "decision": "approve",
            "steps": [{"title": f"step {i}"} for i in range(4)],
        },  # light depth: at most 3
    ],
)
async def test_an_invalid_review_is_refused_and_recorded_never_taken_as_approval(
    time_skipping_env: WorkflowEnvironment,
    bad: Any,
) -> None:
    async def bad_then_nothing(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        await handle.signal(DeepResearchWorkflow.plan_review, bad)
        with pytest.raises(WorkflowUpdateFailedError):
            await handle.execute_update(DeepResearchWorkflow.review, bad)
        current = await status(handle)
        assert current.pending_review is not None and current.ignored_signals_count == 1

    result, final = await run_research(
        time_skipping_env.client, Script(), reviewed(review_timeout_s=600), during=bad_then_nothing
    )
    assert [(r.decision, r.by) for r in result.reviews] == [(ReviewDecision.APPROVE, "timeout")]
    assert any("ran as proposed" in n for n in result.notes)
    assert final.ignored_signals[0].startswith("plan_review ignored:")


async def test_after_three_revisions_the_last_plan_runs_and_the_notes_say_so(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    revise = {"decision": "revise", "feedback": "again"}
    script = Script()
    result, _ = await run_research(
        time_skipping_env.client, script, reviewed(), during=answers(revise, revise, revise)
    )
    assert len(script.calls["plan"]) == 4
    assert [r.decision for r in result.reviews] == [ReviewDecision.REVISE] * 3
    assert any("revised 3 times" in n for n in result.notes)
    assert result.outcome is Stage.COMPLETED


async def test_cancel_at_the_plan_ends_the_research_as_cancelled_with_a_report(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script()
    result, _ = await run_research(
        time_skipping_env.client, script, reviewed(), during=answers({"decision": "cancel"})
    )
    assert result.outcome is Stage.CANCELLED
    assert not script.calls["observe"] and result.report_markdown
    assert result.reviews[0].decision is ReviewDecision.CANCEL


async def test_an_answer_meant_for_an_earlier_plan_is_refused_not_taken_for_the_new_one(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """A person and an agent review together: both revise plan 1; the second answer arrives when
    plan 2 waits, and approving or revising a plan its sender never saw is refused."""

    async def two_reviewers(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        await handle.execute_update(
            DeepResearchWorkflow.review,
            {"decision": "revise", "feedback": "Cover elision", "round": 1},
        )
        await wait_for_review(handle, 2)
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(
                DeepResearchWorkflow.review,
                {"decision": "revise", "feedback": "Cover 'static", "round": 1},
            )
        assert "this answers plan 1, but plan 2 is pending now" in str(refused.value.cause)
        await handle.execute_update(
            DeepResearchWorkflow.review, {"decision": "approve", "round": 2}
        )

    script = Script()
    result, _ = await run_research(
        time_skipping_env.client, script, reviewed(), during=two_reviewers
    )
    assert [r.decision for r in result.reviews] == [ReviewDecision.REVISE, ReviewDecision.APPROVE]
    assert [p.feedback for p in script.calls["plan"]] == [[], ["Cover elision"]]


async def test_the_update_answers_a_pending_review_and_refuses_when_none_is(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    async def by_update(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        assert (
            await handle.execute_update(DeepResearchWorkflow.review, {"decision": "approve"})
            == "approve accepted"
        )
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(DeepResearchWorkflow.review, {"decision": "approve"})
        assert "no review is pending" in str(refused.value.cause)

    result, _ = await run_research(time_skipping_env.client, Script(), reviewed(), during=by_update)
    assert [r.by for r in result.reviews] == ["person"]


async def test_without_review_plan_nothing_waits(time_skipping_env: WorkflowEnvironment) -> None:
    result, _ = await run_research(
        time_skipping_env.client, Script(), ResearchRequest(query=QUESTION)
    )
    assert result.reviews == [] and Stage.AWAITING_PLAN_REVIEW not in result.stage_history


# --- the refining loop and the report review ------------------------------------------------------


def critic(*verdicts: dict[str, Any]) -> Any:
    """A critic double that answers with each verdict in turn (the last one repeats)."""
    from workflows.activity_models import CritiqueOutput

    answers_ = list(verdicts)

    def critique(inp: Any) -> CritiqueOutput:
        verdict = answers_.pop(0) if len(answers_) > 1 else answers_[0]
        return CritiqueOutput(
            quality=0.5,
            quality_reason="q",
            hallucination_risk=0.2,
            hallucination_reason="r",
            **verdict,
        )

    return critique


UNCOVERED = {
    "is_acceptable": False,
    "issues": [{"severity": "high", "text": "uncovered question terms: elision"}],
}
VAGUE = {
    "is_acceptable": False,
    "issues": [{"severity": "medium", "text": "the summary is vague"}],
    "rewrite_suggestion": "Be concrete.",
}
FINE: dict[str, Any] = {"is_acceptable": True}


async def test_a_report_the_critic_rejects_for_coverage_is_researched_further(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(critique=critic(UNCOVERED, FINE))
    result, _ = await run_research(
        time_skipping_env.client, script, ResearchRequest(query=QUESTION, depth=Depth.MEDIUM)
    )
    assert [(r.round, r.action) for r in result.refinements] == [(1, "research")]
    assert script.calls["plan"][-1].feedback == ["uncovered question terms: elision"]
    assert Stage.REFINING in result.stage_history and result.outcome is Stage.COMPLETED
    # A medium report is written in sections: an outline begins each of the two versions.
    assert len(script.calls["outline_report"]) == 2 and "Still open" not in result.report_markdown


async def test_refinement_is_bounded_and_what_is_still_wrong_is_listed_in_the_report(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(critique=critic(VAGUE))
    result, _ = await run_research(
        time_skipping_env.client, script, ResearchRequest(query=QUESTION)
    )
    assert [(r.round, r.action) for r in result.refinements] == [(1, "rewrite"), (2, "rewrite")]
    assert len(script.calls["synthesize"]) == 3
    assert script.calls["synthesize"][1].feedback == ["the summary is vague", "Be concrete."]
    assert "Still open after 2 refinements" in result.report_markdown
    assert "(medium) the summary is vague" in result.report_markdown


@pytest.mark.parametrize(
    ("payload", "outcome", "syntheses"),
    [
        ({"decision": "approve"}, Stage.COMPLETED, 1),
        ({"decision": "revise", "feedback": "Add an example"}, Stage.COMPLETED, 2),
        ({"decision": "cancel"}, Stage.CANCELLED, 1),
    ],
)
async def test_a_report_review_approves_revises_or_cancels(
    time_skipping_env: WorkflowEnvironment,
    payload: dict[str, Any],
    outcome: Stage,
    syntheses: int,
) -> None:
    async def review_report(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        current = await status(handle)
        assert current.stage is Stage.AWAITING_REPORT_REVIEW and current.critique is not None
        # The person sees what they approve: the draft, with its citations and sources.
        assert current.draft_report_markdown and current.draft_report_markdown.startswith("# ")
        await handle.signal(DeepResearchWorkflow.report_review, payload)

    script = Script(critique=critic(FINE))
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, review_report="always"),
        during=review_report,
    )
    assert result.outcome is outcome
    assert len(script.calls["synthesize"]) == syntheses
    reviews = [(r.target.value, r.decision.value, r.by) for r in result.reviews]
    assert reviews[0] == ("report", payload["decision"], "person")
    # A revision is shown again for a second round; nobody answers it here, so it stands.
    again = [("report", "approve", "timeout")] if payload["decision"] == "revise" else []
    assert reviews[1:] == again
    assert result.owner == "local"
    if payload["decision"] == "revise":
        assert script.calls["synthesize"][1].feedback == ["Add an example"]
    assert result.report_markdown


async def test_the_critic_asking_for_a_person_makes_an_attended_report_wait_until_the_timeout(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(critique=critic({"is_acceptable": True, "requires_human_input": True}))
    result, _ = await run_research(
        time_skipping_env.client, script, ResearchRequest(query=QUESTION, attended=True)
    )
    assert [(r.target.value, r.by) for r in result.reviews] == [("report", "timeout")]
    assert (
        Stage.AWAITING_REPORT_REVIEW in result.stage_history and result.outcome is Stage.COMPLETED
    )
    assert any("stands as written" in n for n in result.notes)

    never = Script(critique=critic({"is_acceptable": True, "requires_human_input": True}))
    unattended, _ = await run_research(
        time_skipping_env.client, never, ResearchRequest(query=QUESTION, review_report="never")
    )
    assert unattended.reviews == []


async def test_the_steps_a_person_approved_all_run_even_if_the_reflector_would_stop(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    from workflows.activity_models import ReflectOutput
    from workflows.models import ReflectionDecision

    steps = [{"title": "Lifetime elision"}, {"title": "'static bounds"}, {"title": "Variance"}]
    script = Script(
        reflect=lambda inp: ReflectOutput(decision=ReflectionDecision.COMPLETE, reasoning="covered")
    )
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        reviewed(),
        during=answers({"decision": "approve", "steps": steps}),
    )
    assert result.plan is not None
    assert [s.status for s in result.plan.steps] == [StepStatus.COMPLETED] * 3


async def test_what_a_refinement_researches_goes_through_the_wave_loop_and_may_continue_as_new(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """The steps a refinement adds are researched like the plan's: each wave reflected on, and a
    long research may hand itself to a fresh run there (`steps_per_run=1` forces it)."""
    import uuid

    from temporalio.api.enums.v1 import EventType
    from temporalio.worker import Worker

    script = Script(critique=critic(UNCOVERED, FINE))
    request = ResearchRequest(query=QUESTION, depth=Depth.MEDIUM, steps_per_run=1)
    client, task_queue = time_skipping_env.client, f"tq-{uuid.uuid4()}"
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow],
        activities=script.activities(),
    ):
        handle = await client.start_workflow(
            DeepResearchWorkflow.run, request, id=f"wf-{uuid.uuid4()}", task_queue=task_queue
        )
        result = await handle.result()
        last = await handle.fetch_history()
        started = last.events[0].workflow_execution_started_event_attributes
        before = await client.get_workflow_handle(
            handle.id, run_id=started.continued_execution_run_id
        ).fetch_history()

    assert [(r.round, r.action) for r in result.refinements] == [(1, "research")]
    after = result.stage_history[result.stage_history.index(Stage.REFINING) :]
    assert after == [
        Stage.REFINING,
        Stage.PLANNING,
        Stage.RESEARCHING,
        Stage.REFLECTING,
        Stage.SYNTHESIZING,
        Stage.VERIFYING,
        Stage.COMPLETED,
    ]
    steps = result.plan.steps if result.plan else []
    assert len(steps) == 4 and all(s.status is StepStatus.COMPLETED for s in steps)
    assert len(result.reflections) == len(steps)  # the refinement's step was reflected on too

    # The run before the last criticised the first report and continued as new in the refinement.
    def activities(history: Any) -> list[str]:
        return [
            e.activity_task_scheduled_event_attributes.activity_type.name
            for e in history.events
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        ]

    assert "critique" in activities(before) and "plan" in activities(before)
    assert before.events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    assert (
        "observe" in activities(last)
        and "reflect" in activities(last)
        and "plan" not in activities(last)
    )


async def test_nobody_attending_means_the_critics_call_for_a_person_is_noted_not_waited_for(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """A detached or scripted start (`attended` false) is not kept an hour waiting for nobody;
    `always` still waits, because the person asked for it."""
    script = Script(critique=critic({"is_acceptable": True, "requires_human_input": True}))
    result, _ = await run_research(
        time_skipping_env.client, script, ResearchRequest(query=QUESTION)
    )
    assert result.reviews == [] and Stage.AWAITING_REPORT_REVIEW not in result.stage_history
    assert result.outcome is Stage.COMPLETED
    assert any("nobody attending it" in n for n in result.notes)

    asked = Script(critique=critic(FINE))
    always, _ = await run_research(
        time_skipping_env.client,
        asked,
        ResearchRequest(query=QUESTION, review_report="always", review_timeout_s=60),
    )
    assert [(r.target.value, r.by) for r in always.reviews] == [("report", "timeout")]


def adjust_once() -> Any:
    from workflows.activity_models import ReflectOutput
    from workflows.models import ReflectionDecision

    decisions = [ReflectionDecision.ADJUST]

    def reflect(inp: Any) -> ReflectOutput:
        decision = decisions.pop(0) if decisions else ReflectionDecision.CONTINUE
        return ReflectOutput(
            decision=decision, reasoning="adjust the rest", suggested_changes=["look at variance"]
        )

    return reflect


@pytest.mark.parametrize(("replans", "reviews"), [(False, 1), (True, 2)])
async def test_a_reflector_replan_asks_for_review_again_only_when_the_person_asked_for_that(
    time_skipping_env: WorkflowEnvironment,
    replans: bool,
    reviews: int,
) -> None:
    async def approve_each(handle: WorkflowHandle[Any, Any]) -> None:
        for plan in range(1, reviews + 1):
            for _ in range(400):
                current = await status(handle)
                if current.pending_review is not None and current.plan_iterations == plan:
                    break
                await asyncio.sleep(0.05)
            await handle.signal(DeepResearchWorkflow.plan_review, {"decision": "approve"})

    script = Script(reflect=adjust_once())
    result, _ = await run_research(
        time_skipping_env.client, script, reviewed(review_replans=replans), during=approve_each
    )
    assert result.plan_iterations == 2 and len(script.calls["plan"]) == 2
    assert [(r.decision, r.by) for r in result.reviews] == [
        (ReviewDecision.APPROVE, "person")
    ] * reviews
    assert result.stage_history.count(Stage.AWAITING_PLAN_REVIEW) == reviews
    assert result.outcome is Stage.COMPLETED


@pytest.mark.parametrize("rewrite_changes", [False, True])
async def test_a_report_revised_after_review_says_so_and_whether_the_rewrite_could_act_on_it(
    time_skipping_env: WorkflowEnvironment,
    rewrite_changes: bool,
) -> None:
    from tests.support.doubles import default_synthesize

    def synthesize(inp: Any) -> Any:
        out = default_synthesize(inp)
        if rewrite_changes and inp.feedback:
            out = out.model_copy(update={"markdown": out.markdown + "\n\nAn example: `'a`.\n"})
        return out

    async def revise(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        await handle.signal(
            DeepResearchWorkflow.report_review, {"decision": "revise", "feedback": "Add an example"}
        )

    script = Script(critique=critic(FINE), synthesize=synthesize)
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, review_report="always"),
        during=revise,
    )
    assert "> **Revised after review:** “Add an example”." in result.report_markdown
    could_not = "could not act on the feedback" in result.report_markdown
    assert could_not is not rewrite_changes


def rewrites_with_feedback(inp: Any) -> Any:
    """A writer that follows the reviewer: each feedback line it is given ends the report."""
    from tests.support.doubles import default_synthesize

    out = default_synthesize(inp)
    added = "".join(f"\n\nDone as asked: {line}.\n" for line in inp.feedback or [])
    return out.model_copy(update={"markdown": out.markdown + added})


async def test_a_revised_report_is_shown_again_for_another_round_and_approving_it_completes(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    seen: dict[str, Any] = {}

    async def revise_then_approve(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        first = await status(handle)
        assert (first.review_rounds, first.review_rounds_max) == (1, 3)
        await handle.execute_update(
            DeepResearchWorkflow.review,
            {"decision": "revise", "feedback": "Add an example", "round": 1},
        )
        await wait_for_review(handle, 2)
        seen["second"] = await status(handle)
        # An answer meant for the first round (another reviewer's, late) is refused.
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(
                DeepResearchWorkflow.review, {"decision": "approve", "round": 1}
            )
        seen["refused"] = str(refused.value.cause)
        seen["events"] = await handle.query(DeepResearchWorkflow.events, 0)
        await handle.execute_update(
            DeepResearchWorkflow.review, {"decision": "approve", "round": 2}
        )

    script = Script(critique=critic(FINE), synthesize=rewrites_with_feedback)
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, review_report="always"),
        during=revise_then_approve,
    )
    second = seen["second"]
    assert second.pending_review is ReviewTarget.REPORT and second.review_rounds == 2
    assert second.stage is Stage.AWAITING_REPORT_REVIEW
    # The person sees the revised draft, re-verified and criticised, before approving it.
    assert "Done as asked: Add an example." in second.draft_report_markdown
    assert "> **Revised after review:** “Add an example”." in second.draft_report_markdown
    assert second.critique is not None
    assert "this answers report review round 1, but report review round 2" in seen["refused"]
    requested = [e.data["round"] for e in seen["events"] if e.kind == "review_requested"]
    assert requested == [1, 2]
    assert result.outcome is Stage.COMPLETED
    assert [(r.decision.value, r.round, r.by) for r in result.reviews] == [
        ("revise", 1, "person"),
        ("approve", 2, "person"),
    ]
    assert len(script.calls["synthesize"]) == 2
    assert result.report_markdown == second.draft_report_markdown
    assert not any("final" in note for note in result.notes)


async def test_the_last_report_rounds_revision_is_final_and_the_notes_say_so(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    async def revise_every_round(handle: WorkflowHandle[Any, Any]) -> None:
        for round_, ask in enumerate(["Add an example", "Shorter", "Cite more"], start=1):
            await wait_for_review(handle, round_)
            await handle.signal(
                DeepResearchWorkflow.report_review, {"decision": "revise", "feedback": ask}
            )

    script = Script(critique=critic(FINE), synthesize=rewrites_with_feedback)
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, review_report="always"),
        during=revise_every_round,
    )
    assert result.outcome is Stage.COMPLETED
    assert [(r.decision.value, r.round) for r in result.reviews] == [
        ("revise", 1),
        ("revise", 2),
        ("revise", 3),
    ]
    # Each rewrite follows every round's feedback so far; the third is not shown again.
    assert [c.feedback for c in script.calls["synthesize"][1:]] == [
        ["Add an example"],
        ["Add an example", "Shorter"],
        ["Add an example", "Shorter", "Cite more"],
    ]
    assert "Done as asked: Cite more." in result.report_markdown
    assert "“Add an example”; “Shorter”; “Cite more”." in result.report_markdown
    final = "this revision is final: 3 review rounds were used."
    assert any(final in note for note in result.notes) and final in result.report_markdown


async def test_a_second_report_round_nobody_answers_leaves_the_revision_standing(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    async def revise_once(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_review(handle)
        await handle.signal(
            DeepResearchWorkflow.report_review, {"decision": "revise", "feedback": "Add an example"}
        )

    script = Script(critique=critic(FINE), synthesize=rewrites_with_feedback)
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=QUESTION, review_report="always", review_timeout_s=DAY),
        during=revise_once,
    )
    assert result.outcome is Stage.COMPLETED
    assert [(r.decision.value, r.round, r.by) for r in result.reviews] == [
        ("revise", 1, "person"),
        ("approve", 2, "timeout"),
    ]
    assert "Done as asked: Add an example." in result.report_markdown
    assert any("it stands as written" in note for note in result.notes)


async def test_a_simple_question_still_gets_the_plan_review_the_person_asked_for(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """Before, a question the coordinator found simple was answered directly: no plan to review,
    and the page showed "Plan: No plan yet." for a research whose person asked to see one."""
    from workflows import activity_models as m
    from workflows.models import Complexity

    def simple(inp: m.CoordinateInput) -> m.CoordinateOutput:
        return m.CoordinateOutput(
            complexity=Complexity.SIMPLE,
            is_simple=True,
            recommended_depth=Depth.LIGHT,
            reasoning="one fact",
        )

    request = ResearchRequest(query=QUESTION, depth=Depth.AUTO, review_plan=True)
    result, _ = await run_research(
        time_skipping_env.client,
        Script(coordinate=simple),
        request,
        during=answers({"decision": "approve"}),
    )

    assert result.outcome is Stage.COMPLETED
    assert Stage.AWAITING_PLAN_REVIEW in result.stage_history
    assert result.plan is not None and result.plan.steps
    assert [(r.target, r.decision) for r in result.reviews] == [
        (ReviewTarget.PLAN, ReviewDecision.APPROVE)
    ]
