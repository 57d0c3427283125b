"""`GET /api/health`: the app answers, and whether Temporal does (no sign-in needed, no detail)."""

from __future__ import annotations

from fastapi import APIRouter
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest

from starter.web.deps import RPC_TIMEOUT, App, within
from starter.web.models import Health

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Health)
async def health(app: App) -> Health:
    try:
        client = await app.temporal()
        await within(
            client.workflow_service.get_system_info(GetSystemInfoRequest(), timeout=RPC_TIMEOUT)
        )
        reachable = True
    except Exception:  # noqa: BLE001 - any failure (a 503 included) means "not reachable" here
        reachable = False
    return Health(temporal=reachable)
