"""The API's dependencies: who asks (`current_user`, which also refuses cross-site writes), the
Temporal client (`temporal`), and the research a user may see (`owned_research`).

`Backend` is what one app holds: its settings, its users, one Temporal client (connected on first
use) and the event hub (one poller per followed research). No research state: every answer is a
Temporal describe, list or query, or a read of the library, so replicas behind a load balancer
agree. Every Temporal call is time-limited (`within`, RPC_TIMEOUT): an unreachable server or a
research no worker answers for is a 503 in seconds, never a hang.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any, Protocol, TypeVar

from fastapi import Depends, Path, Request
from fastapi.responses import JSONResponse
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from config import Settings
from starter.client.errors import ClientError, Kind
from starter.client.research_client import owner_in, stored_owner
from starter.client.temporal import connect, is_not_found
from starter.web.identity.auth import Access, bearer_keys, forbidden_cross_site, identify
from storage import store
from workflows.models import ResearchResult


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
    client: Client | None = None
    _connecting: asyncio.Lock | None = None

    async def temporal(self) -> Client:
        """The app's client; the first call connects (a failure is a 503, and the next call tries
        again)."""
        if self.client is None:
            self._connecting = self._connecting or asyncio.Lock()
            async with self._connecting:
                if self.client is None:
                    try:
                        self.client = await within(connect(self.cfg), CALL_S)
                    except (ClientError, TimeoutError) as err:
                        raise ApiError(
                            503, f"cannot reach Temporal at {self.cfg.temporal_address}"
                        ) from err
        return self.client

    async def library(self, read: Callable[[str], T]) -> T:
        """A read of the research library, off the event loop."""
        return await asyncio.to_thread(read, self.cfg.research_db_url)


async def within(call: Awaitable[T], seconds: float = CALL_S) -> T:
    return await asyncio.wait_for(call, seconds)


async def backend(request: Request) -> Backend:
    return request.app.state.backend


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


async def temporal(app: Annotated[Backend, Depends(backend)]) -> Client:
    return await app.temporal()


@dataclass
class Research:
    """A research the user may see. `handle` is None when only the library knows it (Temporal has
    forgotten it, or cannot be reached); then `stored` is set."""

    id: str
    owner: str
    handle: WorkflowHandle[Any, ResearchResult] | None
    status: WorkflowExecutionStatus | None
    stored: store.StoredResearch | None = None

    @property
    def running(self) -> bool:
        return self.status is WorkflowExecutionStatus.RUNNING

    @property
    def state(self) -> str:
        """`running`, `completed`, `failed`, ... as Temporal says; the outcome for a stored one."""
        if self.status is not None:
            return self.status.name.lower()
        return self.stored.result.outcome.value if self.stored else "unknown"


async def owned_research(
    id: Annotated[str, Path()],
    user: Annotated[str, Depends(current_user)],
    app: Annotated[Backend, Depends(backend)],
) -> Research:
    """The research ID if USER owns it; another user's research is unknown (404), exactly like an
    id that does not exist. Temporal first (running or retained research), then the library."""
    if not RESEARCH_ID.fullmatch(id):
        raise unknown(id)
    try:
        handle = (await app.temporal()).get_workflow_handle(id, result_type=ResearchResult)
        described = await within(handle.describe(rpc_timeout=RPC_TIMEOUT))
    except (
        ApiError,
        RPCError,
        TimeoutError,
    ) as err:  # unknown to Temporal, or Temporal unreachable
        return await _stored(app, id, user, err)
    # owner: from the memo the app sets at start; the CLI's and MCP's research belong to
    # RESEARCH_USER. To switch to the request's `owner` field (or a search attribute), change this.
    owner = await owner_in(described, app.cfg)
    if owner != user:  # the same library read an unknown id costs: the 404s take as long
        await _stored(app, id, "\x00", RPCError("not yours", RPCStatusCode.NOT_FOUND, b""))
        raise unknown(id)
    return Research(id=id, owner=owner, handle=handle, status=described.status)


async def _stored(app: Backend, research_id: str, user: str, failure: Exception) -> Research:
    """The research from the library, or: 404 when Temporal did not know it either; the Temporal
    failure (503) when Temporal could not be asked."""
    missing = isinstance(failure, RPCError) and is_not_found(failure)
    try:
        stored = await app.library(lambda url: store.load_research(url, research_id))
    except ApplicationError:
        if missing:
            raise
        raise failure from None
    # owner: the library's column (migration 0004; rows from before belong to `local`).
    if stored is not None and stored_owner(stored, app.cfg) == user:
        return Research(id=research_id, owner=user, handle=None, status=None, stored=stored)
    if missing or stored is not None:
        raise unknown(research_id) from None
    raise failure from None


#: The dependencies as the routers name them (the FastAPI template's `api/deps.py` aliases).
User = Annotated[str, Depends(current_user)]
App = Annotated[Backend, Depends(backend)]
Temporal = Annotated[Client, Depends(temporal)]
Owned = Annotated[Research, Depends(owned_research)]
