"""`GET /api/health`: the app answers, and whether Temporal does (no sign-in needed, no detail)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest

from starter.web.deps import RPC_TIMEOUT, Backend, backend, within

router = APIRouter(tags=["health"])


@router.get("/health")
async def health(app: Annotated[Backend, Depends(backend)]) -> dict[str, bool]:
    try:
        client = await app.temporal()
        await within(
            client.workflow_service.get_system_info(GetSystemInfoRequest(), timeout=RPC_TIMEOUT)
        )
        reachable = True
    except Exception:  # noqa: BLE001 - any failure (a 503 included) means "not reachable" here
        reachable = False
    return {"ok": True, "temporal": reachable}
