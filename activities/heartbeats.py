"""Heartbeats for activities that mostly wait (an LLM answering, a page or index being read)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from temporalio import activity

T = TypeVar("T")

#: How often a waiting activity tells Temporal it is alive. The workflow's heartbeat timeout is a
#: few beats long, so a worker that dies mid-call is noticed in seconds, not after the call's
#: whole start-to-close timeout, and a cancellation reaches the activity at its next beat.
HEARTBEAT_EVERY_S = 5.0


async def with_heartbeats(work: Awaitable[T]) -> T:
    """Await `work` while heartbeating in the background (LLM calls and page reads are long waits)."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_EVERY_S)
            activity.heartbeat()

    beating = asyncio.create_task(beat())
    try:
        return await work
    finally:
        beating.cancel()
