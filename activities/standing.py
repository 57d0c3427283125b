"""The `previous_run` activity: the run before this one of a standing research, from the library
(its sources and claims), for the comparison the workflow makes (workflows/standing/changes/changes.py)."""

from __future__ import annotations

import asyncio

from temporalio import activity

from activities.storage import standing
from activities.storage.database import configured_url
from workflows import roles
from workflows.standing.changes import PreviousRunInput, PreviousRunOutput


@activity.defn(name=roles.PREVIOUS_RUN.name)
async def previous_run(inp: PreviousRunInput) -> PreviousRunOutput:
    found = await asyncio.to_thread(
        standing.previous_run, configured_url(), inp.standing_id, inp.research_id
    )
    return PreviousRunOutput(previous=found)
