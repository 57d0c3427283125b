"""The worker's HTTP endpoint on WORKER_METRICS_PORT: `/metrics` (the Prometheus exposition of
metrics.py) and `/healthz` (200 while the worker polls its task queue, 503 before it does and from
the moment it starts shutting down, so Kubernetes stops counting a draining worker as ready).

A standard-library HTTP server on a thread of its own: a scrape or a probe is answered even while
the worker's event loop is busy with workflow tasks, and a stuck loop does not make the worker look
dead to a liveness probe while its activities still run.

Bounded: a connection that sends nothing
for IDLE_S is closed, and past MAX_CONNECTIONS at once a new one is closed unanswered, so the
threads this port can cost are MAX_CONNECTIONS, each for IDLE_S at most when it idles. A scrape
or a probe is one short request: both fit many times over.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from telemetry.metrics import MetricsRuntime

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"
#: Connections served at once (one thread each), and how long one may send nothing.
MAX_CONNECTIONS, IDLE_S = 32, 5.0


class _BoundedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type, most: int) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(most)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):  # full: closed at once, no thread
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class HealthServer:
    """Serves /metrics and /healthz on HOST:PORT until `close()`."""

    def __init__(
        self,
        host: str,
        port: int,
        metrics: MetricsRuntime,
        polling: Callable[[], bool],
        most: int = MAX_CONNECTIONS,
        idle_s: float = IDLE_S,
    ) -> None:
        self.metrics = metrics
        self.polling = polling
        self._server = _BoundedServer((host, port), _handler(self, idle_s), most)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="worker-health", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> HealthServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str) -> tuple[int, str, bytes]:
        """Status, content type and body for a GET of PATH."""
        if path == "/healthz":
            if self.polling():
                return 200, "text/plain", b"polling\n"
            return 503, "text/plain", b"not polling\n"
        if path == "/metrics":
            try:
                return 200, PROMETHEUS_TEXT, self.metrics.exposition()
            except OSError as err:
                return 503, "text/plain", f"metrics unavailable: {err}\n".encode()
        return 404, "text/plain", b"not found: /metrics and /healthz are served here\n"


def _handler(health: HealthServer, idle_s: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = idle_s  # the socket's: a connection silent this long is closed

        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            status, kind, body = health.answer(self.path.split("?", 1)[0])
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Probes every few seconds are not worth a log line each."""

    return Handler
