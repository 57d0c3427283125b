"""What the search providers share: one HTTP client, JSON requests whose failures are classified
where they are understood, and the helpers that turn a provider's rows into hits.

- **Plain HTTP, no vendor SDKs.** Each API is one request and three JSON fields, so each provider
  is a small class on one shared `httpx.AsyncClient` (kept connections skip a TLS handshake per
  search). `trust_env=False`: a stray HTTP(S)_PROXY or .netrc must not silently reroute a call.
- **Errors are classified where they are understood.** What no retry can fix (a missing or rejected
  key, a rejected request, a SearxNG without the json format) is non-retryable, with one line that
  says what to change; what time can fix (429, 5xx, timeouts, refused connections) is retryable,
  and a 429's Retry-After (activities/retry_after.py, capped at 60 s) becomes Temporal's next retry
  delay.
- **No secret in any message.** Keys travel only in headers. A configured endpoint may carry
  credentials (`http://user:password@host`, `?api_key=...`): they are sent as Basic auth, never
  in the request URL, and every error text passes `workflows.text.redaction.redact` with the key and
  the URL's secrets, so no message or log line (httpx's own included) ever contains one.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import httpx
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError

from activities.retry_after import retry_after
from settings import settings
from workflows.activity_models import SearchHit
from workflows.models import SNIPPET_LIMIT
from workflows.text import trim
from workflows.text.redaction import redact

#: Seconds one provider may take. The workflow gives a search attempt 30 s (SEARCH_TIMEOUT), so a
#: slow provider is classified, and `fallback` can still ask the next one, before Temporal gives up.
REQUEST_TIMEOUT_S = 10.0
_TRACKING_PARAMS = frozenset({"fbclid", "gclid"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_TAG = re.compile(r"<[^>]*>")


class _RedactedLog(logging.Filter):
    """httpx logs each request's URL at INFO (a configured `?api_key=` would be in that line) and
    httpcore the response headers at DEBUG (a redirect's Location may echo credentials)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        return True


for _name in (
    "httpx",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.connection",
    "httpcore.proxy",
):
    logging.getLogger(_name).addFilter(_RedactedLog())

_shared_http: tuple[asyncio.AbstractEventLoop, httpx.AsyncClient] | None = None


def _http() -> httpx.AsyncClient:
    """One client per process, made in the event loop that uses it (an httpx client's pooled
    connections belong to one loop; tests that run several loops get one client each)."""
    global _shared_http
    loop = asyncio.get_running_loop()
    if _shared_http is None or _shared_http[0] is not loop or _shared_http[1].is_closed:
        client = httpx.AsyncClient(
            trust_env=False,
            timeout=REQUEST_TIMEOUT_S,
            headers={"User-Agent": settings().crawl.user_agent},
        )
        _shared_http = (loop, client)
    return _shared_http[1]


async def close_http() -> None:
    """Close the shared client (worker shutdown, tests)."""
    global _shared_http
    if _shared_http is not None:
        await _shared_http[1].aclose()
        _shared_http = None


async def request_json(
    provider: str,
    method: str,
    url: str,
    timeout_s: float,
    *,
    key_var: str = "",
    secret: str = "",
    **kwargs: Any,
) -> dict[str, Any]:
    response = await _respond(
        provider, method, url, timeout_s, key_var=key_var, secret=secret, **kwargs
    )
    try:
        reply = response.json()
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        raise unavailable(f"{provider} answered with something that is not a JSON object")
    return reply


async def request_text(
    provider: str, method: str, url: str, timeout_s: float, **kwargs: Any
) -> str:
    """The body of a 200 as text (an XML feed: arXiv, PubMed), failures classified as for JSON."""
    response = await _respond(provider, method, url, timeout_s, **kwargs)
    return response.text


async def _respond(
    provider: str,
    method: str,
    url: str,
    timeout_s: float,
    *,
    key_var: str = "",
    secret: str = "",
    **kwargs: Any,
) -> httpx.Response:
    secrets = [secret, *url_secrets(url)]
    try:
        target = httpx.URL(url)
        if target.userinfo:  # what httpx would do with them, without a password in the URL it logs
            kwargs.setdefault("auth", httpx.BasicAuth(target.username, target.password))
            target = target.copy_with(username=None, password=None)
        response = await _http().request(method, target, timeout=timeout_s, **kwargs)
    except httpx.TimeoutException:
        raise unavailable(f"{provider} did not answer within {timeout_s:g} s") from None
    except httpx.TransportError as exc:
        where = f"{provider} at {url} ({type(exc).__name__})"
        raise unavailable(
            f"could not connect to {where}: is it up and the URL right?", secrets
        ) from None
    except (httpx.InvalidURL, UnicodeError) as exc:
        message = f"{provider}: the configured address {url} is not a valid URL ({exc})"
        raise permanent(message, secrets=secrets) from None
    if response.status_code != 200:
        raise status_error(provider, response, key_var, secrets)
    return response


def status_error(
    provider: str, response: httpx.Response, key_var: str, secrets: list[str]
) -> ApplicationError:
    status = response.status_code
    if status == 429:
        delay = retry_after(response.headers)
        return ApplicationError(
            f"{provider} is rate limiting (429)", type="SearchRateLimited", next_retry_delay=delay
        )
    text = one_line(_TAG.sub(" ", redact(response.text, secrets)))
    detail = f": {text}"[:200] if text else ""
    if status == 408 or status >= 500:
        return unavailable(f"{provider} is unavailable ({status}){detail}", secrets)
    if provider == "searxng" and status == 403:
        return permanent(
            "searxng refused format=json (403): the instance must enable the json format in its settings.yml "
            "(search.formats: [html, json])"
        )
    if status in (401, 403) and key_var:
        return permanent(
            f"{provider} rejected the API key ({status}): check {key_var}", "SearchAuthError"
        )
    if 300 <= status < 400:
        where = response.headers.get("location", "elsewhere")
        return permanent(
            f"{provider} redirects to {where} ({status}); configure that address instead",
            secrets=secrets,
        )
    return permanent(
        f"{provider} rejected the request ({status}){detail}", "SearchRequestError", secrets
    )


def url_secrets(url: str) -> list[str]:
    """What of a configured URL is secret, as written and decoded: its userinfo's password (and
    name), and its query's values (a configured endpoint has a query only to authenticate)."""
    try:
        parts = urlsplit(url)
        found = [parts.username, parts.password, *(v for _, v in parse_qsl(parts.query))]
    except ValueError:
        return []
    return [text for value in found if value for text in {value, unquote(value)}]


def permanent(
    message: str, kind: str = "SearchConfigError", secrets: Iterable[str] = ()
) -> ApplicationError:
    return ApplicationError(redact(message, secrets), type=kind, non_retryable=True)


def unavailable(message: str, secrets: Iterable[str] = ()) -> ApplicationError:
    return ApplicationError(redact(message, secrets), type="SearchUnavailable")


def api_key(secret: SecretStr | None, provider: str, var: str) -> str:
    key = secret.get_secret_value().strip() if secret else ""
    if not key:
        raise permanent(f"the {provider} provider needs an API key: set {var}")
    return key


def result_rows(reply: Any, *path: str) -> list[dict[str, Any]]:
    """The result objects at `path` (none when the reply has none: nothing found)."""
    for key in path:
        reply = reply.get(key) if isinstance(reply, dict) else None
    return [row for row in reply if isinstance(row, dict)] if isinstance(reply, list) else []


def to_hits(
    provider: str, rows: Iterable[tuple[Any, Any, Any]], max_results: int
) -> list[SearchHit]:
    """Web pages only (a provider may list other schemes), one per page, snippets trimmed."""
    hits = (
        SearchHit(
            url=url,
            title=one_line(title) or url,
            snippet=trim(one_line(snippet), SNIPPET_LIMIT),
            provider=provider,
        )
        for url, title, snippet in rows
        if isinstance(url, str) and url.startswith(("http://", "https://"))
    )
    return unique_hits(hits, max_results)


def unique_hits(hits: Iterable[SearchHit], max_results: int) -> list[SearchHit]:
    kept: list[SearchHit] = []
    seen: set[str] = set()
    for hit in hits:
        if len(kept) >= max_results:
            break
        if (key := canonical_url(hit.url)) not in seen:
            seen.add(key)
            kept.append(hit)
    return kept


def plain(value: Any) -> str:
    return html.unescape(_TAG.sub("", value)) if isinstance(value, str) else ""


def one_line(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


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
    kept = sorted(
        (k, v)
        for k, v in params
        if not k.lower().startswith("utm_") and k.lower() not in _TRACKING_PARAMS
    )
    netloc = f"{userinfo}@{host}" if userinfo else host
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), urlencode(kept), ""))
