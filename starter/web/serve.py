"""`python -m starter serve [--host] [--port]`: the web app under uvicorn.

Without RESEARCH_API_TOKENS anyone who reaches the port is the one user, so only a loopback
address may be bound then: anything else is refused (exit 2, one line). The socket is bound here,
before uvicorn starts, so a port in use is one line too. Streams are open connections: shutting
down waits at most SHUTDOWN_S for them (a browser reconnects to another replica by itself).
Behind a reverse proxy (TLS, another port), uvicorn trusts X-Forwarded-Proto/-For from the
addresses in FORWARDED_ALLOW_IPS (default 127.0.0.1), so cookies get `Secure` and the same-origin
check compares the origin the browser saw.
"""

from __future__ import annotations

import ipaddress
import socket
import sys

from settings import ConfigError, Settings
from starter.web.identity.auth import Access

SHUTDOWN_S = 3


def serve(host: str, port: int, config: Settings) -> int:
    try:
        access = Access.from_settings(config)
    except ConfigError as err:
        return _refuse(str(err))
    if not access.on and not is_loopback(host):
        return _refuse(
            f"refusing to serve on {host} without access control: set RESEARCH_API_TOKENS "
            "(NAME:TOKEN pairs, comma-separated) or bind 127.0.0.1"
        )
    try:
        sock = socket.create_server(
            (host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET
        )
    except OSError as err:
        return _refuse(f"cannot listen on {host}:{port}: {err.strerror or err}")
    import uvicorn

    from starter.web.app import create_app
    from telemetry import metrics, traces

    metrics.install()  # before the app's Temporal client connects: it records into this runtime
    traces.configure("deep-research-web")
    from starter.web.guard.slow_clients import uvicorn_config

    shown = f"[{host}]" if ":" in host else host
    print(
        f"web app: http://{shown}:{sock.getsockname()[1]}/"
        + ("" if access.on else f" (no access control: everyone here is {access.open_user})"),
        file=sys.stderr,
    )
    server = uvicorn.Server(
        uvicorn_config(create_app(config), timeout_graceful_shutdown=SHUTDOWN_S, log_level="info")
    )
    server.run(sockets=[sock])
    return 0


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def _refuse(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
