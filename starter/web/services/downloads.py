"""Report downloads that cannot starve the server: `render(request, result, fmt, user)`.

Word, PDF and HTML are written in a child process of their own (`python -m starter.exports.child`,
at a lower priority, its memory capped), never on the thread pool that serves pages, the API and
library reads. Each download is bounded:

- in size: a report beyond what its format renders in time (its row of `starter.exports.FORMATS`:
  `max_chars` characters of markdown, `max_blocks` paragraphs; MAX_RESULT_CHARS in all) is
  refused at once (413, one line that says to download the Markdown instead);
- in concurrency: at most MAX_PER_USER at a time for one user (429 beyond), MAX_RENDERS at a time
  in all (a download waits up to QUEUE_WAIT_S for a free slot, then 503 with Retry-After);
- in time: a child still writing after RENDER_TIMEOUT_S is killed (503);
- by the client: when the person who asked disconnects, the child is killed at once.

Markdown (a format with no limits: a copy of the stored text) and the reference files (BibTeX,
RIS, CSL-JSON: a few lines a source) are written in a thread when small, in a child like the
others when large. A reference file dates its web pages by the day the research finished
(`read_on`, from the library).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from contextlib import asynccontextmanager
from datetime import date
from typing import Any

from starlette.requests import Request

from starter.client import library
from starter.exports import FORMATS, export
from starter.web.deps import ApiError, Backend, Research
from starter.web.services.children import ClientLeft, TooSlow, failure_line, run_child
from workflows.models import ResearchResult

#: Renders at a time in all (this app process), and for one user.
MAX_RENDERS = 2
MAX_PER_USER = 1
#: How long a download waits for a free slot, and how long its rendering may take.
QUEUE_WAIT_S = 10.0
RENDER_TIMEOUT_S = 60.0
#: The largest research (as JSON) any format is written for; each format's own limits are in its
#: row of `starter.exports.FORMATS`.
MAX_RESULT_CHARS = 8_000_000
#: A format with no limits (Markdown, a copy of the text) up to this size is written in a thread;
#: larger, in a child too.
SMALL_TEXT_CHARS = 200_000


class Downloads:
    """The slots of one app."""

    def __init__(self) -> None:
        self.slots = asyncio.Semaphore(MAX_RENDERS)
        self.per_user: Counter[str] = Counter()

    @asynccontextmanager
    async def slot(self, user: str) -> Any:
        if self.per_user[user] >= MAX_PER_USER:
            raise ApiError(
                429,
                f"you already have {MAX_PER_USER} download being prepared: wait for it to finish",
            )
        self.per_user[user] += 1
        try:
            try:
                await asyncio.wait_for(self.slots.acquire(), QUEUE_WAIT_S)
            except TimeoutError:
                raise ApiError(
                    503, "the server is preparing too many downloads: try again in a minute"
                ) from None
            try:
                yield
            finally:
                self.slots.release()
        finally:
            self.per_user[user] -= 1
            if self.per_user[user] <= 0:
                del self.per_user[user]


def downloads_of(request: Request) -> Downloads:
    state = request.app.state
    found = getattr(state, "downloads", None)
    if found is None:
        found = state.downloads = Downloads()
    return found


def refusal(result: ResearchResult, fmt: str, payload: str) -> str | None:
    """Why RESULT is too large to be written as FMT in time, or None."""
    form = FORMATS[fmt]
    name = form.title
    chars = len(result.report_markdown)
    if form.max_chars is not None and chars > form.max_chars:
        return (
            f"this report is too large to download as {name} ({chars:,} characters, at most "
            f"{form.max_chars:,}): download it as Markdown"
        )
    blocks = result.report_markdown.count("\n\n") + 1
    if form.max_blocks is not None and blocks > form.max_blocks:
        return (
            f"this report has too many paragraphs to download as {name} ({blocks:,}, at most "
            f"{form.max_blocks:,}): download it as Markdown"
        )
    if len(payload) > MAX_RESULT_CHARS:
        return f"this research is too large to download as {name}: download it as Markdown"
    return None


async def read_on(research: Research, app: Backend) -> date | None:
    """The day RESEARCH finished (the library's finished_at): when its web pages were read, as a
    reference file's `urldate` says. None when the library cannot tell."""
    if research.stored is not None:
        return research.stored.finished_at.date()
    return await library.finished_on(app.session, research.id)


async def render(
    request: Request,
    result: ResearchResult,
    fmt: str,
    user: str,
    accessed: date | None = None,
) -> tuple[bytes, str, str]:
    """(body, content type, file name) of RESULT's report (as the client hands it: local sources
    by name) as FMT (its references: web pages read on ACCESSED), bounded as the module says."""
    if fmt not in FORMATS:
        raise ApiError(
            422, f"unknown export format {fmt[:20]!r}: choose one of {', '.join(FORMATS)}"
        )
    unlimited = FORMATS[fmt].max_chars is None and FORMATS[fmt].max_blocks is None
    if unlimited and len(result.report_markdown) <= SMALL_TEXT_CHARS:
        return await asyncio.to_thread(export, result, fmt, accessed)
    payload = result.model_dump_json()
    problem = refusal(result, fmt, payload)
    if problem:
        raise ApiError(413, problem)
    async with downloads_of(request).slot(user):
        return await _in_child(request, payload.encode(), fmt, accessed)


async def _in_child(
    request: Request, payload: bytes, fmt: str, accessed: date | None = None
) -> tuple[bytes, str, str]:
    args = ["-m", "starter.exports.child", fmt, *([accessed.isoformat()] if accessed else [])]
    try:
        out, err, code = await run_child(request, args, payload, RENDER_TIMEOUT_S)
    except ClientLeft:
        raise ApiError(499, "the download was cancelled: the client left") from None
    except TooSlow:
        raise ApiError(
            503,
            f"the {FORMATS[fmt].title} file could not be written within {RENDER_TIMEOUT_S:.0f} s: "
            "download the report as Markdown",
        ) from None
    if code != 0:
        raise ApiError(422 if code == 3 else 503, failure_line(err, code, "the export failed"))
    size = int.from_bytes(out[:4], "big")
    header = json.loads(out[4 : 4 + size])
    return out[4 + size :], header["content_type"], header["name"]
