"""The `save_research` activity: a finished research, written to the research library.

The storage itself (tables, migrations, the database URL, failure classification) lives in
`storage/`; this module only gives it the name Temporal records in history.
"""

from __future__ import annotations

import asyncio

from temporalio import activity

from storage import store
from workflows import roles
from workflows.activity_models import SaveResearchInput, SaveResearchOutput


@activity.defn(name=roles.SAVE_RESEARCH.name)
async def save_research(record: SaveResearchInput) -> SaveResearchOutput:
    """Write the research once; blocking database work runs in a thread, off the event loop."""
    return await asyncio.to_thread(store.write, record)
