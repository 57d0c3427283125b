"""The `save_revision` activity: a revised section's new version of a report, kept in the research
library beside the earlier versions (storage/revisions.py does the storing)."""

from __future__ import annotations

import asyncio

from temporalio import activity

from storage import revisions
from workflows import roles
from workflows.revising_messages import SaveRevisionInput, SaveRevisionOutput


@activity.defn(name=roles.SAVE_REVISION.name)
async def save_revision(record: SaveRevisionInput) -> SaveRevisionOutput:
    """Store the version once; blocking database work runs in a thread, off the event loop."""
    return await asyncio.to_thread(revisions.write, record)
