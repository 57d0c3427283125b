"""The refining loop (seed 001) and the report review: a report goes out only once checked.

After synthesis the report is verified (claim by claim) and criticised (`checking.py`). When the
critic does not accept it, the research refines it, at most MAX_REFINEMENTS times:
- **research** what is missing, when the critic says something was not covered (uncovered terms,
  skipped steps) and the plan has room: back to planning with the issues as feedback (new steps
  only), the new steps researched, the report written again;
- otherwise **rewrite** the report with the issues and the critic's rewrite suggestion.
Each pass is recorded in `refinements`. What is still wrong after the last pass is listed in the
report's closing lines, never hidden.

Then a person may review the report (`review_report`: `always`, or `auto` when the critic asks
for a human): `approve` finishes, `revise` with feedback runs one more rewrite with it, `cancel`
ends the research as cancelled with the report it had; no answer in time and the report stands.
"""

from __future__ import annotations

import asyncio

from workflows.checking import check
from workflows.models import (
    Claim,
    ReportReview,
    Refinement,
    Review,
    ReviewDecision,
    ReviewTarget,
    Stage,
)
from workflows.planning import make_plan
from workflows.reporting import synthesize
from workflows.researching import research_step
from workflows.reviews import await_review
from workflows.stages import enter
from workflows.state import ResearchState
from workflows.conversation import duration
from workflows.events import EventKind, emit

MAX_REFINEMENTS = 2
#: Issue texts that say the research, not the writing, fell short (offline critic's rule names,
#: and words an LLM critic uses for the same).
_COVERAGE_WORDS = ("uncovered", "not covered", "missing", "skipped", "does not address", "unanswered", "not answered")


async def refine(state: ResearchState, report: str, claims: list[Claim]) -> tuple[str, list[Claim], bool]:
    """Verify, criticise and refine the report; then the report review. Returns the report, its
    claims, and whether the research was cancelled meanwhile (by Temporal or the reviewer)."""
    try:
        report, claims = await _checked(state, report, claims)
        for round_ in range(1, MAX_REFINEMENTS + 1):
            critique = state.critique
            if critique is None or critique.is_acceptable:
                break
            report, claims = await _refine_once(state, round_, [i.text for i in critique.issues],
                                                critique.rewrite_suggestion)
        report = _with_open_issues(state, report)
        report, claims = await _report_review(state, report, claims)
    except asyncio.CancelledError:
        state.notes.append("The research was cancelled while its report was being checked; it stands as it was.")
        return report, claims, True
    return report, claims, state.stage is Stage.CANCELLED


async def _checked(state: ResearchState, report: str, claims: list[Claim]) -> tuple[str, list[Claim]]:
    enter(state, Stage.VERIFYING)
    return await check(state, report, claims, cancelled=False)


async def _refine_once(state: ResearchState, round_: int, issues: list[str], suggestion: str,
                       action: str | None = None) -> tuple[str, list[Claim]]:
    enter(state, Stage.REFINING)
    action = action or choose_action(issues, state)
    state.refinements.append(Refinement(round=round_, issues=issues, action=action))
    emit(state, EventKind.REFINEMENT, f"refinement {round_}: {action} ({len(issues)} issues)",
         {"round": round_, "action": action, "issues": issues[:20]})
    if action == "research":
        enter(state, Stage.PLANNING)
        await make_plan(state, feedback=issues)
        while (index := state.next_step()) is not None:
            enter(state, Stage.RESEARCHING)
            await research_step(state, index)
        report, claims = await synthesize(state)
    else:
        report, claims = await synthesize(state, feedback=[*issues, *([suggestion] if suggestion else [])])
    return await _checked(state, report, claims)


def choose_action(issues: list[str], state: ResearchState) -> str:
    """Research when something was not covered and the plan may grow; else rewrite."""
    _, high = state.step_limits()
    room = state.plan is not None and len(state.plan.steps) < high
    coverage = any(word in issue.lower() for issue in issues for word in _COVERAGE_WORDS)
    return "research" if coverage and room else "rewrite"


def _with_open_issues(state: ResearchState, report: str) -> str:
    critique = state.critique
    if critique is None or critique.is_acceptable or not critique.issues:
        return report
    lines = "\n".join(f"- ({i.severity.value}) {i.text}" for i in critique.issues)
    passes = len(state.refinements)
    return f"{report.rstrip()}\n\n*Still open after {passes} refinement{'s' * (passes != 1)}:*\n\n{lines}\n"


async def _report_review(state: ResearchState, report: str, claims: list[Claim]) -> tuple[str, list[Claim]]:
    mode = state.request.review_report
    wanted = mode is ReportReview.ALWAYS or (
        mode is ReportReview.AUTO and state.critique is not None and state.critique.requires_human_input)
    if not wanted:
        return report, claims
    state.review_rounds = 1
    answer = await await_review(state, ReviewTarget.REPORT, Stage.AWAITING_REPORT_REVIEW)
    if answer is None:
        state.reviews.append(Review(target=ReviewTarget.REPORT, round=1, decision=ReviewDecision.APPROVE,
                                    by="timeout"))
        state.notes.append(f"Nobody reviewed the report within {duration(state.request.review_timeout_s)}; "
                           "it stands as written.")
        return report, claims
    state.reviews.append(Review(target=ReviewTarget.REPORT, round=1, decision=answer.decision,
                                feedback=answer.feedback))
    if answer.decision is ReviewDecision.CANCEL:
        state.notes.append("The reviewer cancelled the research at the report; it stands as it was.")
        enter(state, Stage.CANCELLED)
    elif answer.decision is ReviewDecision.REVISE:
        round_ = len(state.refinements) + 1
        report, claims = await _refine_once(state, round_, [answer.feedback], "", action="rewrite")
        report = _with_open_issues(state, report)
    return report, claims
