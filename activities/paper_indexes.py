"""The `paper_indexes` activity: which scholarly indexes a `papers` research searches.

The workflow cannot read the environment, and a list the client chose from its own settings could
name an index whose task queue no worker polls (each search there would wait out its 3-minute
window before failing). So the research asks the worker that runs it, once, as a local activity:
SCHOLARLY_PROVIDERS as this worker reads it, the indexes whose queues it serves (worker.py).
"""

from __future__ import annotations

from temporalio import activity

from activities.providers.scholarly import configured_indexes
from settings import settings
from workflows import roles
from workflows.activity_models import PaperIndexesInput, PaperIndexesOutput


@activity.defn(name=roles.PAPER_INDEXES.name)
async def paper_indexes(request: PaperIndexesInput) -> PaperIndexesOutput:
    """SCHOLARLY_PROVIDERS, checked (a name that is no index: a one-line error that ends the
    research, as the worker's own start does)."""
    return PaperIndexesOutput(indexes=configured_indexes(settings()))
