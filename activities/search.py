"""The `search` activity: the researcher's queries, answered by the configured providers.

Search goes to the web providers or the `local` corpus (a folder of documents indexed with SQLite
FTS5, by default the Python interpreter's own documentation), combined as SEARCH_STRATEGY says
(activities/providers/). Reading what was found is activities/pages.py's job.
"""

from __future__ import annotations

from temporalio import activity

from activities.heartbeats import with_heartbeats
from activities.providers.strategies import run_search
from settings import settings
from workflows import roles
from workflows.activity_models import SearchInput, SearchOutput


@activity.defn(name=roles.SEARCH.name)
async def search(request: SearchInput) -> SearchOutput:
    """The providers the research's `sources` name (the configured ones under the configured
    strategy unless it chose: activities/providers/strategies.py). Idempotent: searching again changes nothing anywhere."""
    hits = run_search(
        request.query, request.max_results, settings(), request.sources, request.owner
    )
    return SearchOutput(hits=await with_heartbeats(hits))
