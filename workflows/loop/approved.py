"""The person's plan is the plan: steps a person approved or wrote in a plan review all
run, whatever the reflector says.

The reflector may still say ADJUST after one of them ("sizes are not covered"): the re-plan keeps
the approved steps not yet done, in their order and under their titles, and the planner adds its
steps after them (within the depth's maximum); with `review_replans` that plan goes to the person as
a review, as any re-plan does. A research ended before an approved step could run (a budget, a
cancellation) names the step in its notes, so nobody takes the plan for done.

Which steps are approved: every pending step of the plan iteration a person approved
(`Oversight.approved_plan`), and the approved steps a re-plan kept (`Oversight.approved_steps`,
by title).
"""

from __future__ import annotations

from temporalio import workflow

from workflows import patches
from workflows.accounting.state import ResearchState
from workflows.models import PlanStep, StepStatus

#: How `skip_pending` marks a skipped step's description: "... (skipped: WHY)".
_SKIPPED = " (skipped: "


def is_approved(state: ResearchState, step: PlanStep) -> bool:
    """A person approved this step (in the plan they approved, or kept from it by a re-plan)."""
    oversight = state.oversight
    return (
        oversight.approved_plan > 0 and oversight.approved_plan == state.inquiry.plan_iterations
    ) or step.title in oversight.approved_steps


def pending(state: ResearchState) -> list[PlanStep]:
    """The approved steps still to run."""
    plan = state.inquiry.plan
    steps = plan.steps if plan else []
    return [s for s in steps if s.status is StepStatus.PENDING and is_approved(state, s)]


def kept_at_replan(state: ResearchState) -> list[PlanStep]:
    """The approved steps an ADJUST re-plan keeps (none before patch APPROVED_STEPS_KEPT: a
    history recorded earlier replaced them, and replays so). Asked only when there are some."""
    steps = pending(state)
    if not steps or not workflow.patched(patches.APPROVED_STEPS_KEPT):
        return []
    return steps


def kept_note(kept: list[PlanStep], added: int, done: int) -> str:
    """What the notes say after an ADJUST kept the person's steps."""
    count = f"{len(kept)} step{'s' * (len(kept) != 1)}"
    after = (
        f"its {added} new step{'s' * (added != 1)} come after them"
        if added
        else "the plan had no room for new steps after them"
    )
    return (
        f"The reflector asked to adjust the plan after step {done}; the {count} you approved "
        f"were kept and still run ({after})."
    )


def unrun_notes(state: ResearchState) -> list[str]:
    """One note per approved step that did not run, with why (the end of the research, a budget)."""
    plan = state.inquiry.plan
    notes = []
    for step in plan.steps if plan else []:
        if step.status is not StepStatus.SKIPPED or not is_approved(state, step):
            continue
        why = step.description.rpartition(_SKIPPED)[2].rstrip(")") or "the research ended"
        notes.append(f"A step you approved did not run: “{step.title}” ({why}).")
    return notes
