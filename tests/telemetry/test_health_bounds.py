"""The worker's metrics port holds a bounded number of connections: past the most at once a connection is closed unanswered, an idle one is
closed after a while, and a probe is answered again as soon as the idle ones are gone."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

from telemetry.health import HealthServer


class Exposition:
    def exposition(self) -> bytes:
        return b"# nothing\n"


def server_threads() -> int:
    return sum(1 for t in threading.enumerate() if "process_request_thread" in t.name)


def test_idle_connections_cost_a_bounded_number_of_threads_and_are_closed() -> None:
    most, idle_s, opened = 6, 1.0, 40
    health = HealthServer("127.0.0.1", 0, Exposition(), lambda: True, most=most, idle_s=idle_s)  # type: ignore[arg-type]
    health.start()
    before = server_threads()
    idle = [socket.create_connection(("127.0.0.1", health.port), timeout=30) for _ in range(opened)]
    try:
        time.sleep(0.3)  # the server accepts them (not a bound: the check below is on a count)
        assert server_threads() - before <= most
        # every idle connection is closed by the server: at once past the most, else after idle_s
        for conn in idle:
            assert conn.recv(1) == b""  # EOF (a hang would end in the socket's 30 s timeout)
        deadline = time.monotonic() + 30
        while server_threads() > before and time.monotonic() < deadline:
            time.sleep(0.05)
        with urllib.request.urlopen(f"http://127.0.0.1:{health.port}/healthz", timeout=10) as r:
            assert r.status == 200
    finally:
        for conn in idle:
            conn.close()
        health.close()
