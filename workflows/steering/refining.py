"""The refining loop (seed 001): what each pass does, not when it runs.

After synthesis the report is verified (claim by claim) and criticised (`checking.py`). When the
critic does not accept it, the research refines it, at most MAX_REFINEMENTS times:
- **research** what is missing, when the critic says something was not covered (uncovered terms,
  skipped steps), the plan has room and no budget has run out: back to planning with the issues
  as feedback (new steps only), the new steps researched through the same wave loop as the plan's
  (reflected on, loop-backs honoured, budgets guarding, continue-as-new possible), the report
  written again;
- otherwise **rewrite** the report with the issues and the critic's rewrite suggestion.
Each pass is recorded in `refinements`. What is still wrong after the last pass is listed in the
report's closing lines, never hidden.

Then a person may review the report: that is reviews.py (`report_review_wanted`,
`record_report_review`, `review_report`), the one module of the report review.

`research.py` decides when each of these runs (its `_report`), so its `run()` shows the whole
diagram; this module says what a pass is.
"""

from __future__ import annotations

from workflows.accounting.stages import enter
from workflows.accounting.state import ResearchState
from workflows.events import EventKind, emit
from workflows.models import (
    Refinement,
    RefinementAction,
    Stage,
)

MAX_REFINEMENTS = 2
#: Issue texts that say the research, not the writing, fell short (offline critic's rule names,
#: and words an LLM critic uses for the same).
_COVERAGE_WORDS = (
    "uncovered",
    "not covered",
    "missing",
    "skipped",
    "does not address",
    "unanswered",
    "not answered",
)


def wants_refinement(state: ResearchState) -> bool:
    """The critic does not accept the report and the loop has passes left."""
    critique = state.writeup.critique
    return (
        critique is not None
        and not critique.is_acceptable
        and len(state.oversight.refinements) < MAX_REFINEMENTS
    )


def begin_pass(
    state: ResearchState,
    issues: list[str],
    can_research: bool,
    action: RefinementAction | None = None,
) -> Refinement:
    """Record the next pass (entering `refining`): its round, the issues, and what it will do."""
    enter(state, Stage.REFINING)
    action = action or choose_action(issues, state, can_research)
    refinements = state.oversight.refinements
    refinement = Refinement(round=len(refinements) + 1, issues=issues, action=action)
    refinements.append(refinement)
    emit(
        state.events,
        EventKind.REFINEMENT,
        f"refinement {refinement.round}: {action.value} ({len(issues)} issues)",
        {"round": refinement.round, "action": action.value, "issues": issues[:20]},
    )
    return refinement


def critic_issues(state: ResearchState) -> tuple[list[str], list[str]]:
    """The critic's issues, and its rewrite suggestion as feedback lines."""
    critique = state.writeup.critique
    if critique is None:
        return [], []
    suggestion = [critique.rewrite_suggestion] if critique.rewrite_suggestion else []
    return [i.text for i in critique.issues], suggestion


def choose_action(
    issues: list[str], state: ResearchState, can_research: bool = True
) -> RefinementAction:
    """Research when something was not covered, the plan may grow and budgets leave room; else rewrite."""
    _, high = state.step_limits()
    plan = state.inquiry.plan
    room = plan is not None and len(plan.steps) < high and can_research
    coverage = any(word in issue.lower() for issue in issues for word in _COVERAGE_WORDS)
    return RefinementAction.RESEARCH if coverage and room else RefinementAction.REWRITE


def with_open_issues(state: ResearchState, report: str) -> str:
    critique = state.writeup.critique
    if critique is None or critique.is_acceptable or not critique.issues:
        return report
    lines = "\n".join(f"- ({i.severity.value}) {i.text}" for i in critique.issues)
    passes = len(state.oversight.refinements)
    return f"{report.rstrip()}\n\n*Still open after {passes} refinement{'s' * (passes != 1)}:*\n\n{lines}\n"
