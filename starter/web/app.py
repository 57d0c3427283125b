"""`create_app(config)`: the web app: the JSON API under /api, the pages, /static, and what every
response carries (security headers; errors as `{"error": "one line"}`, never a traceback).

The app is a Temporal client with no research state of its own (see deps.py), so any number of
replicas can serve the same users behind a load balancer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from activities.corpus import uploads
from settings import Settings
from starter.client.errors import ClientError
from starter.client.temporal import one_line
from starter.web import metrics
from starter.web.deps import RPC_TIMEOUT, ApiError, Backend
from starter.web.guard.admission import UploadsInFlight
from starter.web.guard.json_body import JsonBody
from starter.web.guard.shield import Shield, body_limit, too_large
from starter.web.identity import auth
from starter.web.services.events import EventHub

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
#: A request body larger than this is refused (413) before it is read: a question is 5,000
#: characters at most, a plan review a few kilobytes.
MAX_BODY_BYTES = 256 * 1024
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}


def create_app(cfg: Settings) -> FastAPI:
    """The app for the settings CFG (`serve`: the process's). Malformed RESEARCH_API_TOKENS raise
    `ConfigError` here, in one line."""
    backend = Backend(cfg=cfg, access=auth.Access.from_settings(cfg), hub=EventHub(cfg))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await forget_dead_uploads(cfg)
        yield
        await backend.hub.close()

    app = FastAPI(
        title="Deep research",
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
    )
    app.state.backend = backend
    for kind, answer in HANDLERS.items():
        app.add_exception_handler(kind, answer)
    app.add_middleware(JsonBody)  # rewrites a header only: the body still streams through Shield
    app.add_middleware(
        Shield,
        open_mode=not backend.access.on,
        allowed_hosts=cfg.access.allowed_hosts.split(","),
        uploads=UploadsInFlight(
            cfg.web.uploads_in_flight_mb * 1024 * 1024, cfg.web.uploads_per_user
        ),
    )
    app.add_middleware(Guard)  # outermost: its headers and one-line 500s cover Shield's answers

    from starter.web.api import router as api

    app.include_router(api, prefix="/api")
    from starter.web.pages import router as pages

    app.include_router(pages)
    metrics.install(app)  # /metrics, and a span per request when traces are on
    app.mount("/static", StaticFiles(directory=STATIC, check_dir=False), name="static")
    return app


async def forget_dead_uploads(cfg: Settings) -> None:
    """What uploads that died (a crash, a full disk) left behind is removed when the app starts."""
    try:
        await asyncio.to_thread(
            uploads.sweep_all_partials, uploads.uploads_root(cfg.library.data_dir)
        )
    except OSError as err:
        log.warning("stale uploads could not be removed: %s", err.strerror or err)


# --- errors: one line, the right status ----------------------------------------------------------


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": one_line(message)}, status_code=status, headers=headers)


def _api_error(err: ApiError) -> JSONResponse:
    """The status and line; who to sign in with for a 401, when to come back for a 429."""
    headers = {"www-authenticate": "Bearer"} if err.status == 401 else {}
    if err.retry_after_s is not None:
        headers["retry-after"] = str(max(1, round(err.retry_after_s)))
    return error(err.status, err.message, headers or None)


HANDLERS: dict[type[Exception], Callable[[Request, Any], JSONResponse]] = {
    ApiError: lambda request, err: _api_error(err),
    RequestValidationError: lambda request, err: error(422, invalid_input(err)),
    HTTPException: lambda request, err: error(
        err.status_code, str(err.detail), dict(err.headers or {})
    ),
    TimeoutError: lambda request, err: error(
        503,
        f"Temporal did not answer within {RPC_TIMEOUT.seconds}s: is a worker running (and Temporal)?",
    ),
    #: Every failure of Temporal and the library: the client's one kind (starter/client/errors.py).
    ClientError: lambda request, err: _api_error(ApiError.of(err)),
}


def invalid_input(err: RequestValidationError) -> str:
    """FastAPI's validation errors as one line: where, and what was wrong."""
    first = err.errors()[0]
    where = [
        str(part)
        for part in first.get("loc", ())
        if part not in ("body", "query", "path", "header")
    ]
    if first.get("type") == "json_invalid":
        return "the body is not valid JSON"
    if not where:
        return 'the body must be a JSON object, such as {"question": "..."}'
    name = where[0].replace("-", "_") if first["loc"][0] == "header" else ".".join(where)
    said = str(first.get("msg", "not valid")).removeprefix("Value error, ")  # a validator's own
    return f"invalid {name}: {said}"


# --- on every response ----------------------------------------------------------------------------


class Guard:
    """Pure ASGI (streams pass untouched): binds the request for auth's helpers, refuses bodies
    over MAX_BODY_BYTES, adds the security headers to every response, and turns anything
    unexpected into a 500 with one line (the traceback goes to the log, never to the client)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        token = auth.current_request.set(Request(scope))
        started = False

        async def secured(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.decode().lower() not in SECURITY_HEADERS
                ]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                if scope["path"].startswith("/api/") and not any(
                    k.lower() == b"cache-control" for k, _ in headers
                ):
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        try:
            if _body_size(scope) > body_limit(scope, MAX_BODY_BYTES):
                refused = too_large(scope, MAX_BODY_BYTES)
                answer = (
                    error(413, refused)
                    if scope["path"].startswith("/api/")
                    else _refused_page(scope, refused)  # a page's form: the styled error page
                )
                await answer(scope, receive, secured)
                return
            await self.app(scope, receive, secured)
        except Exception:
            log.exception("%s %s failed", scope.get("method"), scope.get("path"))
            if not started:
                await error(500, "internal error: the server logged the details")(
                    scope, receive, secured
                )
        finally:
            auth.current_request.reset(token)


def _refused_page(scope: Scope, message: str) -> Any:
    """The error page for a page's form whose body is refused unread (an upload over 5 MB)."""
    from starter.web.pages.frame import error_page

    request = Request(scope)
    return error_page(request, auth.user_from_request(request) or "", 413, message, back="/")


def _body_size(scope: Scope) -> int:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0
