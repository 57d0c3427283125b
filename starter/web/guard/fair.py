"""Heavy work of the web app shared fairly between users: `FairSlots`.

Rendering a very large report page takes a CPU for a second or more; one user's 12 loads of one
once held another user's API call for 23 s, because the pages were rendered one after another on
the event loop. Now a page's report is rendered in a thread, behind a `FairSlots` of WEB_RENDERS
slots of which one user holds at most WEB_RENDERS_PER_USER: a user's further renders wait, and
when a slot frees it goes to the user who waited with the fewest slots held (the longest waiting
among them), so one user's backlog never stands in front of another user's first page.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from starlette.requests import Request

T = TypeVar("T")


class FairSlots:
    def __init__(self, total: int, per_user: int) -> None:
        self.total = total
        self.per_user = per_user
        self.held: Counter[str] = Counter()
        #: Each user's waiters, in the order the users first waited (the round's order).
        self.waiting: dict[str, deque[asyncio.Future[None]]] = {}

    @asynccontextmanager
    async def slot(self, user: str) -> AsyncIterator[None]:
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(user, deque()).append(turn)
        self._grant()
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled():
                self._release(user)  # granted as it was cancelled: give it on
            else:
                self._forget(user, turn)
            raise
        try:
            yield
        finally:
            self._release(user)

    async def run(self, user: str, work: Callable[..., T], *args: Any) -> T:
        """WORK(*ARGS) in a thread, in USER's turn."""
        async with self.slot(user):
            return await asyncio.to_thread(work, *args)

    def _grant(self) -> None:
        while sum(self.held.values()) < self.total:
            ready = [u for u in self.waiting if self.held[u] < self.per_user]
            if not ready:
                return
            user = min(ready, key=lambda u: self.held[u])  # fewest held; ties: waited longest
            turn = self.waiting[user].popleft()
            if not self.waiting[user]:
                del self.waiting[user]
            else:  # the user goes to the back of the round
                self.waiting[user] = self.waiting.pop(user)
            self.held[user] += 1
            turn.set_result(None)

    def _release(self, user: str) -> None:
        self.held[user] -= 1
        if self.held[user] <= 0:
            del self.held[user]
        if user in self.waiting:  # just had a turn: to the back of the round
            self.waiting[user] = self.waiting.pop(user)
        self._grant()

    def _forget(self, user: str, turn: asyncio.Future[None]) -> None:
        queue = self.waiting.get(user)
        if queue is not None and turn in queue:
            queue.remove(turn)
            if not queue:
                del self.waiting[user]


def renders_of(request: Request) -> FairSlots:
    """The app's slots for rendering report pages (WEB_RENDERS, WEB_RENDERS_PER_USER)."""
    state = request.app.state
    found = getattr(state, "renders", None)
    if found is None:
        cfg = state.backend.cfg
        found = state.renders = FairSlots(cfg.web.renders, cfg.web.renders_per_user)
    return found
