"""`GET /metrics`: this replica's Prometheus metrics (its Temporal client's requests, failures and
latency, from the SDK runtime that `serve` installs: telemetry/metrics.py), for a scraper that
sends the token of a user RESEARCH_METRICS_USERS names as `Authorization: Bearer`, or for a
caller on this machine. Another user's token is refused (403): the metrics say how busy the
service is and how its calls fail, which is the operator's business, not every user's.

"On this machine" is the socket's loopback peer with no `X-Forwarded-For`: a request a reverse
proxy forwarded came from somewhere else, whatever address the proxy headers name.

`install(app)` also gives the app a span per request when traces are on (telemetry/traces.py).
"""

from __future__ import annotations

import ipaddress

from fastapi import APIRouter, FastAPI, Request, Response

from starter.client.operations import metrics_exposition
from starter.web.deps import ApiError
from starter.web.identity import auth
from telemetry import traces

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"

router = APIRouter(include_in_schema=False)


@router.get("/metrics")
async def exposition(request: Request) -> Response:
    if not _on_this_machine(request):
        who = auth.identify(request)
        if who is None or who.via != "bearer":
            raise ApiError(
                401, "metrics: send Authorization: Bearer TOKEN (a token of RESEARCH_API_TOKENS)"
            )
        if who.user not in _readers(request):
            raise ApiError(403, f"metrics: {who.user} may not read them (RESEARCH_METRICS_USERS)")
    return Response(await metrics_exposition(), media_type=PROMETHEUS_TEXT)


def install(app: FastAPI) -> None:
    app.include_router(router)
    traces.instrument_app(app)


def _readers(request: Request) -> set[str]:
    names = request.app.state.backend.cfg.access.metrics_users.split(",")
    return {n.strip() for n in names if n.strip()}


def _on_this_machine(request: Request) -> bool:
    if "x-forwarded-for" in request.headers or request.client is None:
        return False
    try:
        return ipaddress.ip_address(request.client.host).is_loopback
    except ValueError:
        return False
