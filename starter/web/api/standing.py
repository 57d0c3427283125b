"""`/api/standing`: a user's standing research (INTERFACE.md "Standing research and
notifications"). Thin: each route is one call of `starter.client.standing`; another user's standing
research answers 404, as an unknown id does; bad input is 422 in one line, a run already running 409.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from temporalio.service import RPCError

from activities.storage import standing as stored
from starter.client import research_client, standing
from starter.client.requests import RequestError, build_request
from starter.client.session import Session
from starter.client.temporal import CliError
from starter.web.deps import ApiError, App, User, within

router = APIRouter(tags=["standing"])
T = TypeVar("T")
#: How long one standing call may take (create and run-now wait for Temporal to show the change).
CALL_S = 25.0
STATUS = {standing.EXIT_UNKNOWN: 404, standing.EXIT_CONFLICT: 409, standing.EXIT_USAGE: 422}


class StandingCreate(BaseModel):
    """`POST /api/standing`: `question`, `every` or `cron`, `notify` (webhook URLs of its own),
    `max_runs`, and any request field of `POST /api/research`."""

    model_config = ConfigDict(extra="allow")

    question: Any = Field(default=None, description="the research question")
    every: str | None = Field(default=None, description="e.g. 12h, 1d, 7d")
    cron: str | None = Field(default=None, description="e.g. '0 8 * * 1' (UTC)")
    notify: list[str] = Field(default_factory=list, description="webhook URLs of its own")
    max_runs: int | None = Field(default=None, description="stop after this many scheduled runs")

    def request_values(self) -> dict[str, Any]:
        given = self.model_dump(exclude_unset=True)
        for name in ("every", "cron", "notify", "max_runs", "attended"):
            given.pop(name, None)
        return given


class StandingCreated(BaseModel):
    id: str


class RunStarted(BaseModel):
    research_id: str


class Deleted(BaseModel):
    id: str
    deleted: bool = True


async def _call(app: Any, work: Awaitable[T]) -> T:
    try:
        return await within(work, CALL_S)
    except CliError as err:
        raise ApiError(STATUS.get(err.code, 503), str(err)) from None
    except (RPCError, TimeoutError) as err:
        raise ApiError(503, f"cannot reach Temporal at {app.cfg.temporal_address}") from err


@router.post("/standing", status_code=201, response_model=StandingCreated)
async def create(body: StandingCreate, user: User, app: App) -> JSONResponse:
    try:
        request = build_request(body.request_values())
        standing.spec_of(body.every, body.cron)
    except (RequestError, CliError) as err:
        raise ApiError(422, str(err)) from None
    client = await app.temporal()
    try:
        # a follow-up of another user's research is unknown (422), like an id that does not exist
        request = await research_client.ready(request, Session(app.cfg, client=client), owner=user)
    except (RequestError, CliError) as err:
        raise ApiError(422, str(err)) from None
    standing_id = await _call(
        app,
        standing.create(
            client,
            app.cfg,
            request,
            user,
            every=body.every,
            cron=body.cron,
            notify=body.notify,
            max_runs=body.max_runs,
        ),
    )
    return JSONResponse(
        {"id": standing_id}, status_code=201, headers={"Location": f"/api/standing/{standing_id}"}
    )


@router.get("/standing", response_model=list[standing.StandingView])
async def list_standing(user: User, app: App) -> list[standing.StandingView]:
    client = await app.temporal()
    return await _call(app, standing.list_standing(client, app.cfg, user))


async def detail(client: Any, app: Any, standing_id: str, user: str) -> standing.StandingDetail:
    described = await standing.owned(client, app.cfg, standing_id, user)
    changed = await app.library(lambda url: stored.changed_runs(url, standing_id))
    return standing.StandingDetail(
        **(await standing.view(described)).model_dump(),
        runs=await standing.runs(client, described, changed),
    )


@router.get("/standing/{id}", response_model=standing.StandingDetail)
async def show(id: str, user: User, app: App) -> standing.StandingDetail:
    client = await app.temporal()
    return await _call(app, detail(client, app, id, user))


@router.post("/standing/{id}/run", status_code=202, response_model=RunStarted)
async def run_now(id: str, user: User, app: App) -> JSONResponse:
    client = await app.temporal()
    research_id = await _call(app, standing.run_now(client, app.cfg, id, user))
    return JSONResponse({"research_id": research_id}, status_code=202)


@router.post("/standing/{id}/pause", response_model=standing.StandingView)
async def pause(id: str, user: User, app: App) -> standing.StandingView:
    client = await app.temporal()
    return await _call(app, standing.pause(client, app.cfg, id, user))


@router.post("/standing/{id}/resume", response_model=standing.StandingView)
async def resume(id: str, user: User, app: App) -> standing.StandingView:
    client = await app.temporal()
    return await _call(app, standing.resume(client, app.cfg, id, user))


@router.delete("/standing/{id}", response_model=Deleted)
async def delete(id: str, user: User, app: App) -> Deleted:
    """Stops it for good; its runs stay in the library."""
    client = await app.temporal()
    await _call(app, standing.delete(client, app.cfg, id, user))
    return Deleted(id=id)
