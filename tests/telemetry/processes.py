"""The web app as a process of its own (`python -m starter serve`), as a deployment runs it, and a
real OTLP/HTTP receiver that keeps every span it is sent."""

from __future__ import annotations

import contextlib
import gzip
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.workers import REPO
from tests.telemetry.scrape import free_port, get

TOKEN = "alice-token-0123456789"


@contextlib.contextmanager
def web_app(env: dict[str, str], log: Path) -> Iterator[str]:
    """The web app on a loopback port with RESEARCH_API_TOKENS set (alice); yields its base URL."""
    port = free_port()
    env = {**env, "RESEARCH_API_TOKENS": f"alice:{TOKEN}"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "starter", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while get(f"{base}/api/health")[0] != 200:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the web app did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Collector:
    """Accepts `POST /v1/traces` (OTLP/HTTP, protobuf, plain or gzip) and keeps the spans with the
    name of the service that sent them."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                collector.receive(ExportTraceServiceRequest.FromString(body))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def receive(self, request: ExportTraceServiceRequest) -> None:
        for resource_spans in request.resource_spans:
            attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    with self.lock:
                        self.spans.append(
                            {
                                "service": attributes.get("service.name"),
                                "scope": scope_spans.scope.name,
                                "name": span.name,
                                "trace_id": span.trace_id.hex(),
                            }
                        )

    @contextlib.contextmanager
    def running(self) -> Iterator[Collector]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
