"""`GET /api/health`: the app answers, and whether Temporal does (no sign-in needed, no detail)."""

from __future__ import annotations

from fastapi import APIRouter

from starter.client.operations import temporal_answers
from starter.web.deps import RPC_TIMEOUT, App
from starter.web.models import Health

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Health)
async def health(app: App) -> Health:
    return Health(temporal=await temporal_answers(app.session, RPC_TIMEOUT))
