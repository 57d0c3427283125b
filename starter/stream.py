"""Following a research's event stream from outside: `watch`, the attached `research`, the MCP server.

The workflow keeps its events in its state and answers the `events(since)` query (see
workflows/events.py); `EventStream` polls that query with backoff: 0.25 s after something
happened, stretching to 2 s while nothing does (a research waiting a day for an answer costs one
cheap query every 2 s, and nothing in its history). Why not a long-poll update that waits in the
workflow for the next event: every update is written into the workflow's history (accepted and
completed events), so a watcher left open for a day would grow the history it watches; a query
writes nothing. The end of the research is not polled for: `handle.result()` waits for it.

`seq` is gapless, so a client that reconnects with `since` misses nothing the workflow still
keeps, and sees plainly (a first seq above `since + 1`) when more than the kept 500 went by.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from temporalio.client import WorkflowHandle
from temporalio.service import RPCError

from starter.progress import WIDTH, clip, fit, say
from starter.temporal import CliError, is_not_found, query_events
from workflows.events import Event, EventKind

#: The poll interval right after new events, and the longest it stretches to while none come.
FAST_S, SLOW_S = 0.25, 2.0
BACKOFF = 1.6


class EventStream:
    """The events of one research after `since`, one query per `poll`."""

    def __init__(self, handle: WorkflowHandle, since: int = 0) -> None:
        self.handle = handle
        self.seq = max(since, 0)
        self.delay = FAST_S
        #: The question or review the research waits for (the last request not yet answered).
        self.pending: Event | None = None
        self.complained: set[str] = set()

    async def poll(self, tolerant: bool = True) -> list[Event]:
        """The events after the last one seen. `tolerant`: a worker that does not answer is said
        once and retried, not fatal (it may be restarting). An unknown id always raises."""
        try:
            batch = await query_events(self.handle, self.seq)
        except CliError as err:
            if not tolerant:
                raise
            self._once(f"waiting: {err} (still trying)")
            return []
        except RPCError as err:
            if is_not_found(err) or not tolerant:
                raise
            return []  # e.g. the first workflow task has not run yet
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

    async def pause(self, end: asyncio.Future) -> None:
        """Wait before the next poll: the current backoff, or less if the research ends."""
        await asyncio.wait({end}, timeout=self.delay)

    def _once(self, message: str) -> None:
        if message not in self.complained:
            self.complained.add(message)
            say(message)


def line(event: Event) -> str:
    """One terminal line: `» stage` for a stage, the event's own text indented for the rest."""
    if event.kind is EventKind.STAGE:
        return f"» {event.text}"
    return f"  {clip(event.text, 400)}"  # wrapped to the terminal by the printer


class EventPrinter:
    """Prints events as they come: lines for a person, or one JSON object a line (`--json`)."""

    def __init__(
        self, out: TextIO | None = None, as_json: bool = False, times: bool = False
    ) -> None:
        self.out, self.as_json, self.times = out, as_json, times

    def show(self, events: list[Event]) -> None:
        out = self.out or sys.stderr
        for event in events:
            if self.as_json:
                print(event.model_dump_json(), file=out, flush=True)
                continue
            if event.kind is EventKind.DONE:
                for note in event.data.get("notes") or []:
                    print("\n".join(fit(f"  note: {clip(str(note), 400)}")), file=out)
            prefix = f"{event.at.astimezone():%H:%M:%S} " if self.times else ""
            # 80 columns in all, a command kept whole; wrapped lines indented under the text
            wrapped = fit(line(event), WIDTH - len(prefix))
            print(
                "\n".join(
                    [prefix + wrapped[0], *(" " * len(prefix) + rest for rest in wrapped[1:])]
                ),
                file=out,
                flush=True,
            )
