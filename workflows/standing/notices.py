"""What a research does for the people watching it: notices when it completes, fails or
waits for a person, and, as a run of a standing research, the comparison with its previous run.

`DeepResearchWorkflow` starts a `Watcher` when it begins. It runs beside the
research as a workflow task of its own: each time the research starts waiting for a person (a
clarification, a plan review, a report review) it announces that once, so no stage module needs
to know about notifications.
"""

from __future__ import annotations

from typing import TypedDict, Unpack

from temporalio import workflow
from temporalio.exceptions import ActivityError

from workflows import record, roles
from workflows.accounting.state import ResearchState
from workflows.models import Claim, Stage
from workflows.standing.changes import compare, with_section
from workflows.standing.notify import announce
from workflows.standing_messages import Changes, Notice, NoticeKind, PreviousRunInput

#: What a research in each of these stages waits for (the table is workflows/record.WAITING).
WAITING = {stage: waiting.key for stage, waiting in record.WAITING.items()}
#: The longest error text a research.failed notice carries.
ERROR_CHARS = 300


class Extra(TypedDict, total=False):
    """What a notice of one kind adds (`Notice`'s optional fields)."""

    waiting_for: str | None
    pending: str | None
    outcome: str | None
    error: str | None
    changes: Changes | None


def notice(state: ResearchState, kind: NoticeKind, **extra: Unpack[Extra]) -> Notice:
    request = state.request
    return Notice(
        event=kind,
        research_id=workflow.info().workflow_id,
        owner=request.owner,
        question=state.question,
        at=workflow.now(),
        standing_id=request.standing_id,
        notify=list(request.notify),
        **extra,
    )


async def send(state: ResearchState, kind: NoticeKind, **extra: Unpack[Extra]) -> None:
    """Announce KIND (a child id unique to this research and moment: the last event's seq)."""
    child = f"{workflow.info().workflow_id}/notify/{state.events.last_seq}/{kind.value}"
    await announce(notice(state, kind, **extra), child)


class Watcher:
    """Announces each wait for a person once, as it begins."""

    def __init__(self, state: ResearchState) -> None:
        self.state = state
        self.busy = False
        self.seen: Stage | None = None

    def _waiting(self) -> Stage | None:
        stage = self.state.stage
        return stage if stage in WAITING else None

    async def run(self) -> None:
        while True:
            await workflow.wait_condition(lambda: self._waiting() != self.seen)
            self.seen = self._waiting()
            if self.seen is None:
                continue
            self.busy = True
            try:
                await send(
                    self.state,
                    NoticeKind.WAITING,
                    waiting_for=WAITING[self.seen],
                    pending=self._pending(self.seen),
                )
            finally:
                self.busy = False

    def _pending(self, stage: Stage) -> str | None:
        if stage is Stage.AWAITING_ANSWER:
            return self.state.conversation.pending_question
        plan = self.state.inquiry.plan
        if stage is Stage.AWAITING_PLAN_REVIEW and plan is not None:
            return f"a plan of {len(plan.steps)} steps: {plan.title}"
        return "the report, before it is final"

    async def idle(self) -> None:
        await workflow.wait_condition(lambda: not self.busy)


async def compare_with_previous(state: ResearchState, report: str, claims: list[Claim]) -> str:
    """For a run of a standing research: read the previous run, compare, open the report with
    "What changed since DATE" and keep the comparison in `state.changes` (whether it changed
    decides the `standing.changed` notice: histories before `findings-matched` compare as they did)."""
    standing_id = state.request.standing_id
    if not standing_id:
        return report
    try:
        found = await roles.PREVIOUS_RUN.run(
            PreviousRunInput(standing_id=standing_id, research_id=workflow.info().workflow_id)
        )
    except ActivityError as err:
        workflow.logger.warning("no comparison with the previous run: %s", err.cause or err)
        state.writeup.notes.append(
            "The previous run of this standing research could not be read; "
            "this report says nothing about what changed."
        )
        return report
    if found.previous is None:
        return report
    material = state.material
    changes = compare(found.previous, material.sources, claims, material.evidence_pool())
    state.changes = changes
    return with_section(report, changes)


def failure_text(err: BaseException) -> str:
    text = " ".join(str(getattr(err, "message", None) or err).split())
    return text[:ERROR_CHARS]
