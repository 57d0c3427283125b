"""URLs in spans without their secrets: what leaves for the collector never holds a
query string, a fragment, a user:password, or the path of a URL whose path is the secret.

Why here and not in OpenTelemetry's settings: its own URL redaction (opentelemetry-util-http's
`redact_url`) removes credentials and a few known signature parameters only, and no
OTEL_INSTRUMENTATION_* setting drops a whole query string or a path. Queries carry the sign-in's
`code` and `state`, a search's question, a page's tokens; a webhook's URL is its own secret, path
and all (Slack's, Teams' and most receivers'). So the exporter is wrapped (`exporter(inner)`):
every string attribute of every span and span event (the FastAPI and httpx instrumentations' `http.url`,
`url.full`, `http.target`, exception messages that quote a URL...) is rewritten before export, and
`url.query` is left out. A span is an immutable record once it ends; the copy sent is made anew.

Secret paths: code that sends to a URL whose path is a secret (activities/notify/webhook.py)
does it inside `secret_path()`; the httpx instrumentation's request hook (`mark_secret_path`)
marks that request's span with SECRET_PATH, and the exporter keeps only the URL's scheme and host.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:  # the SDK itself is imported only where it is used
    from opentelemetry.propagators.textmap import TextMapPropagator
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Status

#: The attribute that marks a span whose URLs' paths are secrets.
SECRET_PATH = "deep_research.url.secret_path"
#: What stands where a removed part was.
REDACTED = "REDACTED"
#: Attributes that are nothing but a query string: left out.
QUERY_KEYS = frozenset({"url.query", "http.query"})
#: Attributes that are a path with its query (`/auth/callback?code=...`).
TARGET_KEYS = frozenset({"http.target", "url.path"})
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")

_secret: ContextVar[bool] = ContextVar("secret_path", default=False)


@contextmanager
def secret_path() -> Iterator[None]:
    """HTTP requests made inside go to a URL whose path is a secret: their spans keep the host."""
    token = _secret.set(True)
    try:
        yield
    finally:
        _secret.reset(token)


def mark_secret_path(span: Any, _request: Any) -> None:
    """The httpx instrumentation's request hook: marks the span of a request made in `secret_path`."""
    if _secret.get() and span.is_recording():
        span.set_attribute(SECRET_PATH, True)


async def mark_secret_path_async(span: Any, request: Any) -> None:
    mark_secret_path(span, request)


def url(text: str, secret_path: bool = False) -> str:
    """One URL without user:password, query and fragment (and without its path when SECRET_PATH)."""
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return REDACTED
    if ":" in host:
        host = f"[{host}]"
    path = f"/{REDACTED}" if secret_path and parts.path not in ("", "/") else parts.path
    query = REDACTED if parts.query else ""
    return urlunsplit((parts.scheme, host + port, path, query, ""))


def text(value: str, secret_path: bool = False) -> str:
    """VALUE with every URL in it redacted."""
    return _URL.sub(lambda m: url(m.group(0), secret_path), value)


def target(value: str, secret_path: bool = False) -> str:
    """A request target (`/path?query`) without its query (and as `/REDACTED` for a secret path)."""
    path, sep, _ = value.partition("?")
    if secret_path and path not in ("", "/"):
        path = f"/{REDACTED}"
    return path + (f"?{REDACTED}" if sep else "")


def attributes(found: Mapping[str, Any] | None, secret_path: bool = False) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in (found or {}).items():
        if key in QUERY_KEYS:
            continue
        if isinstance(value, str):
            value = target(value, secret_path) if key in TARGET_KEYS else text(value, secret_path)
        elif isinstance(value, Sequence) and any(isinstance(v, str) for v in value):
            value = tuple(text(v, secret_path) if isinstance(v, str) else v for v in value)
        kept[key] = value
    return kept


def redacted(span: ReadableSpan) -> ReadableSpan:
    """A copy of the finished SPAN (a `ReadableSpan`) with its URLs redacted."""
    from opentelemetry.sdk.trace import Event, ReadableSpan

    secret = bool((span.attributes or {}).get(SECRET_PATH))
    return ReadableSpan(
        name=text(span.name, secret),
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attributes(span.attributes, secret),
        events=[Event(e.name, attributes(e.attributes, secret), e.timestamp) for e in span.events],
        links=span.links,
        kind=span.kind,
        status=_status(span.status),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def _status(status: Status) -> Status:
    from opentelemetry.trace import Status

    if not status.description:
        return status
    return Status(status.status_code, text(status.description))


def exporter(inner: SpanExporter) -> SpanExporter:
    """INNER (a `SpanExporter`) sending redacted copies of the spans it is given."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class RedactingExporter(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return inner.export([redacted(s) for s in spans])

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return bool(inner.force_flush(timeout_millis))

    return RedactingExporter()


def sealed() -> TextMapPropagator:
    """The propagator of the service's edge: it reads no trace context from a request (a client's
    `traceparent` and `baggage` start nothing here) and writes none into one (a crawled site, a
    search provider, a webhook receiver learn nothing of our traces). Temporal's interceptor has
    its own, so the trace still goes from a start to the workflow and its activities."""
    from opentelemetry.context import Context
    from opentelemetry.propagators.textmap import TextMapPropagator

    class Sealed(TextMapPropagator):
        def extract(self, carrier: Any, context: Any = None, getter: Any = None) -> Any:
            return context if context is not None else Context()

        def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:
            return None

        @property
        def fields(self) -> set[str]:
            return set()

    return Sealed()
