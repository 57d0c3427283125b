"""The literature's search: a `papers` research asks every scholarly index for every query.

Each index is searched on its own task queue (`papers_task_queue`), whose rate limit the Temporal
server keeps across every research; the searches of one round run at once, and their hits are
merged by rank into one hit per work (workflows/kit/papers.py: the same DOI or arXiv id, a preprint and
its published version), so a work two indexes found is read once and cited as one source.

Which indexes: the worker that runs the research is asked once (`paper_indexes`, a local activity):
only it reads SCHOLARLY_PROVIDERS and polls those queues. One index that fails costs its hits only,
with a note; a research that no index ever answered ends at once in one line, as does one with no
index configured, rather than writing a report of nothing.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception
from temporalio.exceptions import TimeoutError as ActivityTimeout

from workflows import roles
from workflows.accounting.state import ResearchState
from workflows.activity_models import (
    PaperIndexesInput,
    SearchHit,
    SearchOutput,
    SearchPapersInput,
    papers_task_queue,
)
from workflows.kit.papers import INDEX_WORDS, merge_hits
from workflows.text.redaction import redact


class NoIndex(ApplicationError):
    """A `papers` research with nothing to search: one line, not retried."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message, type=kind, non_retryable=True)


async def search_papers(
    state: ResearchState, queries: list[str], per_query: int
) -> list[SearchHit]:
    """Every query to every index at once; hits interleaved by rank, one per work."""
    indexes = await paper_indexes(state)
    asked = [(query, index) for query in queries for index in indexes]
    answers = await asyncio.gather(*(_ask(query, index, per_query) for query, index in asked))
    state.ledger.stats.searches += len(asked)
    failed = {index: a for (_, index), a in zip(asked, answers, strict=True) if isinstance(a, str)}
    results = [a for a in answers if isinstance(a, SearchOutput)]
    if not results and not state.material.sources and not state.material.background:
        why = "; ".join(f"{INDEX_WORDS.get(i, i)}: {reason}" for i, reason in failed.items())
        raise NoIndex(f"no scholarly index answered ({why})", "NoIndexAnswered")
    for index, reason in failed.items():
        note = f"{INDEX_WORDS.get(index, index)} did not answer a search ({reason}); its papers are missing."
        if note not in state.writeup.notes:
            state.writeup.notes.append(note)
    ranked = [
        result.hits[rank]
        for rank in range(max((len(r.hits) for r in results), default=0))
        for result in results
        if rank < len(result.hits)
    ]
    return merge_hits(ranked)


async def paper_indexes(state: ResearchState) -> list[str]:
    """The indexes the research's worker searches, asked once per research."""
    material = state.material
    if material.paper_indexes is None:
        queue = workflow.info().task_queue
        try:
            answer = await roles.PAPER_INDEXES.run(PaperIndexesInput(research_queue=queue))
        except (ActivityError, ApplicationError, ActivityTimeout) as err:
            if is_cancelled_exception(err):
                raise asyncio.CancelledError() from err
            raise NoIndex(
                f"the worker could not say which scholarly indexes to search ({_reason(err)})",
                "NoIndexConfigured",
            ) from None
        material.paper_indexes = answer.indexes
    if not material.paper_indexes:
        raise NoIndex(
            "no scholarly index is configured for a papers research: set SCHOLARLY_PROVIDERS "
            f"to one or more of {', '.join(INDEX_WORDS)} (the worker's setting)",
            "NoIndexConfigured",
        )
    return material.paper_indexes


async def _ask(query: str, index: str, per_query: int) -> SearchOutput | str:
    """One index's hits for one query, or why it gave none."""
    queue = papers_task_queue(workflow.info().task_queue, index)
    try:
        return await roles.SEARCH_PAPERS.run(
            SearchPapersInput(query=query, max_results=per_query, index=index), task_queue=queue
        )
    except (ActivityError, ApplicationError, ActivityTimeout) as err:
        if is_cancelled_exception(err):
            raise asyncio.CancelledError() from err
        return _reason(err)


def _reason(err: BaseException) -> str:
    cause = err.cause if isinstance(err, ActivityError) and err.cause is not None else err
    if isinstance(cause, ActivityTimeout):
        return "no answer in time: is a worker serving it?"
    message = cause.message if isinstance(cause, ApplicationError) else str(cause)
    return redact(message.splitlines()[0] if message else type(cause).__name__)[:200]
