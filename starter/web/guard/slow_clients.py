"""Connections that cannot be held open by a slow or idle client: `uvicorn_config(app)` is the
uvicorn configuration `serve` (and the tests) run the app with.

uvicorn closes a connection idle between requests after `timeout_keep_alive`, but a client that
sends its request line and headers slowly (a byte, or a header line, a second) is waited for
forever. `HeaderDeadline` (uvicorn's h11 protocol plus one timer) closes a connection whose request
headers are not complete HEADER_TIMEOUT_S after the connection opened, or after the previous
response was sent. Headers are also capped in size (MAX_HEADER_BYTES: h11 answers 400 beyond).
A body that comes too slowly is the app's to refuse (starter/web/guard/shield.py: 408). The connections
held at once are capped too (WEB_MAX_CONNECTIONS, uvicorn's `limit_concurrency`: 503 beyond).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

#: The request line and headers must be complete within this long.
HEADER_TIMEOUT_S = 10.0
#: The most one read from a connection takes at a time: what a connection that streams a body
#: holds in flight (asyncio's 256 KiB: 240 refused uploads at once cost 162 MiB; at 16 KiB, 33 MiB).
READ_BYTES = 16 * 1024
#: Idle time allowed between two requests on one connection.
KEEP_ALIVE_S = 5
#: The request line and headers together, at most.
MAX_HEADER_BYTES = 32 * 1024


class HeaderDeadline(H11Protocol):
    header_timeout_s = HEADER_TIMEOUT_S
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if hasattr(transport, "max_size"):  # asyncio reads up to 256 KiB a time per connection
            transport.max_size = READ_BYTES
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:
            self._arm()  # a request begins (after a keep-alive pause, its timer starts here)
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the headers are complete

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def uvicorn_config(app: Any, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration for the web app: the header deadline, keep-alive and header size
    limits; OPTIONS add to or override them (log level, graceful shutdown)."""
    values: dict[str, Any] = {
        "http": HeaderDeadline,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "server_header": False,
    }
    backend = getattr(getattr(app, "state", None), "backend", None)
    if backend is not None:  # connections at once: 503 beyond (WEB_MAX_CONNECTIONS)
        values["limit_concurrency"] = backend.cfg.web.max_connections
    values.update(options)
    return uvicorn.Config(app, **values)
