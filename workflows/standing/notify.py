"""Notifications: a research tells the outside world that it completed, failed, waits for a person,
or (a standing research's run) found changes, without ever waiting on the delivery.

How it never holds up the research: the research asks one local activity which channels are
configured (`notification_targets`: opaque keys such as `webhook:0` or `email`, never an address
or a secret, so nothing private reaches the history), and when there is any, it starts a
`NotifyWorkflow` as a child with `ParentClosePolicy.ABANDON` and waits only for the start. The
child delivers to each target with its own activity, retried for a day (its row in roles.py), and
lives on when the research completes: an activity of the research itself would be cancelled when
the research closes, and a research would have to wait for a slow receiver before closing.

The body (`activities/notify/message.py`) is built in the activity from the `Notice` (which holds
`at`, fixed when the event happened): every attempt sends the same bytes and the same
`X-Research-Delivery` id, so a receiver can drop duplicates.

Pure apart from the Temporal calls: safe in the workflow sandbox.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from pydantic import BaseModel
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.workflow import ParentClosePolicy

from workflows import roles
from workflows.standing_messages import (
    DeliverInput,
    Notice,
)


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
            out = await roles.DELIVER_NOTIFICATION.run(
                DeliverInput(notice=notice, target=target, delivery_id=delivery_id)
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
        targets = await roles.NOTIFICATION_TARGETS.run(notice)
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
            execution_timeout=roles.DELIVERY_WINDOW + timedelta(hours=1),
            static_summary=f"{notice.event.value} for {notice.research_id}",
        )
    except Exception as err:  # noqa: BLE001 - e.g. the id already started: the notice went out
        workflow.logger.warning("notifications not started: %s", err)
