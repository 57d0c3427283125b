"""The `search_papers` activity: one query to one scholarly index, on that index's task queue.

The workflow schedules it on `papers_task_queue(research_queue, index)`, which only this
process's per-index workers poll (worker.py), each setting the queue's dispatch rate to the
index's published one (activities/providers/scholarly/RATES): the Temporal server then keeps
arXiv's one request every three seconds across every research on every worker, and the index's
pace in this process keeps any burst the server lets through from reaching it.

Errors as the web providers': an index not in SCHOLARLY_PROVIDERS, or none at all, is
non-retryable and says which variable to set; a 429's Retry-After becomes the next retry's
delay; 5xx, timeouts and a reply that does not parse are retried.
"""

from __future__ import annotations

from temporalio import activity

from activities.heartbeats import with_heartbeats
from activities.providers.scholarly import configured_index
from settings import settings
from workflows import roles
from workflows.activity_models import SearchOutput, SearchPapersInput


@activity.defn(name=roles.SEARCH_PAPERS.name)
async def search_papers(request: SearchPapersInput) -> SearchOutput:
    """At most `max_results` works from the index, one hit each (workflows/kit/papers.py merges a
    preprint the index lists apart from its published version). Idempotent."""
    index = configured_index(request.index, settings())
    hits = await with_heartbeats(index.search(request.query, request.max_results))
    return SearchOutput(hits=hits)
