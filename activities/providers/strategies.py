"""Web search: the providers the researcher can ask, and the strategy that combines them (seed 004).

Why this shape:

- **Plain HTTP, no vendor SDKs.** Each API is one request and three JSON fields, so each provider
  is a small class on one shared `httpx.AsyncClient` (kept connections skip a TLS handshake per
  search). `trust_env=False`: a stray HTTP(S)_PROXY or .netrc must not silently reroute a call.
- **Errors are classified where they are understood.** What no retry can fix (a missing or rejected
  key, a rejected request, a SearxNG without the json format) is non-retryable, with one line that
  says what to change; what time can fix (429, 5xx, timeouts, refused connections) is retryable,
  and a 429's Retry-After (capped at 60 s) becomes Temporal's next retry delay. Keys travel only
  in headers and are redacted from server text, so no message ever contains one.
- **Strategies switch providers; Temporal retries the search.** `fallback` asks the next provider
  at once rather than after Temporal's backoff; only when every provider has failed does the
  search fail, and then it is retryable unless every failure was permanent.
- **Endpoints are settings.** TAVILY_BASE_URL and BRAVE_BASE_URL (Settings) let a proxy or an
  end-to-end test's double stand in; production leaves them unset.
"""

from __future__ import annotations

import asyncio
import email.utils
import html
import math
import re
import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from enum import Enum
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
from pydantic import SecretStr
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.config import Settings, settings
from workflows.text import trim
from workflows.models import SNIPPET_LIMIT
from workflows.activity_models import SearchHit

PROVIDERS = ("duckduckgo", "searxng", "tavily", "brave", "local")
TAVILY_URL = "https://api.tavily.com"
BRAVE_URL = "https://api.search.brave.com"
#: Seconds one provider may take. The workflow gives a search attempt 30 s (SEARCH_TIMEOUT), so a
#: slow provider is classified, and `fallback` can still ask the next one, before Temporal gives up.
REQUEST_TIMEOUT_S = 10.0
#: Longest wait a 429's Retry-After may ask for; longer waits are Temporal's backoff's business.
RETRY_AFTER_CAP_S = 60.0
BRAVE_MAX_COUNT = 20
_TRACKING_PARAMS = frozenset({"fbclid", "gclid"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_TAG = re.compile(r"<[^>]*>")


class Strategy(str, Enum):
    """How the providers are combined (seed 004's strategy profiles)."""

    CONSERVATIVE = "conservative"  # SEARCH_PROVIDER only
    FALLBACK = "fallback"  # the next provider when one fails or finds nothing
    EXPLORATORY = "exploratory"  # every provider at once, merged by rank


class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, max_results: int) -> list[SearchHit]: ...


# --- the strategy ---------------------------------------------------------------------------------


async def run_search(query: str, max_results: int, config: Settings | None = None) -> list[SearchHit]:
    """Hits for `query` from the configured providers, combined as SEARCH_STRATEGY says."""
    strategy, providers = configured_providers(config or settings())
    max_results = max(1, max_results)
    if strategy is Strategy.EXPLORATORY:
        return await _explore(providers, query, max_results)
    return await _first_with_hits(providers, query, max_results)  # conservative: a chain of one


def check_search_config(config: Settings | None = None) -> None:
    """Fail at worker start, in one line, rather than at a research's first search."""
    configured_providers(config or settings())


def configured_providers(config: Settings) -> tuple[Strategy, list[SearchProvider]]:
    """The strategy and the providers it uses, in order (a missing key fails even a fallback
    provider: a chain that cannot work as configured should be fixed, not silently shortened)."""
    try:
        strategy = Strategy(config.search_strategy.strip().lower())
    except ValueError:
        raise _permanent(
            f"search strategy {config.search_strategy!r} does not exist; "
            f"set SEARCH_STRATEGY to one of: {', '.join(s.value for s in Strategy)}"
        ) from None
    fallbacks = [name for name in config.search_fallback_providers.split(",") if name.strip()]
    names = list(dict.fromkeys(name.strip().lower() for name in [config.search_provider, *fallbacks]))
    if strategy is Strategy.CONSERVATIVE:
        names = names[:1]
    return strategy, [build_provider(name, config) for name in names]


async def _first_with_hits(providers: list[SearchProvider], query: str, max_results: int) -> list[SearchHit]:
    """Providers in order until one finds something. Nothing found by a provider that answered is
    an honest answer: it is returned (empty) rather than retried when the others failed."""
    errors: list[BaseException] = []
    answered = False
    for i, provider in enumerate(providers):
        try:
            hits = await provider.search(query, max_results)
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, the next provider may still answer
            errors.append(exc)
            if i + 1 < len(providers):
                activity.logger.warning("search: %s failed (%s); trying %s", provider.name, exc, providers[i + 1].name)
            continue
        if hits:
            return hits
        answered = True
    if answered or not errors:
        return []
    raise _all_failed(errors)


async def _explore(providers: list[SearchProvider], query: str, max_results: int) -> list[SearchHit]:
    """Every provider at once; their hits interleaved by rank (each provider's best first), one per
    page, at most `max_results` (what the workflow's history budget assumes). Partial failures are
    logged and tolerated: the others' hits are still a good answer."""
    answers = await asyncio.gather(*(p.search(query, max_results) for p in providers), return_exceptions=True)
    found = [a for a in answers if isinstance(a, list)]
    errors = [a for a in answers if isinstance(a, BaseException)]
    if not found:
        raise _all_failed(errors)
    for provider, answer in zip(providers, answers):
        if isinstance(answer, BaseException):
            activity.logger.warning("search: %s failed (%s); using the other providers", provider.name, answer)
    by_rank = (hits[rank] for rank in range(max_results) for hits in found if rank < len(hits))
    return _unique(by_rank, max_results)


def _all_failed(errors: list[BaseException]) -> BaseException:
    """Retryable unless every provider failed for good: one that may recover is worth a retry."""
    if len(errors) == 1:
        return errors[0]
    failures = [e if isinstance(e, ApplicationError) else ApplicationError(f"{type(e).__name__}: {e}") for e in errors]
    permanent = all(f.non_retryable for f in failures)
    delays = [f.next_retry_delay for f in failures if f.next_retry_delay]
    types = {f.type for f in failures}
    return ApplicationError(
        "every search provider failed: " + "; ".join(f.message for f in failures),
        type=types.pop() if len(types) == 1 else "SearchFailed",
        non_retryable=permanent,
        next_retry_delay=None if permanent or not delays else max(delays),
    )


def canonical_url(url: str) -> str:
    """The form that two links to one page share, so a page found twice counts once: lowercase
    scheme and host, no default port, fragment, trailing slash or tracking parameters (utm_*,
    fbclid, gclid), the other query parameters sorted."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url.strip()
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if port is not None and _DEFAULT_PORTS.get(scheme) != port:
        host = f"{host}:{port}"
    userinfo = parts.netloc.rpartition("@")[0]
    params = parse_qsl(parts.query, keep_blank_values=True)
    kept = sorted((k, v) for k, v in params if not k.lower().startswith("utm_") and k.lower() not in _TRACKING_PARAMS)
    netloc = f"{userinfo}@{host}" if userinfo else host
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), urlencode(kept), ""))


# --- the providers --------------------------------------------------------------------------------


def build_provider(name: str, config: Settings) -> SearchProvider:
    """The named provider as configured, or a non-retryable error naming the variable to set."""
    if name == "duckduckgo":
        return DuckDuckGo()
    if name == "searxng":
        if not config.searxng_url:
            raise _permanent("the searxng provider needs SEARXNG_URL, the address of your SearxNG instance")
        return Searxng(config.searxng_url)
    if name == "tavily":
        key = _key(config.tavily_api_key, name, "TAVILY_API_KEY")
        return Tavily(key, base_url=config.tavily_base_url or TAVILY_URL)
    if name == "brave":
        key = _key(config.brave_api_key, name, "BRAVE_API_KEY")
        return Brave(key, base_url=config.brave_base_url or BRAVE_URL)
    if name == "local":
        folder = config.research_corpus_dir
        if folder is not None and not folder.is_dir():
            raise _permanent(
                f"RESEARCH_CORPUS_DIR {str(folder)!r} is not a folder; point it at your documents or unset it"
            )
        return Local(lambda: _open_corpus(config))
    raise _permanent(
        f"search provider {name!r} does not exist; SEARCH_PROVIDER and SEARCH_FALLBACK_PROVIDERS "
        f"take: {', '.join(PROVIDERS)}"
    )


class Searxng:
    """A self-hosted SearxNG instance's JSON API (allowed by `search.formats` in its settings.yml)."""

    name = "searxng"

    def __init__(self, base_url: str, *, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self.base_url, self.timeout_s = base_url.rstrip("/"), timeout_s

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        reply = await _request_json(
            self.name, "GET", f"{self.base_url}/search", self.timeout_s, params={"q": query, "format": "json"}
        )
        rows = ((r.get("url"), r.get("title"), r.get("content")) for r in _rows(reply, "results"))
        return _hits(self.name, rows, max_results)


class Tavily:
    name = "tavily"

    def __init__(self, api_key: str, *, base_url: str = TAVILY_URL, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self._key, self.base_url, self.timeout_s = api_key, base_url.rstrip("/"), timeout_s

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        reply = await _request_json(
            self.name, "POST", f"{self.base_url}/search", self.timeout_s, key_var="TAVILY_API_KEY", secret=self._key,
            json={"query": query, "max_results": max_results, "search_depth": "basic"},
            headers={"Authorization": f"Bearer {self._key}"},
        )
        rows = ((r.get("url"), r.get("title"), r.get("content")) for r in _rows(reply, "results"))
        return _hits(self.name, rows, max_results)


class Brave:
    name = "brave"

    def __init__(self, api_key: str, *, base_url: str = BRAVE_URL, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self._key, self.base_url, self.timeout_s = api_key, base_url.rstrip("/"), timeout_s

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        reply = await _request_json(
            self.name, "GET", f"{self.base_url}/res/v1/web/search", self.timeout_s, key_var="BRAVE_API_KEY",
            secret=self._key, params={"q": query, "count": min(max_results, BRAVE_MAX_COUNT)},
            headers={"X-Subscription-Token": self._key, "Accept": "application/json"},
        )
        # Brave marks the query's words with <strong> and escapes entities in titles and descriptions.
        results = _rows(reply, "web", "results")
        rows = ((r.get("url"), _plain(r.get("title")), _plain(r.get("description"))) for r in results)
        return _hits(self.name, rows, max_results)


class DuckDuckGo:
    """Keyless search through `ddgs`, which is blocking (it runs in a thread) and is the only
    provider that cannot be pointed at a test double: tests replace `ddgs.DDGS`."""

    name = "duckduckgo"

    def __init__(self, *, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        import ddgs  # deferred: the workflow sandbox imports this module for names only
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        def text() -> list[dict[str, Any]]:
            return ddgs.DDGS(timeout=math.ceil(self.timeout_s)).text(query, max_results=max_results)

        try:
            rows = await asyncio.to_thread(text)
        except RatelimitException:
            raise ApplicationError("duckduckgo is rate limiting this machine (429)", type="SearchRateLimited") from None
        except TimeoutException:
            raise _unavailable(f"duckduckgo did not answer within {self.timeout_s:g} s") from None
        except DDGSException as exc:
            if str(exc) == "No results found.":  # how ddgs says that every engine answered with nothing
                return []
            raise _unavailable(f"duckduckgo search failed: {_one_line(str(exc))[:200]}") from None
        return _hits(self.name, ((r.get("href"), r.get("title"), r.get("body")) for r in _rows(rows)), max_results)


class Local:
    """The local corpus (activities/corpus.py), opened on first search: building its index is slow."""

    name = "local"

    def __init__(self, corpus: Callable[[], Any]) -> None:
        self._corpus = corpus

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        hits = await asyncio.to_thread(lambda: self._corpus().search(query, max_results))
        return _unique(hits, max_results)


def _open_corpus(config: Settings) -> Any:
    from activities.corpus import open_corpus  # deferred: SQLite is the worker's business, not the sandbox's

    return open_corpus(config.research_corpus_dir, config.research_index_dir)


# --- HTTP and errors ------------------------------------------------------------------------------

_shared_http: tuple[asyncio.AbstractEventLoop, httpx.AsyncClient] | None = None


def _http() -> httpx.AsyncClient:
    """One client per process, made in the event loop that uses it (an httpx client's pooled
    connections belong to one loop; tests that run several loops get one client each)."""
    global _shared_http
    loop = asyncio.get_running_loop()
    if _shared_http is None or _shared_http[0] is not loop or _shared_http[1].is_closed:
        client = httpx.AsyncClient(
            trust_env=False, timeout=REQUEST_TIMEOUT_S, headers={"User-Agent": settings().crawl_user_agent}
        )
        _shared_http = (loop, client)
    return _shared_http[1]


async def close_http() -> None:
    """Close the shared client (worker shutdown, tests)."""
    global _shared_http
    if _shared_http is not None:
        await _shared_http[1].aclose()
        _shared_http = None


async def _request_json(
    provider: str, method: str, url: str, timeout_s: float, *, key_var: str = "", secret: str = "", **kwargs: Any
) -> dict[str, Any]:
    try:
        response = await _http().request(method, url, timeout=timeout_s, **kwargs)
    except httpx.TimeoutException:
        raise _unavailable(f"{provider} did not answer within {timeout_s:g} s") from None
    except httpx.TransportError as exc:
        where = f"{provider} at {url} ({type(exc).__name__})"
        raise _unavailable(f"could not connect to {where}: is it up and the URL right?") from None
    if response.status_code != 200:
        raise _status_error(provider, response, key_var, secret)
    try:
        reply = response.json()
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        raise _unavailable(f"{provider} answered with something that is not a JSON object")
    return reply


def _status_error(provider: str, response: httpx.Response, key_var: str, secret: str) -> ApplicationError:
    status = response.status_code
    if status == 429:
        delay = retry_after(response.headers)
        return ApplicationError(f"{provider} is rate limiting (429)", type="SearchRateLimited", next_retry_delay=delay)
    text = _one_line(_TAG.sub(" ", response.text))
    detail = f": {text.replace(secret, '[key]') if secret else text}"[:200] if text else ""
    if status == 408 or status >= 500:
        return _unavailable(f"{provider} is unavailable ({status}){detail}")
    if provider == Searxng.name and status == 403:
        return _permanent(
            "searxng refused format=json (403): the instance must enable the json format in its settings.yml "
            "(search.formats: [html, json])"
        )
    if status in (401, 403) and key_var:
        return _permanent(f"{provider} rejected the API key ({status}): check {key_var}", "SearchAuthError")
    if 300 <= status < 400:
        where = response.headers.get("location", "elsewhere")
        return _permanent(f"{provider} redirects to {where} ({status}); configure that address instead")
    return _permanent(f"{provider} rejected the request ({status}){detail}", "SearchRequestError")


def retry_after(headers: httpx.Headers) -> timedelta | None:
    """The wait a 429's Retry-After asks for (seconds or an HTTP date), capped at
    RETRY_AFTER_CAP_S; None (Temporal's own backoff) when it says nothing usable."""
    value = headers.get("retry-after", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError):
            return None
    return timedelta(seconds=min(seconds, RETRY_AFTER_CAP_S)) if seconds > 0 else None


def _permanent(message: str, kind: str = "SearchConfigError") -> ApplicationError:
    return ApplicationError(message, type=kind, non_retryable=True)


def _unavailable(message: str) -> ApplicationError:
    return ApplicationError(message, type="SearchUnavailable")


def _key(secret: SecretStr | None, provider: str, var: str) -> str:
    key = secret.get_secret_value().strip() if secret else ""
    if not key:
        raise _permanent(f"the {provider} provider needs an API key: set {var}")
    return key



def _rows(reply: Any, *path: str) -> list[dict[str, Any]]:
    """The result objects at `path` (none when the reply has none: nothing found)."""
    for key in path:
        reply = reply.get(key) if isinstance(reply, dict) else None
    return [row for row in reply if isinstance(row, dict)] if isinstance(reply, list) else []


def _hits(provider: str, rows: Iterable[tuple[Any, Any, Any]], max_results: int) -> list[SearchHit]:
    """Web pages only (a provider may list other schemes), one per page, snippets trimmed."""
    hits = (
        SearchHit(url=url, title=_one_line(title) or url, snippet=trim(_one_line(snippet), SNIPPET_LIMIT),
                  provider=provider)
        for url, title, snippet in rows
        if isinstance(url, str) and url.startswith(("http://", "https://"))
    )
    return _unique(hits, max_results)


def _unique(hits: Iterable[SearchHit], max_results: int) -> list[SearchHit]:
    kept: list[SearchHit] = []
    seen: set[str] = set()
    for hit in hits:
        if len(kept) >= max_results:
            break
        if (key := canonical_url(hit.url)) not in seen:
            seen.add(key)
            kept.append(hit)
    return kept


def _plain(value: Any) -> str:
    return html.unescape(_TAG.sub("", value)) if isinstance(value, str) else ""


def _one_line(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""
