"""The standing research's activities: `previous_run`, the run before this one of a standing
research, from the library (its sources and claims), for the comparison the workflow makes
(workflows/standing/changes.py); `owner_running`, how many of the owner's research are running,
asked by a scheduled run before it begins (workflows/standing/admission.py)."""

from __future__ import annotations

import asyncio

from temporalio import activity
from temporalio.client import WorkflowExecutionStatus

from settings import settings
from storage import standing
from storage.database import configured_url
from workflows import roles
from workflows.standing_messages import (
    OwnerRunningInput,
    OwnerRunningOutput,
    PreviousRunInput,
    PreviousRunOutput,
)

#: The most running research one count reads from Temporal's list (the starters' quotas.SCAN).
SCAN = 5000


@activity.defn(name=roles.PREVIOUS_RUN.name)
async def previous_run(inp: PreviousRunInput) -> PreviousRunOutput:
    found = await asyncio.to_thread(
        standing.previous_run, configured_url(), inp.standing_id, inp.research_id
    )
    return PreviousRunOutput(previous=found)


@activity.defn(name=roles.OWNER_RUNNING.name)
async def owner_running(inp: OwnerRunningInput) -> OwnerRunningOutput:
    """The owner's running research on this deployment's task queue, by the memo's owner as the
    starters count them (starter/client/quotas.py), the asking run left out; and the limit."""
    cfg = settings()
    query = (
        "WorkflowType = 'DeepResearchWorkflow' AND ExecutionStatus = 'Running' "
        f"AND TaskQueue = '{cfg.temporal.task_queue}'"
    )
    running: set[str] = set()
    async for wf in activity.client().list_workflows(query, page_size=500, limit=SCAN):
        if wf.id == inp.research_id or wf.status is not WorkflowExecutionStatus.RUNNING:
            continue
        try:
            owner = str(await wf.memo_value("owner", cfg.access.user))
        except Exception:  # noqa: BLE001 - an undecodable memo is nobody's
            continue
        if owner == inp.owner:
            running.add(wf.id)
    return OwnerRunningOutput(running=len(running), most=cfg.limits.running_per_user)
