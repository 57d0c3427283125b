"""Reading one web source the way the researcher does: fetch it politely and safely (crawler),
keep the article (extraction), then only the passages that matter to the step.

`starter extract` runs the same fetch and extraction, so what it prints is what a research reads
(before the step's focus trims it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from temporalio.exceptions import ApplicationError

from activities.fingerprint import content_digest
from activities.web import crawler
from activities.web.bounded import extract_bounded
from workflows.activity_models import ReadPageOutput
from workflows.text import select_passages, trim

#: Content types for local files given to `starter extract`, by suffix.
FILE_TYPES = {
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "application/xhtml+xml",
    ".pdf": "application/pdf",
    ".md": "text/markdown",
    ".txt": "text/plain",
}


@dataclass(frozen=True)
class Reading:
    url: str  #: where the text came from (after redirects)
    title: str
    text: str  #: the whole main text


async def read_url(url: str, using: crawler.Crawler | None = None) -> Reading:
    """Fetch and extract one page (with the process-wide crawler, or `using`: a caller with
    settings of its own, such as the web app's `check`, which must not replace the process's). Raises `crawler.CrawlError` (with `retryable`) or ValueError
    for a document nobody can read (or one that needs more memory or time than a page may have).
    Extraction runs in a child process with limits (activities/web/bounded.py): it is CPU work
    (tens of ms for a page, more for a PDF), must not stall the worker's event loop, and a hostile
    document must cost that page only."""
    page = await (using.fetch(url) if using is not None else crawler.fetch(url))
    if page.truncated:  # what fits under the cap of a page that big is rarely the article
        raise crawler.CrawlError(
            f"larger than the {crawler.settings().crawl.max_bytes // 1024} KiB page limit"
        )
    extracted = await extract_bounded(page.body, page.content_type, page.url, page.charset)
    return Reading(url=page.url, title=extracted.title, text=extracted.text)


async def read_file(path: Path) -> Reading:
    """A local file through the same extraction (for `starter extract`)."""
    body = await asyncio.to_thread(path.read_bytes)
    content_type = FILE_TYPES.get(
        path.suffix.lower(), "text/html" if b"<html" in body[:2048].lower() else "text/plain"
    )
    extracted = await extract_bounded(body, content_type, path.resolve().as_uri(), None)
    return Reading(url=path.resolve().as_uri(), title=extracted.title, text=extracted.text)


async def read_for_step(url: str, focus: str, max_chars: int) -> ReadPageOutput:
    """The page's passages most relevant to `focus`, at most `max_chars`.

    A page that cannot be read comes back with `error` set: retrying a 404, a robots.txt refusal
    or a refused address cannot help, and one bad page must not fail the step. Trouble that may
    pass (a 5xx, a refused connection) is raised as a retryable error so Temporal tries again.
    """
    try:
        reading = await read_url(url)
    except crawler.PageTimeout as err:
        # Not retried: a server that trickles bytes will trickle again, and each retry would hold
        # the whole step for another CRAWL_PAGE_TIMEOUT_S. The step goes on with its other sources.
        return ReadPageOutput(url=url, error=err.reason)
    except crawler.CrawlError as err:
        if err.retryable:
            raise ApplicationError(f"{url}: {err.reason}", type="PageUnavailable") from None
        return ReadPageOutput(url=url, error=err.reason)
    except ValueError as err:
        return ReadPageOutput(url=url, error=f"unreadable document ({err})")
    if not reading.text.strip():
        return ReadPageOutput(url=url, title=reading.title, error="no readable text")
    # Extracted text has one paragraph (or PDF line) per line; passages are chosen among them.
    paragraphs = "\n\n".join(line for line in reading.text.splitlines() if line.strip())
    text = select_passages(paragraphs, focus or reading.title, max_chars)
    return ReadPageOutput(
        url=reading.url,
        title=reading.title or url,
        text=trim(text, max_chars),
        digest=content_digest(reading.text),
    )
