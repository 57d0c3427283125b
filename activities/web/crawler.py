"""Fetching web pages for the researcher: politely, safely, within fixed limits.

The URLs come from search engines and from an LLM, so every one is hostile until checked.
`fetch(url)` returns the page's raw bytes and what is known about them (final URL, content type,
charset, truncated); turning bytes into text is activities/web/extraction.py's job
(with activities/web/charset.py); robots.txt rules and their cache live in activities/web/robots.py.

What one fetch promises:
- robots.txt of every origin it touches (the page and each redirect hop) is read once per process
  and obeyed, asked with the same User-Agent as the page (RFC 9309: 4xx means allow all; 5xx or
  unreachable means disallow all, remembered for a minute only).
- No loopback, private or cloud metadata address is ever connected to (activities/web/netguard.py).
- Redirects are followed by hand, at most 5, each hop checked from scratch.
- CRAWL_CONCURRENCY pages at once; CRAWL_PER_HOST requests at once to one host, their starts at
  least CRAWL_HOST_GAP_S apart; CRAWL_PAGE_TIMEOUT_S for the whole fetch (robots.txt, redirects,
  body), so a server that trickles bytes cannot hold a worker; CRAWL_MAX_BYTES of decoded body.
- Only documents a researcher can read (HTML, XHTML, plain text, Markdown, PDF), judged by the
  first bytes as much as by the Content-Type header, which often lies.

Per-page problems raise `CrawlError`: a one-line `reason` for the report and `retryable` for the
activity (5xx, timeouts and dropped connections are worth a Temporal retry; refusals are not).
"""

from __future__ import annotations

import asyncio
import contextvars
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

import httpx
from protego import Protego

from activities.web.charset import (
    PDF,
    READABLE_TYPES,
    SNIFF_BYTES,
    BodyDecoder,
    decode_text,
    detect_charset,
    document_type,
    parse_content_type,
)
from activities.web.errors import CrawlError, PageTimeout
from activities.web.netguard import AddressGuard, Refused, Resolver, check_url, guarded_transport
from activities.web.robots import (
    ROBOTS_FAILURE_TTL_S,
    ROBOTS_TTL_S,
    RobotsCache,
    RobotsRules,
    robots_rules,
)
from activities.web.urls import (
    next_hop,
    port_of,
    redirect_location,
    shown,
    size_text,
    take_location,
    usable,
)
from settings import Settings, settings

__all__ = [
    "PDF",
    "READABLE_TYPES",
    "Crawler",
    "CrawlError",
    "FetchedPage",
    "PageTimeout",
    "decode_text",
    "detect_charset",
    "document_type",
    "fetch",
    "reset",
]

T = TypeVar("T")

MAX_REDIRECTS = 5
ACCEPT = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1"


@dataclass(frozen=True)
class FetchedPage:
    url: str  #: after redirects
    status: int
    content_type: str  #: one of READABLE_TYPES, sniffed from the bytes when the header lies
    body: bytes  #: decoded from gzip/deflate, at most CRAWL_MAX_BYTES
    charset: str | None  #: the text encoding (None for PDF); `decode_text(body, charset)` reads it
    truncated: bool = False  #: an HTML or text page longer than CRAWL_MAX_BYTES, cut there

    def text(self) -> str:
        return decode_text(self.body, self.charset)


class Crawler:
    """One HTTP client, the robots.txt cache and the limits of a worker process.

    The module keeps one (`fetch` uses it); tests build their own with their own Settings.
    Concurrent fetches of the same URL share one request (the workflow already avoids fetching a
    URL twice in a research; this catches two researches reading the same page at the same time).
    """

    def __init__(self, config: Settings, *, resolver: Resolver | None = None) -> None:
        self.config = config
        self.guard = AddressGuard(config.crawl.allow_private, resolver)
        self._client: httpx.AsyncClient | None = None
        self._slots = asyncio.Semaphore(config.crawl.concurrency)
        self._hosts: dict[str, _HostGate] = {}
        self._robots = RobotsCache()
        self._pending_pages: dict[str, asyncio.Future[FetchedPage]] = {}
        self._pending_robots: dict[str, asyncio.Future[RobotsRules]] = {}

    async def fetch(self, url: str) -> FetchedPage:
        """The page at `url` (after redirects), or CrawlError saying why not."""
        try:
            target = usable(httpx.URL(url))
        except (httpx.InvalidURL, UnicodeError, TypeError) as exc:
            raise CrawlError(f"not a valid URL ({shown(str(exc))})") from None
        return await _shared(self._pending_pages, str(target), lambda: self._fetch(target))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _http(self) -> httpx.AsyncClient:
        """Created on first use, inside the worker's event loop, then shared by every fetch."""
        if self._client is None:
            crawl = self.config.crawl
            limits = httpx.Limits(
                max_connections=crawl.concurrency * 2,
                max_keepalive_connections=crawl.concurrency,
            )
            self._client = httpx.AsyncClient(
                transport=guarded_transport(self.guard, limits),
                trust_env=False,  # no proxy or netrc from the environment: the guard must see the real target
                follow_redirects=False,  # each hop is checked by `_follow`
                timeout=httpx.Timeout(crawl.page_timeout_s),
                headers={
                    "User-Agent": crawl.user_agent,
                    "Accept": ACCEPT,
                    "Accept-Encoding": "gzip, deflate",
                },
                event_hooks={"response": [take_location]},
            )
        return self._client

    async def _fetch(self, url: httpx.URL) -> FetchedPage:
        timeout = self.config.crawl.page_timeout_s
        async with self._slots:  # waiting for a free slot does not count against the page's time
            try:
                async with asyncio.timeout(timeout) as deadline:
                    token = _DEADLINE.set(deadline)
                    try:
                        return await self._follow(url)
                    finally:
                        _DEADLINE.reset(token)
            except (TimeoutError, httpx.TimeoutException):
                raise PageTimeout(f"timed out after {timeout:g} s", retryable=True) from None
            except Refused as exc:
                raise CrawlError(exc.reason) from None
            except socket.gaierror as exc:
                raise CrawlError(
                    f"could not resolve a host ({exc.strerror})", retryable=True
                ) from None
            except httpx.TransportError as exc:
                raise CrawlError(
                    f"connection failed ({type(exc).__name__}: {exc})", retryable=True
                ) from None
            except (
                httpx.InvalidURL,
                UnicodeError,
            ) as exc:  # a URL httpx or IDNA cannot use, however it came
                raise CrawlError(f"not a valid URL ({shown(str(exc))})") from None

    async def _follow(self, url: httpx.URL) -> FetchedPage:
        seen = {str(url)}
        for _ in range(MAX_REDIRECTS + 1):
            await self._admit(url)
            async with self._request(url) as response:
                location = redirect_location(response)
                if location is None:
                    return await self._read(url, response)
            try:
                url = next_hop(url, location)
            except (httpx.InvalidURL, UnicodeError):  # e.g. `Location: http:\\host\path`
                raise CrawlError(f"redirect to an invalid URL ({shown(location)})") from None
            if str(url) in seen:
                raise CrawlError(f"redirect loop (back to {url})")
            seen.add(str(url))
        raise CrawlError(f"too many redirects (more than {MAX_REDIRECTS})")

    async def _admit(self, url: httpx.URL) -> None:
        """Refuse before sending anything: scheme, credentials, address, then robots.txt."""
        check_url(url)
        try:
            await self.guard.addresses(url.raw_host.decode("ascii"), port_of(url))
        except socket.gaierror as exc:
            raise CrawlError(
                f"could not resolve {url.host} ({exc.strerror})",
                retryable=exc.errno == socket.EAI_AGAIN,
            ) from None
        rules = await self._robots_for(url)
        if isinstance(rules, str):
            raise CrawlError(f"blocked: {rules}")
        if isinstance(rules, Protego) and not rules.can_fetch(
            str(url), self.config.crawl.user_agent
        ):
            raise CrawlError("blocked by robots.txt")

    @asynccontextmanager
    async def _request(self, url: httpx.URL) -> AsyncIterator[httpx.Response]:
        """A streamed GET, inside the host's slot and gap; the body is read (or not) by the caller.
        Waiting for the host's turn (politeness, not the page's slowness) moves the page's
        deadline on by as long: several steps reading one site at once must not time it out."""
        loop = asyncio.get_running_loop()
        asked = loop.time()
        async with self._gate(url.host).slot():
            deadline = _DEADLINE.get()
            waited = loop.time() - asked
            when = deadline.when() if deadline is not None and waited > 0 else None
            if deadline is not None and when is not None:
                deadline.reschedule(when + waited)
            client = self._http()
            response = await client.send(client.build_request("GET", url), stream=True)
            try:
                yield response
            finally:
                await response.aclose()

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchedPage:
        """The body, counted as it is decoded, typed by its first bytes.

        Over the byte cap an HTML or text page is cut and kept (`truncated`): its main text almost
        always comes first and lxml reads a cut document; a cut PDF is unreadable (its index sits at
        the end), so it is refused.
        """
        status = response.status_code
        if not 200 <= status < 300:
            raise CrawlError(f"HTTP {status}", retryable=status >= 500 or status in (408, 425, 429))
        declared, charset = parse_content_type(response.headers.get("content-type"))
        cap = self.config.crawl.max_bytes
        too_large = CrawlError(f"larger than {size_text(cap)}")
        length = response.headers.get("content-length", "")
        if declared == PDF and length.isdigit() and int(length) > cap:
            raise too_large
        body, truncated, kind = bytearray(), False, None
        decoder = BodyDecoder(response.headers.get("content-encoding"))
        async for raw in response.aiter_raw():
            body += decoder.decode(raw, cap + 1 - len(body))
            if kind is None and len(body) >= SNIFF_BYTES:
                kind = document_type(
                    bytes(body[:SNIFF_BYTES]), declared
                )  # junk is refused before it is all read
            if len(body) > cap:
                truncated = True
                break
        kind = kind or document_type(bytes(body[:SNIFF_BYTES]), declared)
        if truncated:
            if kind == PDF:
                raise too_large
            del body[cap:]
        text_charset = None if kind == PDF else detect_charset(bytes(body), charset)
        return FetchedPage(str(url), status, kind, bytes(body), text_charset, truncated)

    # --- robots.txt ------------------------------------------------------------------------------

    async def _robots_for(self, url: httpx.URL) -> RobotsRules:
        """The robots.txt of the URL's origin (scheme, host, port), read once and remembered."""
        origin = f"{url.scheme}://{url.raw_host.decode('ascii')}:{port_of(url)}"
        cached = self._robots.get(origin, asyncio.get_running_loop().time())
        if cached is not None:
            return cached
        robots_url = url.copy_with(raw_path=b"/robots.txt", fragment=None)
        return await _shared(
            self._pending_robots, origin, lambda: self._load_robots(origin, robots_url)
        )

    async def _load_robots(self, origin: str, url: httpx.URL) -> RobotsRules:
        """Read and remember, even when the page that asked has given up meanwhile."""
        rules, ttl = await self._read_robots(url)
        self._robots.put(origin, rules, asyncio.get_running_loop().time() + ttl)
        return rules

    async def _read_robots(self, url: httpx.URL) -> tuple[RobotsRules, float]:
        try:
            async with asyncio.timeout(self.config.crawl.page_timeout_s):
                for _ in range(MAX_REDIRECTS + 1):
                    check_url(url)
                    async with self._request(url) as response:
                        location = redirect_location(response)
                        if location is None:
                            return await robots_rules(response), ROBOTS_TTL_S
                    url = next_hop(url, location)
        except (
            Refused,
            CrawlError,
            OSError,
            TimeoutError,
            httpx.HTTPError,
            httpx.InvalidURL,
            UnicodeError,
        ) as exc:
            reason = exc.reason if isinstance(exc, Refused | CrawlError) else type(exc).__name__
            return f"robots.txt unreachable ({reason})", ROBOTS_FAILURE_TTL_S
        return True, ROBOTS_TTL_S  # RFC 9309: after 5 redirects robots.txt counts as unavailable

    def _gate(self, host: str) -> _HostGate:
        gate = self._hosts.get(host)
        if gate is None:
            if len(self._hosts) >= 256:  # forget hosts nobody is waiting on
                now = asyncio.get_running_loop().time()
                self._hosts = {h: g for h, g in self._hosts.items() if not g.idle(now)}
            gate = self._hosts[host] = _HostGate(
                self.config.crawl.per_host, self.config.crawl.host_gap_s
            )
        return gate


#: The page's deadline (`asyncio.timeout` of `_fetch`), so waiting for a host's turn can move it on.
_DEADLINE: contextvars.ContextVar[asyncio.Timeout | None] = contextvars.ContextVar(
    "page_deadline", default=None
)


class _HostGate:
    """At most `per_host` requests at once to one host, their starts at least `gap_s` apart."""

    def __init__(self, per_host: int, gap_s: float) -> None:
        self._slots = asyncio.Semaphore(per_host)
        self._turn = asyncio.Lock()
        self._gap_s = gap_s
        self._next_start = 0.0
        self._users = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        self._users += 1
        try:
            async with self._slots:
                async with self._turn:
                    loop = asyncio.get_running_loop()
                    if (delay := self._next_start - loop.time()) > 0:
                        await asyncio.sleep(delay)
                    self._next_start = loop.time() + self._gap_s
                yield
        finally:
            self._users -= 1

    def idle(self, now: float) -> bool:
        return self._users == 0 and self._next_start <= now


async def _shared(
    pending: dict[str, asyncio.Future[T]], key: str, start: Callable[[], Awaitable[T]]
) -> T:
    """Run `start()` once for every concurrent caller with the same key; each awaits the same task.

    The task is shielded: one caller cancelled (its activity timed out) does not fail the others.
    It ends by itself, within its own time limit.
    """
    task = pending.get(key)
    if task is None:
        task = pending[key] = asyncio.ensure_future(start())

        def forget(done: asyncio.Future[T]) -> None:
            if pending.get(key) is done:
                del pending[key]
            if not done.cancelled():
                done.exception()  # retrieved, even if every caller has gone

        task.add_done_callback(forget)
    return await asyncio.shield(task)


# --- the worker's crawler -----------------------------------------------------------------------

_default: Crawler | None = None


async def fetch(url: str, config: Settings | None = None) -> FetchedPage:
    """Fetch one page with the process-wide crawler (raises CrawlError).

    `config` defaults to the worker's settings; passing a different Settings object starts a new
    crawler (fresh caches and limits), which suits scripts, not concurrent callers.
    """
    global _default
    config = config or settings()
    if _default is None or _default.config is not config:
        if _default is not None:
            await _default.aclose()
        _default = Crawler(config)
    return await _default.fetch(url)


async def reset() -> None:
    """Close and forget the process-wide crawler (tests)."""
    global _default
    if _default is not None:
        await _default.aclose()
        _default = None
