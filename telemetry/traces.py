"""OpenTelemetry traces, on when OTEL_EXPORTER_OTLP_ENDPOINT is set (the standard variable; OTLP
over HTTP, spans POSTed to ENDPOINT/v1/traces): the web app's requests, the starts made by the
CLI and the MCP server (`python -m starter` configures it too), the workflow and its activities
(Temporal's TracingInterceptor, on the client and so on the worker too, carrying the trace from
the request or command that started a research through every activity on any worker), and the
activities' HTTP calls (httpx: the LLM endpoint, search providers, pages read).

Unset, nothing is set up and nothing is sent. OTEL_SERVICE_NAME names the process (default: what
the caller says it is); the exporter reads the other standard OTEL_EXPORTER_OTLP_* variables
(headers, timeout, compression) itself.

What spans say of URLs is redacted before it leaves (telemetry/redaction.py: no query strings, no
webhook paths). No trace context crosses the service's edge: the global propagator is
none, so the web app takes no `traceparent` or `baggage` from its clients, and no outgoing HTTP
request (a crawled page, a search provider, a webhook, the LLM endpoint) carries ours; Temporal's
interceptor carries the trace from the start to the workflow and its activities with a propagator
of its own.

Langfuse (activities/tracing.py) finds this tracer provider already registered and adds its own
processor to it: Langfuse still exports only its own spans (its default filter: its SDK's spans
and `gen_ai.*` ones), and the collector receives Langfuse's generation spans beside these.
"""

from __future__ import annotations

import os
from typing import Any

from telemetry import redaction

ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"

_PROVIDER: Any = None


def endpoint() -> str | None:
    value = os.environ.get(ENDPOINT, "").strip()
    return value or None


def configure(service: str) -> bool:
    """Register the process's tracer provider exporting to the OTLP endpoint, and trace httpx.
    Once per process; False when no endpoint is set."""
    global _PROVIDER
    if _PROVIDER is not None:
        return True
    if endpoint() is None:
        return False
    from opentelemetry import propagate, trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME", "").strip() or service
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    provider.add_span_processor(BatchSpanProcessor(redaction.exporter(OTLPSpanExporter())))
    trace.set_tracer_provider(provider)
    propagate.set_global_textmap(redaction.sealed())  # no trace context in or out: see above
    HTTPXClientInstrumentor().instrument(
        request_hook=redaction.mark_secret_path,
        async_request_hook=redaction.mark_secret_path_async,
    )
    _PROVIDER = provider
    return True


def client_interceptors() -> list[Any]:
    """Temporal's tracing interceptor when traces are on: given to the client, it traces starting,
    signalling and querying a workflow there, and the workflow and its activities on a worker.
    Workflow spans always (`always_create_workflow_spans`): by default the interceptor makes them
    only under a start that was traced, so a research started by an untraced client or by a
    standing research's schedule had its activities' spans and no `RunWorkflow` span above them."""
    if _PROVIDER is None:
        return []
    from temporalio.contrib.opentelemetry import TracingInterceptor

    return [TracingInterceptor(always_create_workflow_spans=True)]


def instrument_app(app: Any) -> None:
    """A span per web request (FastAPI's instrumentation), when traces are on."""
    if _PROVIDER is None:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    FastAPIInstrumentor.instrument_app(app, excluded_urls="/api/health,/metrics,/static/.*")


def flush(timeout_s: float = 5.0) -> None:
    """Send the spans still buffered (at shutdown), waiting at most TIMEOUT_S."""
    if _PROVIDER is not None:
        _PROVIDER.force_flush(int(timeout_s * 1000))
