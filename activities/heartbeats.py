"""Heartbeats for activities that mostly wait (an LLM answering, a page or index being read)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from temporalio import activity

T = TypeVar("T")

#: How often a waiting activity tells Temporal it is alive. The workflow's heartbeat timeout is a
#: few beats long, so a worker that dies mid-call is noticed in seconds, not after the call's
#: whole start-to-close timeout, and a cancellation reaches the activity at its next beat.
HEARTBEAT_EVERY_S = 5.0


async def with_heartbeats(work: Awaitable[T], details: Callable[[], Any] | None = None) -> T:
    """Await `work` while heartbeating in the background (LLM calls and page reads are long waits).

    `details`: what each beat records. Temporal keeps only the latest beat's details, so an
    activity that carries state in them (the LLM usage meter) must send it with every beat.
    """

    if activity.info().is_local:
        # A local activity has no heartbeat of its own: it runs inside the workflow task, whose
        # liveness the SDK keeps (a beat would only log "heartbeat failed: UnknownActivity").
        return await work

    async def beat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_EVERY_S)
            activity.heartbeat(*(() if details is None else (details(),)))

    beating = asyncio.create_task(beat())
    try:
        return await work
    finally:
        beating.cancel()
