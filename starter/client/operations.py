"""What an operator asks of a front end, answered here like everything else it asks of Temporal:
whether Temporal answers now (the web app's `GET /api/health`), and this process's metrics (its
Temporal client's requests, failures and latency: the web app's `/metrics`).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio.api.workflowservice.v1 import GetSystemInfoRequest

from starter.client.session import Session
from telemetry import metrics


async def temporal_answers(session: Session, timeout: timedelta) -> bool:
    """Whether Temporal answers within TIMEOUT (connecting first if need be): any failure, a
    refused connection or a late answer alike, is "no"."""
    try:
        async with asyncio.timeout(timeout.total_seconds() + 1):
            client = await session.connect()
            await client.workflow_service.get_system_info(GetSystemInfoRequest(), timeout=timeout)
    except Exception:  # noqa: BLE001 - every failure means the same here: not reachable
        return False
    return True


async def metrics_exposition() -> bytes:
    """This process's Prometheus metrics (the SDK runtime's exporter, when it is installed:
    telemetry/metrics.py); empty otherwise."""
    runtime = metrics.installed()
    return await asyncio.to_thread(runtime.exposition) if runtime else b""
