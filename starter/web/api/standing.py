"""`/api/standing`: a user's standing research (INTERFACE.md "Standing research and
notifications"). Thin: each route is one call of the standing service (`services/standing.py`), its
request and response models in `models.py`, as research's routes are.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from starter.client.standing import StandingDetail, StandingView
from starter.web.deps import App, User, created
from starter.web.models import Deleted, RunStarted, StandingCreate, StandingCreated
from starter.web.services import standing as service

router = APIRouter(tags=["standing"])


@router.post("/standing", status_code=201, response_model=StandingCreated)
async def create(body: StandingCreate, user: User, app: App) -> JSONResponse:
    return created("standing", await service.create(body, user, app))


@router.get("/standing", response_model=list[StandingView])
async def list_standing(user: User, app: App) -> list[StandingView]:
    return await service.list_for(user, app)


@router.get("/standing/{id}", response_model=StandingDetail)
async def show(id: str, user: User, app: App) -> StandingDetail:
    return await service.detail(id, user, app)


@router.post("/standing/{id}/run", status_code=202, response_model=RunStarted)
async def run_now(id: str, user: User, app: App) -> JSONResponse:
    return JSONResponse({"research_id": await service.run_now(id, user, app)}, status_code=202)


@router.post("/standing/{id}/pause", response_model=StandingView)
async def pause(id: str, user: User, app: App) -> StandingView:
    return await service.pause(id, user, app)


@router.post("/standing/{id}/resume", response_model=StandingView)
async def resume(id: str, user: User, app: App) -> StandingView:
    return await service.resume(id, user, app)


@router.delete("/standing/{id}", response_model=Deleted)
async def delete(id: str, user: User, app: App) -> Deleted:
    """Stops it for good; its runs stay in the library."""
    await service.delete(id, user, app)
    return Deleted(id=id)
