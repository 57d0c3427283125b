"""Running several parts of the research at once, inside the workflow (deterministically).

`asyncio.gather` alone leaves the other parts running when one fails (a spent budget, a fatal
activity error): their activities would go on and change the state after the research moved on.
`together` cancels the rest first, waits for them to stop, then raises the first failure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")


async def both(first: Awaitable[A], second: Awaitable[B]) -> tuple[A, B]:
    """`together` for two parts of different types: both results; on the first failure, the
    other is cancelled."""
    tasks = (asyncio.ensure_future(first), asyncio.ensure_future(second))
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def together(parts: list[Awaitable[T]]) -> list[T]:
    """Every part's result, in order; on the first failure, the others are cancelled."""
    tasks = [asyncio.ensure_future(part) for part in parts]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
