"""The `read_page` activity: one source read for a step, from the web (activities/web/reading.py),
from the local research corpus (`file://` URLs), or a scholarly paper (its full text or abstract)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.fingerprint import content_digest
from activities.heartbeats import with_heartbeats
from activities.web.reading import read_for_step
from settings import settings
from workflows import roles
from workflows.activity_models import ReadPageInput, ReadPageOutput
from workflows.models import PAGE_TEXT_LIMIT, Paper, PaperRead
from workflows.text import trim

if TYPE_CHECKING:
    from activities.corpus import LocalCorpus


def local_corpus() -> LocalCorpus:
    """The process-wide index of the configured corpus (imported lazily: the workflow sandbox
    imports this module for activity names only)."""
    from activities.corpus import open_corpus

    config = settings()
    return open_corpus(config.corpus.folder, config.corpus.index_dir)


def read_document(url: str, focus: str, max_chars: int) -> ReadPageOutput | None:
    """A document of the research corpus, or an uploaded document (a search of its owner's
    uploads found its URL: activities/corpus/uploads.py); read from an index, never from a path."""
    page = local_corpus().read(url, focus, max_chars)
    if page is None:
        from activities.providers.local import uploads_corpus_for_url

        uploaded = uploads_corpus_for_url(settings(), url)
        page = uploaded.read(url, focus, max_chars) if uploaded is not None else None
    return page


async def read_paper(url: str, paper: Paper, focus: str, max_chars: int) -> ReadPageOutput:
    """A paper read as a paper: its open-access full text through the crawler (with every rule a
    page has: robots.txt, the network guard, the size and time limits; PDFs extracted), else its
    abstract, said so in `read`. A full text that fails even in a way that may pass (a 5xx) gives
    way to the abstract at once: the abstract is what the index vouches for, and retrying would
    hold the step for a text it can do without. URL stays the paper's own (its DOI link), so the
    source is the work, not the copy that was read."""
    if paper.full_text_url.startswith(("http://", "https://")):
        try:
            page = await read_for_step(paper.full_text_url, focus, max_chars)
        except ApplicationError:
            page = None
        if page is not None and not page.error and page.text.strip():
            return page.model_copy(update={"url": url, "read": PaperRead.FULL_TEXT.value})
    abstract = " ".join(paper.abstract.split())
    if not abstract:
        why = "no open-access full text could be read and the index gave no abstract"
        return ReadPageOutput(url=url, error=why)
    return ReadPageOutput(
        url=url,
        text=trim(abstract, max_chars),
        digest=content_digest(abstract),
        read=PaperRead.ABSTRACT.value,
    )


@activity.defn(name=roles.READ_PAGE.name)
async def read_page(request: ReadPageInput) -> ReadPageOutput:
    """The page trimmed to the passages that matter to the step (at most PAGE_TEXT_LIMIT chars).

    One activity per page, run concurrently by the workflow, rather than one per step with its own
    concurrency inside:
    - retries: a page that times out or gets a 5xx is retried alone (Temporal's policy, visible per
      page in history); a per-step activity would refetch every page or hide partial progress in
      heartbeat details;
    - failure isolation: a bad page ends as `error` (or retries spent) for that page only, and the
      workflow goes on with the others;
    - cancellation and budgets: the workflow cancels exactly the reads still running;
    - history size: each result is at most PAGE_TEXT_LIMIT characters of passages, never raw HTML,
      so a step's three or four reads add ~15 KiB, the same as one batched result would.
    The cost is a few more history events per step, which the benchmarks show is small.

    A page that cannot be read comes back with `error` set instead of raising: one bad page must
    never fail a step, and retrying a page that is not there cannot help.
    """
    max_chars = min(request.max_chars, PAGE_TEXT_LIMIT)
    if request.paper is not None:
        return await with_heartbeats(
            read_paper(request.url, request.paper, request.focus, max_chars)
        )
    if request.url.startswith("file://"):
        page = await with_heartbeats(
            asyncio.to_thread(read_document, request.url, request.focus, max_chars)
        )
        if page is None:
            return ReadPageOutput(url=request.url, error="not a document of the research corpus")
        return page
    if request.url.startswith(("http://", "https://")):
        return await with_heartbeats(read_for_step(request.url, request.focus, max_chars))
    return ReadPageOutput(
        url=request.url, error="not a web page or a document of the research corpus"
    )
