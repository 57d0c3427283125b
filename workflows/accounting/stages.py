"""The orchestrator's state machine: which stage may follow which (seed 001), and why.

`EDGES` is the one source of the diagram: the transition table the workflow enforces is derived
from it, and so is the README's chart (`python -m workflows.accounting.stages` prints it; a test keeps the
README equal to it). A transition outside the table is a bug in the workflow, so it fails the
research with a non-retryable error that names both stages rather than leaving it stuck or
silently wrong. Failing or cancelling is allowed from every stage that has not ended. Each
transition also updates what the Temporal Web UI shows of the research (`details`).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from workflows.accounting.state import ResearchState
from workflows.events import EventKind, emit
from workflows.models import Stage

#: (from, to, why) for every allowed transition, in the order a research usually walks them.
EDGES: tuple[tuple[Stage, Stage, str], ...] = (
    (Stage.ROUTING, Stage.CLARIFYING, "CLARIFICATION (LLM, below the limit)"),
    (Stage.CLARIFYING, Stage.AWAITING_ANSWER, "question written"),
    (Stage.CLARIFYING, Stage.COORDINATING, "no question could be written"),
    (Stage.AWAITING_ANSWER, Stage.ROUTING, "clarification_answer signal"),
    (Stage.AWAITING_ANSWER, Stage.COORDINATING, "no answer in time"),
    (Stage.ROUTING, Stage.COORDINATING, "RESEARCH (limit, reply shortcut, LLM, or fallback)"),
    (Stage.COORDINATING, Stage.BACKGROUND, "deep mode"),
    (Stage.COORDINATING, Stage.PLANNING, "web mode (one-step plan)"),
    (Stage.COORDINATING, Stage.SYNTHESIZING, "budget spent"),
    (Stage.BACKGROUND, Stage.SYNTHESIZING, "simple question / simple mode (direct answer)"),
    (Stage.BACKGROUND, Stage.PLANNING, "background gathered"),
    (Stage.PLANNING, Stage.RESEARCHING, "plan made"),
    (
        Stage.PLANNING,
        Stage.AWAITING_PLAN_REVIEW,
        "plan made, review_plan on (a re-plan: review_replans too)",
    ),
    (Stage.AWAITING_PLAN_REVIEW, Stage.RESEARCHING, "approve, own steps, or no answer in time"),
    (Stage.AWAITING_PLAN_REVIEW, Stage.PLANNING, "revise with feedback (at most 3 rounds)"),
    (Stage.AWAITING_PLAN_REVIEW, Stage.SYNTHESIZING, "cancel"),
    (Stage.PLANNING, Stage.SYNTHESIZING, "budget spent"),
    (Stage.RESEARCHING, Stage.REFLECTING, "step done"),
    (Stage.RESEARCHING, Stage.SYNTHESIZING, "budget spent"),
    (Stage.REFLECTING, Stage.RESEARCHING, "CONTINUE"),
    (Stage.REFLECTING, Stage.PLANNING, "ADJUST (keeps completed steps, at most 3 plans)"),
    (Stage.REFLECTING, Stage.SYNTHESIZING, "COMPLETE (never before the depth's minimum steps)"),
    (Stage.SYNTHESIZING, Stage.VERIFYING, "report written"),
    (Stage.VERIFYING, Stage.REFINING, "the critic does not accept it (at most 2 passes)"),
    (Stage.REFINING, Stage.PLANNING, "research what is missing (new steps only)"),
    (Stage.REFINING, Stage.SYNTHESIZING, "rewrite with the issues"),
    (
        Stage.VERIFYING,
        Stage.AWAITING_REPORT_REVIEW,
        "review_report always, or auto, attended and the critic asks",
    ),
    (
        Stage.AWAITING_REPORT_REVIEW,
        Stage.REFINING,
        "revise with feedback (then reviewed again, at most 3 rounds)",
    ),
    (Stage.AWAITING_REPORT_REVIEW, Stage.COMPLETED, "approve, or no answer in time"),
    (Stage.AWAITING_REPORT_REVIEW, Stage.CANCELLED, "cancel (the report it had)"),
    (Stage.VERIFYING, Stage.COMPLETED, "accepted, or refinements spent (open issues listed)"),
    (Stage.SYNTHESIZING, Stage.COMPLETED, "verification off"),
    (Stage.SYNTHESIZING, Stage.CANCELLED, "cancelled mid-research (report of what it had)"),
)

#: Stages where the research has gathered something worth synthesizing.
RESEARCH_STAGES = frozenset(
    {
        Stage.COORDINATING,
        Stage.BACKGROUND,
        Stage.PLANNING,
        Stage.AWAITING_PLAN_REVIEW,
        Stage.RESEARCHING,
        Stage.REFLECTING,
    }
)
TERMINAL_STAGES = frozenset({Stage.COMPLETED, Stage.CANCELLED, Stage.FAILED})
#: Stages of the conversation before the research: the budget holds no reserve back yet.
CONVERSATION_STAGES = frozenset({Stage.ROUTING, Stage.CLARIFYING, Stage.AWAITING_ANSWER})
#: Stages where the report is written, checked, refined and reviewed: the budget's other phase
#: (research leaves the report's reserve intact; the report's own calls must fit the limit).
REPORT_STAGES = frozenset(Stage) - RESEARCH_STAGES - CONVERSATION_STAGES

TRANSITIONS: dict[Stage, frozenset[Stage]] = {
    stage: frozenset(to for frm, to, _ in EDGES if frm is stage) for stage in Stage
}


class IllegalTransition(ApplicationError):
    def __init__(self, current: Stage, target: Stage) -> None:
        super().__init__(
            f"illegal stage transition {current.value} -> {target.value}",
            type="IllegalTransition",
            non_retryable=True,
        )
        self.current = current
        self.target = target


def check_transition(current: Stage, target: Stage) -> None:
    """Raise IllegalTransition unless `target` may follow `current`."""
    if current in TERMINAL_STAGES:
        raise IllegalTransition(current, target)
    if target in (Stage.FAILED, Stage.CANCELLED):
        return
    if target not in TRANSITIONS[current]:
        raise IllegalTransition(current, target)


def enter(state: ResearchState, stage: Stage) -> None:
    """Move the research to `stage`: checked against the table, kept in `stage_history`, written
    to the memo (`stage`, shown by `python -m starter list`) and to the Web UI's current details."""
    if stage is state.stage:
        return
    check_transition(state.stage, stage)
    before, state.stage = state.stage, stage
    state.stage_history.append(stage)
    if stage in (Stage.SYNTHESIZING, Stage.CANCELLED) and state.inquiry.plan:
        state.inquiry.skip_pending("the research ended before this step")
    workflow.upsert_memo({"stage": stage.value})
    emit(state.events, EventKind.STAGE, stage.value, {"stage": stage.value, "from": before.value})
    show_progress(state)


def begin(state: ResearchState) -> None:
    """The research's first stage event: `stage_history` starts in routing without a transition,
    so the stage events name every entry of `stage_history`, in order."""
    request = state.request
    emit(
        state.events,
        EventKind.STAGE,
        f"{state.stage.value}: {state.question[:200]}",
        {
            "stage": state.stage.value,
            "from": None,
            "query": state.question,
            "depth": request.depth.value,
            "mode": request.mode.value,
            "language": state.language,
        },
    )
    show_progress(state)


def show_progress(state: ResearchState) -> None:
    workflow.set_current_details(details(state))


def details(state: ResearchState) -> str:
    """What the Temporal Web UI shows under "Current details"."""
    pending_question, plan = state.conversation.pending_question, state.inquiry.plan
    pending_review, rounds = state.oversight.pending_review, state.oversight.review_rounds
    lines = [f"**Stage:** {state.stage.value}"]
    if pending_question:
        lines.append(f"**Waiting for an answer:** {pending_question}")
        lines.append(
            'Answer with signal `clarification_answer` and a JSON string, e.g. `"the 2024 paper"`.'
        )
    if pending_review:
        target = pending_review.value
        lines.append(f"**Waiting for a review of the {target}** (round {rounds}).")
        lines.append(
            f'Send signal `{target}_review` with a JSON object: `{{"decision": "approve"}}`, '
            f'`{{"decision": "revise", "feedback": "..."}}` or `{{"decision": "cancel"}}`.'
        )
    if plan:
        lines.append(
            f"**Plan** (iteration {state.inquiry.plan_iterations}): "
            f"{state.inquiry.steps_done()}/{len(plan.steps)} steps done"
        )
        for i, step in enumerate(plan.steps):
            about = f": {step.description}" if pending_review and step.description else ""
            lines.append(f"{i + 1}. [{step.status.value}] {step.title}{about}")
    lines.append(f"**Sources:** {len(state.material.sources)}")
    if state.inquiry.reflections:
        last = state.inquiry.reflections[-1]
        lines.append(f"**Last reflection:** {last.decision.value}: {last.reasoning[:200]}")
    return "\n\n".join(lines)


def mermaid() -> str:
    """The state diagram as Mermaid, exactly as the README shows it."""
    lines = ["stateDiagram-v2", f"    [*] --> {Stage.ROUTING.value}"]
    lines += [f"    {frm.value} --> {to.value}: {why}" for frm, to, why in EDGES]
    lines += [f"    {Stage.COMPLETED.value} --> [*]", f"    {Stage.CANCELLED.value} --> [*]"]
    return "\n".join(lines)


if __name__ == "__main__":
    print(mermaid())
