"""The API's dependencies: who asks (`current_user`, which also refuses cross-site writes), the
app's client session (`Backend.session`), and the research a user may see (`owned_research`).

`Backend` is what one app holds: its settings, its users, one client session (`starter.client`:
its Temporal connection made on first use, the only way to Temporal and the library) and the event
hub (one poller per followed research). No research state: every answer is the client's (a
Temporal describe, list or query, or a read of the library), so replicas behind a load balancer
agree. Every Temporal call is time-limited (`within`, RPC_TIMEOUT): an unreachable server or a
research no worker answers for is a 503 in seconds, never a hang.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Annotated, Any, Protocol, TypeVar

from fastapi import Depends, Path, Request
from fastapi.responses import JSONResponse

from settings import Settings
from starter.client.errors import ClientError, Kind
from starter.client.finding import Found, find
from starter.client.session import Session
from starter.web.identity.auth import Access, bearer_keys, forbidden_cross_site, identify


class EventHub(Protocol):
    """What the API asks of the event hub (`starter.web.services.events.EventHub`, which builds on this
    module: typed by its shape here so the two modules do not import each other)."""

    def nudge(self, research_id: str) -> None: ...

    def join(self, research: Any, since: int) -> Any: ...

    def leave(self, research_id: str, subscriber: Any) -> None: ...

    async def close(self) -> None: ...


T = TypeVar("T")
#: The longest one Temporal call may take (describe, query, start, cancel, one page of a list).
RPC_TIMEOUT = timedelta(seconds=5)
#: A little more, for the whole call as the client sees it (connection, retries).
CALL_S = RPC_TIMEOUT.total_seconds() + 1
#: Research ids as this app and the CLI make them, and as users type them.
RESEARCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}")


#: What each kind of `ClientError` is over HTTP: the web app's one mapping (the API's handler, the
#: services and the pages all go through `ApiError.of`).
HTTP_STATUS: dict[Kind, int] = {
    Kind.INVALID: 422,
    Kind.NOT_FOUND: 404,
    Kind.CONFLICT: 409,
    Kind.LIMITED: 429,
    Kind.UNREACHABLE: 503,
    Kind.NO_ANSWER: 503,
    Kind.FAILED: 502,
}


class ApiError(Exception):
    """An answer with a 4xx or 5xx status and `{"error": message}`: one line for the person."""

    def __init__(self, status: int, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after_s = retry_after_s

    @classmethod
    def of(cls, err: ClientError) -> ApiError:
        return cls(HTTP_STATUS[err.kind], str(err), err.retry_after_s)


def created(collection: str, new_id: str) -> JSONResponse:
    """201 with the new thing's id and where it now lives (`/api/COLLECTION/ID`)."""
    return JSONResponse(
        {"id": new_id}, status_code=201, headers={"Location": f"/api/{collection}/{new_id}"}
    )


def unknown(research_id: str) -> ApiError:
    """The one answer for an id that does not exist AND for one that belongs to someone else."""
    return ApiError(404, f"no research with id {research_id}")


@dataclass
class Backend:
    cfg: Settings
    access: Access
    hub: EventHub
    #: The app's client session: one Temporal connection, made on first use.
    session: Session = field(init=False)

    def __post_init__(self) -> None:
        self.session = Session(self.cfg)

    async def connected(self) -> Session:
        """The app's session, connected (a failure is a 503, and the next call tries again)."""
        try:
            await within(self.session.connect(), CALL_S)
        except (ClientError, TimeoutError) as err:
            raise ApiError(503, f"cannot reach Temporal at {self.cfg.temporal.target}") from err
        return self.session


async def within(call: Awaitable[T], seconds: float = CALL_S) -> T:
    return await asyncio.wait_for(call, seconds)


async def backend(request: Request) -> Backend:
    found: Backend = request.app.state.backend
    return found


async def current_user(request: Request) -> str:
    """The user, or 401; a state-changing request a browser sent must also be same-origin with the
    page's CSRF token, or 403."""
    await bearer_keys(request)
    who = identify(request)
    if who is None:
        raise ApiError(
            401,
            "sign in: send Authorization: Bearer TOKEN (a token of RESEARCH_API_TOKENS)"
            if "authorization" not in request.headers
            else "the access token is not valid",
        )
    problem = forbidden_cross_site(request, who)
    if problem:
        raise ApiError(403, problem)
    return who.user


#: A research the user may see (the client's `Found`: Temporal's handle, or the library's copy).
Research = Found


async def owned_research(
    id: Annotated[str, Path()],
    user: Annotated[str, Depends(current_user)],
    app: Annotated[Backend, Depends(backend)],
) -> Research:
    """The research ID if USER owns it; another user's research is unknown (404), exactly like an
    id that does not exist (the client's `find`: Temporal first, then the library)."""
    if not RESEARCH_ID.fullmatch(id):
        raise unknown(id)
    return await find(app.session, id, user, call_s=CALL_S, rpc_timeout=RPC_TIMEOUT)


#: The dependencies as the routers name them (the aliases of the FastAPI template's
#: `backend/app/api/deps.py`).
User = Annotated[str, Depends(current_user)]
App = Annotated[Backend, Depends(backend)]
Owned = Annotated[Research, Depends(owned_research)]
