"""What the scholarly indexes share: a paced, polite request, a hit built from a paper, safe XML.

- **Paced in the process, too.** Each index's searches run on a task queue of its own whose
  dispatch rate the Temporal server keeps for every worker (worker.py). The server splits that
  rate over the queue's partitions (four by default), each allowed a burst of one, so a few
  searches may still be handed out at once; `Pace` spaces this process's requests to each index
  by the index's published interval whatever the server hands out, and also paces an index used as
  an ordinary SEARCH_PROVIDER, which no task queue limits.
- **Polite.** Every request names the product and, when RESEARCH_CONTACT_EMAIL is set, the person
  to contact in its User-Agent; the indexes that ask for it get the address as `mailto` too.
- **XML without entities.** arXiv and PubMed answer XML. The standard library's parser (expat)
  fetches no external entity or DTD; a reply that declares entities of its own is refused before
  it is parsed (no entity expansion however the expat build limits it), as defusedxml would.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from temporalio.exceptions import ApplicationError

from activities.providers.http import (
    REQUEST_TIMEOUT_S,
    one_line,
    request_json,
    request_text,
)
from workflows.activity_models import SearchHit
from workflows.kit.papers import merge_hits, normalized, paper_url
from workflows.record import PAGE_TEXT_LIMIT, SNIPPET_LIMIT, Paper
from workflows.text import trim

PRODUCT = "DeepResearch/0.1 (+https://github.com/deep-research/deep-research)"
_ENTITY = re.compile(r"<!ENTITY", re.I)


def user_agent(contact: str) -> str:
    """The product, and the person to write to when it misbehaves (the indexes' etiquette)."""
    return f"{PRODUCT[:-1]}; mailto:{contact})" if contact else PRODUCT


class Pace:
    """At most one request per `interval_s` in this process: each caller reserves the next free
    moment under a lock and sleeps until it, so concurrent searches queue instead of bursting. A
    429's Retry-After pushes the next free moment back for everyone."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._next = 0.0
        self._lock = threading.Lock()  # not asyncio's: tests may run several event loops

    async def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            at = max(now, self._next)
            self._next = at + self.interval_s
        if at > now:
            await asyncio.sleep(at - now)

    def hold(self, delay: timedelta | None) -> None:
        if delay:
            with self._lock:
                self._next = max(self._next, time.monotonic() + delay.total_seconds())


_paces: dict[str, Pace] = {}
_paces_lock = threading.Lock()


def pace_of(index: str, interval_s: float) -> Pace:
    """This process's pace for `index` (one per index, shared by every search of it)."""
    with _paces_lock:
        pace = _paces.get(index)
        if pace is None or pace.interval_s != interval_s:
            pace = _paces[index] = Pace(interval_s)
        return pace


class ScholarlyIndex:
    """One index's search API at `base_url`, paced at `interval_s` between requests."""

    name: str

    def __init__(
        self,
        base_url: str,
        *,
        contact: str = "",
        interval_s: float = 0.0,
        timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.base_url, self.contact = base_url.rstrip("/"), contact.strip()
        self.pace, self.timeout_s = pace_of(self.name, interval_s), timeout_s

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """At most `max_results` hits, one per work (an index may list a preprint and its
        published version apart: workflows/kit/papers.py merges them)."""
        return merge_hits(await self.find(query, max_results))[: max(1, max_results)]

    async def find(self, query: str, max_results: int) -> list[SearchHit]:
        """The index's hits as it lists them."""
        raise NotImplementedError

    async def get_json(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        await self.pace.wait()
        with self._held():
            return await request_json(self.name, "GET", self.base_url + path, **self._args(params))

    async def get_text(self, path: str, params: dict[str, Any]) -> str:
        await self.pace.wait()
        with self._held():
            return await request_text(self.name, "GET", self.base_url + path, **self._args(params))

    def _args(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "timeout_s": self.timeout_s,
            "params": {k: v for k, v in params.items() if v not in ("", None)},
            "headers": {"User-Agent": user_agent(self.contact)},
        }

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """A 429's Retry-After holds this process's next request to the index as long."""
        try:
            yield
        except ApplicationError as err:
            self.pace.hold(err.next_retry_delay)
            raise

    def xml(self, text: str) -> ET.Element:
        """The reply parsed, or a retryable one-line error (a reply cut short is usually gone on
        the next try; Temporal's attempts bound it)."""
        if _ENTITY.search(text):
            raise malformed(f"{self.name} answered with XML that declares entities (not parsed)")
        try:
            return ET.fromstring(text)
        except ET.ParseError as err:
            raise malformed(f"{self.name} answered with XML that does not parse ({err})") from None


def malformed(message: str) -> ApplicationError:
    return ApplicationError(message, type="SearchMalformedReply")


def paper_hit(index: str, title: Any, paper: Paper, landing: str = "") -> SearchHit | None:
    """The hit of one work: its URL the published DOI's resolver link, else its arXiv page, else
    the index's landing page (workflows/kit/papers.py); None when it has no web address at all."""
    abstract = trim(one_line(paper.abstract), PAGE_TEXT_LIMIT)
    paper = normalized(paper).model_copy(update={"abstract": abstract, "found_in": [index]})
    url = paper_url(paper, landing)
    if not url.startswith(("http://", "https://")):
        return None
    return SearchHit(
        url=url,
        title=one_line(title) or url,
        snippet=trim(abstract, SNIPPET_LIMIT),
        provider=index,
        paper=paper,
    )


def year_of(value: Any) -> int | None:
    """A plausible publication year from an int or a date string ("2021-01-05", "2019 Dec")."""
    if isinstance(value, int) and not isinstance(value, bool):
        year = value
    elif isinstance(value, str) and (found := re.match(r"\s*(\d{4})", value)):
        year = int(found.group(1))
    else:
        return None
    return year if 1000 <= year <= 2999 else None
