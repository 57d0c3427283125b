"""Whether a standing research's scheduled run may go ahead: its owner's running limit.

A person's own starts pass `starter/client/quotas.py` (RESEARCH_RUNNING_PER_USER) before Temporal
hears of them; a scheduled run is started by Temporal's Schedule itself, so no starter is there to
ask. The run asks instead, as its first step: the `owner_running` activity counts the owner's
other running research in Temporal's visibility (activities/standing.py) and says the limit the
workers run with. At or past it, the run ends at once, cancelled, with a report and a note that
say why ("Skipped: N researches of yours were running"); the schedule's next run tries again.

Visibility lags a start by a second or so, and a run that cannot ask (the activity's retries
spent) goes ahead: a schedule's run is never lost to a busy visibility store, and the limit is
as exact as the starters' own.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from workflows import patches, roles
from workflows.standing_messages import OwnerRunningInput


async def skipped(standing_id: str | None, owner: str) -> str | None:
    """Why this scheduled run does not go ahead (its owner is at the running limit), or None.
    Asked only by a run of a standing research that records the patch (histories before it
    replay without the call)."""
    if not standing_id or not workflow.patched(patches.SCHEDULED_RUNS_COUNTED):
        return None
    try:
        found = await roles.OWNER_RUNNING.run(
            OwnerRunningInput(owner=owner, research_id=workflow.info().workflow_id)
        )
    except ActivityError as err:
        workflow.logger.warning("the owner's running research not counted: %s", err.cause or err)
        return None
    if found.running < found.most:
        return None
    return (
        f"Skipped: {found.running} researches of yours were running, the most at once per user "
        f"({found.most}); the standing research runs again at its next scheduled time."
    )
