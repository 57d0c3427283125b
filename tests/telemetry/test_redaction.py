"""Traces without secrets: with OTEL_EXPORTER_OTLP_ENDPOINT set, what reaches a real
OTLP/HTTP receiver holds no query string, no webhook path and no sign-in `code` or `state`; and no
trace context crosses the service's edge: a crawled page and a webhook receiver see no
`traceparent` or `baggage`, and a client's `traceparent` does not become the web app's trace."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.support.workers import worker_env
from tests.telemetry.processes import Collector, web_app

pytestmark = pytest.mark.e2e

#: What the traced process does: deliver a webhook and read a page, inside a span that carries
#: baggage (as a client's would after the web app took it), then send its spans.
SCRIPT = """
import asyncio, sys
from opentelemetry import baggage, context, trace
from telemetry import traces
assert traces.configure("deep-research-worker")
from activities.notify import post_webhook
from activities.web.crawler import fetch
from settings import Settings
from workflows.standing_messages import DeliverInput, Notice, NoticeKind

hook, page = sys.argv[1], sys.argv[2]
notice = Notice(event=NoticeKind.COMPLETED, research_id="r-1", owner="ann", question="q?",
                at="2026-12-02T08:00:00Z")
cfg = Settings(_env_file=None, webhook_allow_private=True, crawl_allow_private=True,
               research_webhook_secret="s" * 32, research_public_url="https://r.example/")

async def main():
    token = context.attach(baggage.set_baggage("tenant", "baggage-of-the-client"))
    with trace.get_tracer("test").start_as_current_span("a research step"):
        await post_webhook(cfg, hook, DeliverInput(notice=notice, target="webhook:0", delivery_id="d"))
        await fetch(page, cfg)
    context.detach(token)

asyncio.run(main())
traces.flush()
"""


@contextmanager
def receiver() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A loopback site: every request's path and headers kept; a page for GETs, 200 for POSTs."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, body: bytes, kind: str) -> None:
            seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            self.send_response(404 if self.path == "/robots.txt" else 200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            text = "<html><head><title>Fens</title></head><body><p>" + "Fen orchids. " * 40
            self._answer((text + "</p></body></html>").encode(), "text/html; charset=utf-8")

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self._answer(b"ok", "text/plain")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def wait_for_spans(collector: Collector, enough: Any, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not enough(collector.spans):
        if time.monotonic() > deadline:
            raise AssertionError(f"spans missing; received {[s['name'] for s in collector.spans]}")
        time.sleep(0.1)


def test_webhook_paths_and_queries_never_reach_the_collector_nor_trace_headers_a_site(
    tmp_path: Path,
) -> None:
    hook_secret, sig, page_token = (secrets.token_hex(8) for _ in range(3))
    collector = Collector()
    with collector.running(), receiver() as (site, seen):
        hook = f"{site}/services/T0/{hook_secret}?sig={sig}"
        page = f"{site}/fens.html?token={page_token}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RESEARCH_"))} | {
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "RESEARCH_DATA_DIR": str(tmp_path),
            "PYTHONPATH": str(REPO),
        }
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, hook, page],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        wait_for_spans(collector, lambda spans: any(s["name"] == "a research step" for s in spans))
    client_spans = [s for s in collector.spans if s["scope"].endswith("instrumentation.httpx")]
    assert {s["name"] for s in client_spans} >= {"POST", "GET"}
    sent = "\n".join(collector.received)
    for secret in (hook_secret, sig, page_token, "baggage-of-the-client"):
        assert secret not in sent
    urls = {
        s["attributes"].get("url.full") or s["attributes"].get("http.url") for s in client_spans
    }
    assert f"{site}/REDACTED?REDACTED" in urls  # the webhook: host only
    assert f"{site}/fens.html?REDACTED" in urls  # a page: its path, no query
    # the sites saw the requests, and no trace context with them
    assert {r["path"] for r in seen} >= {f"/services/T0/{hook_secret}?sig={sig}"}
    assert not [r for r in seen if {"traceparent", "tracestate", "baggage"} & r.keys()]


def test_the_signin_answers_code_and_state_never_reach_the_collector_nor_a_clients_trace(
    dev_address: str, tmp_path: Path
) -> None:
    code, state = secrets.token_urlsafe(12), secrets.token_urlsafe(12)
    client_trace = secrets.token_hex(16)
    collector = Collector()
    env = worker_env(
        dev_address,
        f"tq-redact-{uuid.uuid4().hex[:6]}",
        "http://127.0.0.1:9/v1",
        tmp_path,
        OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint,
        OTEL_BSP_SCHEDULE_DELAY="100",
    )
    with collector.running(), web_app(env, tmp_path / "web.log") as base:
        request = urllib.request.Request(
            f"{base}/auth/callback?code={code}&state={state}",
            headers={
                "traceparent": f"00-{client_trace}-{secrets.token_hex(8)}-01",
                "baggage": "tenant=baggage-of-the-client",
            },
        )
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except urllib.error.HTTPError:
            pass  # no provider here: 404, traced all the same
        wait_for_spans(
            collector, lambda spans: any(s["name"] == "GET /auth/callback" for s in spans)
        )
    sent = "\n".join(collector.received)
    assert code not in sent and state not in sent and "baggage-of-the-client" not in sent
    server = next(s for s in collector.spans if s["name"] == "GET /auth/callback")
    assert server["trace_id"] != client_trace and not server["parent_id"].strip("0")
