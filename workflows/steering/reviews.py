"""A person steers the research: the plan is shown before any step runs (DeerFlow's interrupt,
Shannon's signal with a timeout), and nothing is lost if the answer comes an hour or a week later.

`review_plan` on: after the first plan the research waits in `awaiting_plan_review` (after each
automatic ADJUST re-plan too only with `review_replans`: one person approving or writing the steps
should not be asked again for every adjustment the reflector makes). `approve` runs the plan; `revise` with feedback re-plans with it (completed
steps kept); `steps` replaces the steps not yet done with the person's own; `cancel` ends the
research as a cancellation does (a report of what it had). At most MAX_REVIEW_ROUNDS rounds per
plan, then the last plan runs and a note says so. No answer within `review_timeout_s`: the plan
runs as proposed, recorded with `by: "timeout"`. An answer that does not validate, or one when no
review is pending, is refused (the update) or recorded in `ignored_signals` (the signal): never
taken as approval. The time budget does not run while a person is being waited for
(`Oversight.waiting_since` / `paused_s`, read by the budget in research.py).

The report review, all of it here (`report_review_wanted`, `record_report_review`,
`review_report`): `always`, or `auto` when the critic asks for a person and
someone is there to answer (`attended`: an attached terminal, the web app, an MCP host that said
so); a detached or scripted start is not kept an hour waiting for nobody. A revision after review
says so in the report's closing lines, and says plainly when the rewrite could not change it.
`approve` finishes, `revise` with feedback runs one more rewrite with it (and every earlier
round's feedback) and shows the rewritten, re-verified report again for another round, at most
MAX_REVIEW_ROUNDS rounds: the last round's revision is final and the notes say so. `cancel` ends
the research as cancelled with the report it had; no answer in time and the report stands.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from pydantic import ValidationError
from temporalio import workflow

from workflows.accounting.stages import enter
from workflows.accounting.state import ResearchState
from workflows.checks.reporting import synthesize
from workflows.events import EventKind, emit
from workflows.kit.sections import revision_note
from workflows.loop.planning import make_plan
from workflows.models import (
    Claim,
    DecidedBy,
    PlanStep,
    RefinementAction,
    ReportReview,
    Review,
    ReviewAnswer,
    ReviewDecision,
    ReviewTarget,
    Stage,
    StepOrigin,
    StepStatus,
)
from workflows.steering import refining
from workflows.text import duration

MAX_REVIEW_ROUNDS = 3
#: Checks a rewritten report (verification and the critic): research.py's `_verify`.
Verify = Callable[[str, list[Claim]], Awaitable[tuple[str, list[Claim]]]]


def plan_review_wanted(state: ResearchState, replan: bool) -> bool:
    """The person asked to review this plan: the first one always (with `review_plan`), an
    automatic re-plan only with `review_replans`."""
    request = state.request
    if not request.review_plan:
        return False
    return not replan or request.review_replans


def report_review_wanted(state: ResearchState) -> bool:
    """`always`; or `auto` when the critic asks for a person and someone is there to answer. When
    nobody is, the notes say the critic asked."""
    request, critique = state.request, state.writeup.critique
    mode = request.review_report
    asked = mode is ReportReview.AUTO and critique is not None and critique.requires_human_input
    if not (mode is ReportReview.ALWAYS or asked):
        return False
    if request.review_report is not ReportReview.AUTO or request.attended:
        return True
    state.writeup.notes.append(
        "The critic asked for a person to review the report, but this research was "
        "started with nobody attending it (detached or scripted); it stands as written."
    )
    return False


def record_report_review(
    state: ResearchState, answer: ReviewAnswer | None, round_: int = 1
) -> ReviewDecision:
    """Keep the reviewer's word on the report (None: nobody answered in time, so it stands)."""
    notes = state.writeup.notes
    _keep(state, ReviewTarget.REPORT, round_, answer)
    if answer is None:
        notes.append(
            f"Nobody reviewed the report within {duration(state.request.review_timeout_s)}; "
            "it stands as written."
        )
        return ReviewDecision.APPROVE
    if answer.decision is ReviewDecision.CANCEL:
        notes.append("The reviewer cancelled the research at the report; it stands as it was.")
    return answer.decision


async def review_report(
    state: ResearchState, report: str, claims: list[Claim], verify: Verify
) -> tuple[str, list[Claim]]:
    """A person's word on the report: approve, revise (a rewrite with the feedback, shown to
    them again for another round), cancel. The last round's revision is final."""
    rounds = state.oversight.review_rounds_max = MAX_REVIEW_ROUNDS
    feedback: list[str] = []
    plain = report  # the report without the revision's closing line: what a rewrite is compared to
    for round_ in range(1, rounds + 1):
        state.oversight.review_rounds = round_
        state.writeup.draft = report
        answer = await await_review(state, ReviewTarget.REPORT, Stage.AWAITING_REPORT_REVIEW)
        state.writeup.draft = None
        decision = record_report_review(state, answer, round_)
        if decision is ReviewDecision.CANCEL:
            enter(state, Stage.CANCELLED)
        if decision is not ReviewDecision.REVISE or answer is None:
            break
        feedback.append(answer.feedback)
        revised, claims = await _rewrite(state, claims, feedback, verify)
        report = revision_note(revised, plain, feedback)
        plain = revised
        if round_ == rounds:
            state.writeup.notes.append(final_revision(rounds))
            report = f"{report.rstrip()}\n\n*{final_revision(rounds)}*\n"
    return report, claims


def final_revision(rounds: int) -> str:
    """The note after the last round's revision: it was not shown for another review."""
    return (
        f"The report was revised after the last review round; this revision is final: "
        f"{rounds} review rounds were used."
    )


async def _rewrite(
    state: ResearchState, claims: list[Claim], feedback: list[str], verify: Verify
) -> tuple[str, list[Claim]]:
    """The report written again with every reviewer's feedback so far, verified and criticised."""
    refining.begin_pass(state, [feedback[-1]], can_research=False, action=RefinementAction.REWRITE)
    revised, claims = await synthesize(state, feedback=feedback)
    revised, claims = await verify(revised, claims)
    return refining.with_open_issues(state, revised), claims


async def review_plan(state: ResearchState) -> None:
    """Wait for a person's word on the plan just made; returns when the plan may run."""
    oversight, notes = state.oversight, state.writeup.notes
    oversight.review_rounds_max = MAX_REVIEW_ROUNDS
    for round_ in range(1, MAX_REVIEW_ROUNDS + 1):
        oversight.review_rounds = round_
        answer = await await_review(state, ReviewTarget.PLAN, Stage.AWAITING_PLAN_REVIEW)
        _keep(state, ReviewTarget.PLAN, round_, answer)
        if answer is None:
            notes.append(
                f"Nobody reviewed plan {state.inquiry.plan_iterations} within "
                f"{duration(state.request.review_timeout_s)}; it ran as proposed."
            )
            return
        if answer.decision is ReviewDecision.CANCEL:
            notes.append("The reviewer cancelled the research at the plan.")
            raise asyncio.CancelledError()
        if answer.steps is not None:
            _replace_pending_steps(state, answer)
            oversight.approved_plan = state.inquiry.plan_iterations
            return
        if answer.decision is ReviewDecision.APPROVE:
            oversight.approved_plan = state.inquiry.plan_iterations
            return
        enter(state, Stage.PLANNING)
        await make_plan(state, feedback=[answer.feedback], by_reviewer=True)
    notes.append(
        f"The plan was revised {MAX_REVIEW_ROUNDS} times, the most one review allows; "
        "the last revision ran without another review."
    )


def _keep(
    state: ResearchState, target: ReviewTarget, round_: int, answer: ReviewAnswer | None
) -> None:
    """The review as the result lists it: nobody's answer in time is an approval by the clock."""
    if answer is None:
        review = Review(
            target=target, round=round_, decision=ReviewDecision.APPROVE, by=DecidedBy.TIMEOUT
        )
    else:
        review = Review(
            target=target, round=round_, decision=answer.decision, feedback=answer.feedback
        )
    state.oversight.reviews.append(review)


def _replace_pending_steps(state: ResearchState, answer: ReviewAnswer) -> None:
    plan = state.inquiry.plan
    assert plan is not None and answer.steps is not None
    kept = [s for s in plan.steps if s.status is not StepStatus.PENDING]
    own = [
        PlanStep(
            title=s.title.strip(),
            description=s.description.strip() or answer.feedback.strip(),
            origin=StepOrigin.REVIEWER,
        )
        for s in answer.steps
    ]
    plan.steps = [*kept, *own]


async def await_review(
    state: ResearchState, target: ReviewTarget, stage: Stage
) -> ReviewAnswer | None:
    """Wait durably for a valid answer; None when the review timed out."""
    oversight = state.oversight
    oversight.pending_review = target
    oversight.review_answer = None
    enter(state, stage)
    round_ = oversight.review_rounds
    emit(
        state.events,
        EventKind.REVIEW_REQUESTED,
        f"waiting for a review of the {target.value} (round {round_})",
        {"target": target.value, "round": round_},
    )
    started = workflow.now()
    oversight.waiting_since = started

    def stop_waiting() -> None:
        oversight.paused_s += (workflow.now() - started).total_seconds()
        oversight.waiting_since = None
        oversight.pending_review = None

    # Not a `finally`: when the worker evicts a waiting workflow from its cache, the coroutine is
    # closed outside the workflow's event loop, where workflow.now() cannot be read.
    try:
        await workflow.wait_condition(
            lambda: oversight.review_answer is not None,
            timeout=timedelta(seconds=state.request.review_timeout_s),
        )
    except TimeoutError:
        stop_waiting()
        emit(
            state.events,
            EventKind.REVIEW,
            f"no review of the {target.value} in time: taken as it is",
            {"target": target.value, "round": round_, "decision": "approve", "by": "timeout"},
        )
        return None
    except asyncio.CancelledError:
        stop_waiting()
        raise
    stop_waiting()
    answer = oversight.review_answer
    assert answer is not None
    emit(
        state.events,
        EventKind.REVIEW,
        f"{target.value} review: {answer.decision.value} {answer.feedback}".strip(),
        {
            "target": target.value,
            "round": round_,
            "decision": answer.decision.value,
            "feedback": answer.feedback,
            "steps": None if answer.steps is None else len(answer.steps),
            "by": "person",
        },
    )
    return answer


def review_problem(
    state: ResearchState, target: ReviewTarget | None, payload: Any
) -> tuple[ReviewAnswer | None, str | None]:
    """The answer, or why it cannot be taken. `target` None: whichever review is pending."""
    pending = state.oversight.pending_review
    if pending is None or state.oversight.review_answer is not None:
        return None, "no review is pending"
    if target is not None and target is not pending:
        return None, f"the pending review is of the {pending.value}, not the {target.value}"
    if isinstance(payload, str):  # a JSON string typed into a box that wanted an object
        return None, 'the review must be a JSON object such as {"decision": "approve"}'
    try:
        answer = ReviewAnswer.model_validate(payload)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "review"
        return None, f"{where}: {first['msg']} (decision must be exactly approve, revise or cancel)"
    shown = (
        state.inquiry.plan_iterations
        if pending is ReviewTarget.PLAN
        else state.oversight.review_rounds
    )
    if answer.round is not None and answer.round != shown:
        what = "plan" if pending is ReviewTarget.PLAN else "report review round"
        return (
            None,
            f"this answers {what} {answer.round}, but {what} {shown} is pending now: look at it again",
        )
    if answer.steps is not None:
        problem = (
            _steps_problem(state, answer)
            if pending is ReviewTarget.PLAN
            else "only a plan review takes steps"
        )
        if problem:
            return None, problem
    elif answer.decision is ReviewDecision.REVISE and not answer.feedback.strip():
        return None, "revise needs feedback (or steps, for a plan)"
    return answer, None


def _steps_problem(state: ResearchState, answer: ReviewAnswer) -> str | None:
    steps = answer.steps or []
    if answer.decision is ReviewDecision.CANCEL:
        return "cancel takes no steps"
    if any(not s.title.strip() for s in steps):
        return "every step needs a title"
    plan = state.inquiry.plan
    done = sum(1 for s in plan.steps if s.status is not StepStatus.PENDING) if plan else 0
    low, high = state.step_limits()
    if not steps or not low <= done + len(steps) <= high:
        return (
            f"the plan must have {low} to {high} steps at {state.inquiry.depth.value} depth "
            f"({done} done + {len(steps)} given)"
        )
    return None
