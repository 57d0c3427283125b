"""Notifications: a research tells the outside world that it completed, failed, waits for a person,
or (a standing research's run) found changes, without ever waiting on the delivery.

How it never holds up the research: the research asks one local activity which channels are
configured (`notification_targets`: opaque keys such as `webhook:0` or `email`, never an address
or a secret, so nothing private reaches the history), and when there is any, it starts a
`NotifyWorkflow` as a child with `ParentClosePolicy.ABANDON` and waits only for the start. The
child delivers to each target with its own activity, retried for a day (`DELIVERY_RETRY`), and
lives on when the research completes: an activity of the research itself would be cancelled when
the research closes, and a research would have to wait for a slow receiver before closing.

The body (`activities/notify.py`) is built in the activity from the `Notice` (which holds
`at`, fixed when the event happened): every attempt sends the same bytes and the same
`X-Research-Delivery` id, so a receiver can drop duplicates.

Pure apart from the Temporal calls: safe in the workflow sandbox.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from enum import Enum

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.workflow import ParentClosePolicy

from workflows.standing.changes import Changes

#: Activity names (activities/notify.py).
NOTIFICATION_TARGETS = "notification_targets"
DELIVER_NOTIFICATION = "deliver_notification"
#: A delivery is retried for a day, then given up (its failure is the notifier's result).
DELIVERY_WINDOW = timedelta(days=1)
DELIVERY_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=30),
    non_retryable_error_types=["Refused", "NotConfigured"],
)


class NoticeKind(str, Enum):
    COMPLETED = "research.completed"
    CANCELLED = "research.cancelled"
    FAILED = "research.failed"
    WAITING = "research.waiting"
    CHANGED = "standing.changed"


class Notice(BaseModel):
    """One event for the receivers: what happened to which research, when. Small by design: the
    receiver follows `url` (built by the activity from RESEARCH_PUBLIC_URL) for the rest."""

    event: NoticeKind
    research_id: str
    owner: str
    question: str
    at: datetime
    standing_id: str | None = None
    #: `clarification`, `plan_review` or `report_review` for research.waiting.
    waiting_for: str | None = None
    #: The pending question or a short line of what is asked.
    pending: str | None = None
    outcome: str | None = None
    error: str | None = None
    changes: Changes | None = None
    #: The standing research's own webhook URLs (its request's `notify`).
    notify: list[str] = Field(default_factory=list)


class DeliverInput(BaseModel):
    notice: Notice
    #: An opaque target key from `notification_targets`.
    target: str
    #: Sent as X-Research-Delivery: the same on every attempt.
    delivery_id: str


class DeliverOutput(BaseModel):
    target: str
    detail: str = ""


class NotifyInput(BaseModel):
    notice: Notice
    targets: list[str]


@workflow.defn(name="NotifyWorkflow")
class NotifyWorkflow:
    """Delivers one notice to each target, each with its own day of retries."""

    @workflow.run
    async def run(self, inp: NotifyInput) -> list[str]:
        info = workflow.info()
        outcomes = await asyncio.gather(
            *(self._deliver(inp.notice, t, f"{info.workflow_id}/{t}") for t in inp.targets)
        )
        return list(outcomes)

    async def _deliver(self, notice: Notice, target: str, delivery_id: str) -> str:
        try:
            out = await workflow.execute_activity(
                DELIVER_NOTIFICATION,
                DeliverInput(notice=notice, target=target, delivery_id=delivery_id),
                result_type=DeliverOutput,
                start_to_close_timeout=timedelta(seconds=60),
                schedule_to_close_timeout=DELIVERY_WINDOW,
                retry_policy=DELIVERY_RETRY,
            )
        except ActivityError as err:
            cause = err.cause.message if isinstance(err.cause, ApplicationError) else str(err)
            workflow.logger.warning("notification to %s given up: %s", target, cause)
            return f"{target}: given up: {cause}"
        return f"{target}: delivered {out.detail}".strip()


async def announce(notice: Notice, child_id: str) -> None:
    """Start the delivery of NOTICE (never waits for it; a failure to start is logged, never
    raised: a notification must not cost the research)."""
    try:
        targets = await workflow.execute_local_activity(
            NOTIFICATION_TARGETS,
            notice,
            result_type=list[str],
            start_to_close_timeout=timedelta(seconds=10),
            retry_policy=RetryPolicy(maximum_attempts=2),
        )
    except ActivityError as err:
        workflow.logger.warning("notifications skipped: %s", err.cause or err)
        return
    if not targets:
        return
    try:
        await workflow.start_child_workflow(
            NotifyWorkflow.run,
            NotifyInput(notice=notice, targets=targets),
            id=child_id,
            parent_close_policy=ParentClosePolicy.ABANDON,
            execution_timeout=DELIVERY_WINDOW + timedelta(hours=1),
            static_summary=f"{notice.event.value} for {notice.research_id}",
        )
    except Exception as err:  # noqa: BLE001 - e.g. the id already started: the notice went out
        workflow.logger.warning("notifications not started: %s", err)
