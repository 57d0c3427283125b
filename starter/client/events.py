"""A research's events as a client follows them: one `events` query per poll, backing off while
nothing happens, tolerant of a worker that is restarting. The CLI prints them (starter/cli/stream.py),
the MCP server sends them as progress notifications."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from temporalio.service import RPCError

from settings import Settings
from starter.client.errors import ClientError, Kind
from starter.client.public import public_all
from starter.client.temporal import ResearchHandle, query_events
from workflows.events import Event, EventKind


def say(line: str) -> None:
    """A notice about the stream itself, on stderr (stdout is the report, or MCP's protocol)."""
    print(line, file=sys.stderr, flush=True)


#: The poll interval right after new events, and the longest it stretches to while none come.
FAST_S, SLOW_S = 0.25, 2.0
BACKOFF = 1.6


class EventStream:
    """The events of one research after `since`, one query per `poll`."""

    def __init__(self, handle: ResearchHandle, since: int = 0, *, cfg: Settings) -> None:
        self.handle = handle
        #: The settings its events are shown under (local sources by name: `public`).
        self.cfg = cfg
        self.seq = max(since, 0)
        self.delay = FAST_S
        #: The question or review the research waits for (the last request not yet answered).
        self.pending: Event | None = None
        self.complained: set[str] = set()

    async def poll(self, tolerant: bool = True) -> list[Event]:
        """The events after the last one seen, as people may see them. `tolerant`: a worker that
        does not answer is said once and retried, not fatal (it may be restarting). An unknown id
        always raises."""
        try:
            batch = public_all(await query_events(self.handle, self.seq), self.cfg)
        except ClientError as err:
            if err.kind is Kind.NOT_FOUND or not tolerant:
                raise
            if err.kind is Kind.UNREACHABLE and isinstance(err.__cause__, RPCError):
                return []  # e.g. the first workflow task has not run yet
            self._once(f"waiting: {err} (still trying)")
            return []
        if batch and batch[0].seq > self.seq + 1:
            say(
                f"note: events {self.seq + 1} to {batch[0].seq - 1} are no longer kept "
                "(a research keeps its last 500)"
            )
        for event in batch:
            if event.kind in (EventKind.QUESTION, EventKind.REVIEW_REQUESTED):
                self.pending = event
            elif event.kind in (EventKind.ANSWER, EventKind.REVIEW, EventKind.DONE):
                self.pending = None
        if batch:
            self.seq = batch[-1].seq
        self.delay = FAST_S if batch else min(self.delay * BACKOFF, SLOW_S)
        return batch

    async def pause(self, end: asyncio.Future[Any]) -> None:
        """Wait before the next poll: the current backoff, or less if the research ends."""
        await asyncio.wait({end}, timeout=self.delay)

    def _once(self, message: str) -> None:
        if message not in self.complained:
            self.complained.add(message)
            say(message)
