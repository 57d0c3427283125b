"""What every HTTP double in the tests shares: a JSON answer and a server running in a thread."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def send_json(
    handler: BaseHTTPRequestHandler,
    status: int,
    payload: Any,
    headers: dict[str, str] | None = None,
) -> None:
    """Answer with `payload` as JSON; a client that already hung up (a timeout test) is ignored."""
    data = json.dumps(payload).encode()
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
    except OSError:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a killed worker, a timed-out call) is not news; anything else is."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def local_server(handler: type[BaseHTTPRequestHandler], backlog: int = 5) -> ThreadingHTTPServer:
    """`backlog`: connections waiting to be accepted; the standard library's 5 makes a burst of
    clients (the bench's hundred researches) wait for SYN retries, seconds each."""
    server_class = type("Server", (_Server,), {"request_queue_size": backlog})
    return server_class(("127.0.0.1", 0), handler)


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[ThreadingHTTPServer]:
    """Serve in a background thread for the duration of the block, then close the port."""
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
