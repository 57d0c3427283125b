"""`GET /api/research/{id}/events`: a research's events as Server-Sent Events, for any number of tabs.

Each research event is one SSE event: `id:` its seq, `event:` its kind, `data:` its JSON. A
stream resumes after `Last-Event-ID` (a browser sends it when it reconnects by itself) or
`?since=N`; a `heartbeat` event (`{"at": ...}`) comes at least every HEARTBEAT_S, so a stalled
stream is noticed; once the research is closed, its last events (asked again while its worker is
only too busy to answer: FINAL_TRIES), then an `end` event (`{"status", "outcome"}`) and the
response ends (a page's EventSource should then `close()`, or it reconnects and gets `end` again).
While no worker answers, an `unavailable` event says so once, and the stream keeps trying.

One `Poller` per research per process serves every open stream of it: it asks the workflow's
`events(since)` query from the lowest seq any of its streams has, then gives each stream only what
is newer than its own (so a late joiner gets its backlog, nobody gets an event twice). It polls
FAST_S after something happened, stretching by GROWTH to SLOW_S while nothing does (WAITING_S
while the research waits for a person), and at once when a stream joins or this process delivered
an answer, review or cancel. The end is not polled for: `handle.result()` long-polls Temporal for
it. A poller stops when its last stream goes or the research closes. Streams only read:
a closed tab cancels nothing but its own queue and, if it was the last, the poller's next query.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from settings import Settings
from starter.client import research_client
from starter.client.errors import ClientError, Kind
from starter.client.temporal import one_line, slow_or_stopped, unanswered, worker_polls
from starter.web.deps import (
    RPC_TIMEOUT,
    ApiError,
    App,
    Backend,
    Owned,
    Research,
    within,
)
from workflows.events import Event, EventKind

log = logging.getLogger(__name__)
router = APIRouter(tags=["events"])

FAST_S, SLOW_S, WAITING_S, GROWTH = 0.1, 1.0, 2.0, 1.5
HEARTBEAT_S = 10.0
#: How long to wait before asking Temporal again for the end when it could not be reached, and
#: before asking a closed research's busy worker again for its last events.
RETRY_END_S = 2.0
#: How many times a closed research's last events are asked for again while its worker is busy.
FINAL_TRIES = 5
#: Event kinds after which the research waits for a person: polling may slow down.
ASKING = (EventKind.QUESTION, EventKind.REVIEW_REQUESTED)
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@dataclass(eq=False)
class Subscriber:
    #: The last seq this stream was given.
    last: int
    queue: asyncio.Queue[tuple[str, Any]] = field(default_factory=asyncio.Queue)


class Poller:
    """The shared follower of one research in this process."""

    def __init__(
        self, hub: EventHub, research_id: str, handle: research_client.Handle, closed: bool
    ) -> None:
        self.hub, self.id, self.handle = hub, research_id, handle
        self.subscribers: set[Subscriber] = set()
        self.wake = asyncio.Event()
        self.closed = closed
        self.ending: dict[str, Any] = {}
        self.delay = FAST_S
        self.asking = False
        #: A stream joined while a query was out, from before that query's `since`.
        self.behind = False
        self.complained = False
        #: Queries asked again after the research closed, because one failed on a busy worker.
        self.final_tries = 0
        self.task = asyncio.create_task(self.run(), name=f"events {research_id}")

    async def run(self) -> None:
        ended = asyncio.create_task(self._ended())
        try:
            if self.closed:  # its outcome first, for `end` (one read of its history)
                await asyncio.wait({ended}, timeout=RPC_TIMEOUT.total_seconds())
            while self.subscribers:
                final = self.closed or ended.done()
                self.wake.clear()
                found = await self._poll()
                if self.behind:
                    continue  # a stream joined during the query, from further back: ask again now
                if final and found is None and await self._tail_may_come():
                    continue  # the last query failed on a busy worker: the log's tail first
                if final:
                    self._finish()
                    return
                cap = WAITING_S if self.asking else SLOW_S
                self.delay = FAST_S if found else min(self.delay * GROWTH, cap)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), self.delay)
        except Exception:  # a bug here must not end a research's streams with a false `end`
            log.exception("the event poller of %s failed", self.id)
            self._finish(close_only=True)
        finally:
            ended.cancel()

    def nudge(self) -> None:
        self.delay = FAST_S
        self.wake.set()

    async def _tail_may_come(self) -> bool:
        """Whether to ask a closed research once more for its last events rather than end the
        streams without them: while a worker polls (it is only busy), FINAL_TRIES times at most.
        With no worker, no query can answer: `end` at once, as before."""
        self.final_tries += 1
        if self.final_tries > FINAL_TRIES or not await worker_polls(self.handle):
            return False
        await asyncio.sleep(RETRY_END_S)
        return True

    async def _poll(self) -> bool | None:
        """Whether new events came; None when the query was not answered in time."""
        since = min(s.last for s in self.subscribers)
        self.behind = False
        try:
            batch: list[Event] = await within(
                research_client.events_as_sent(self.handle, since, RPC_TIMEOUT, cfg=self.hub.cfg)
            )
        except (ClientError, TimeoutError) as err:
            if isinstance(err, ClientError) and err.kind is Kind.NOT_FOUND:
                self.closed = True  # gone from Temporal: nothing more will come
                return False
            if not self.closed:
                await self._complain(err)
            return None if unanswered(err) else False
        self.complained = False
        for sub in self.subscribers:
            if sub.last < since:
                self.behind = True  # this batch does not reach back to it
                continue
            new = [event for event in batch if event.seq > sub.last]
            if new:
                sub.queue.put_nowait(("events", new))
                sub.last = new[-1].seq
        if batch:
            self.asking = batch[-1].kind in ASKING
        return bool(batch)

    async def _complain(self, err: BaseException) -> None:
        """Said once per outage: the worker is busy (it polls: still working) or gone (none
        polls), or Temporal does not answer; polling goes on."""
        if self.complained:
            return
        self.complained = True
        if unanswered(err):
            why = await slow_or_stopped(self.handle)
            # busy: the status line beside says "still working"; the log says what it waits for
            said = "waiting for its busy worker's next events" if why.retry_after_s else str(why)
            reason = f"{said} (still trying)"
        else:
            reason = (
                f"cannot follow research {self.id} right now: {one_line(str(err))} (still trying)"
            )
        for sub in self.subscribers:
            sub.queue.put_nowait(("unavailable", {"reason": reason}))

    async def _ended(self) -> None:
        """Waits for the research to close (following continue-as-new), then wakes the loop."""
        while True:
            try:
                ending = await research_client.ending(self.handle, timedelta(seconds=60))
            except ClientError as err:
                if err.kind is Kind.NOT_FOUND:
                    break  # Temporal forgot it: the end, with nothing more to say
                await asyncio.sleep(RETRY_END_S)
                continue
            self.ending = ending.model_dump(exclude_none=True)
            break
        self.wake.set()

    def _finish(self, close_only: bool = False) -> None:
        """Every stream gets `end` (or is closed to reconnect); no await here, so no stream can
        join this poller in between."""
        for sub in self.subscribers:
            sub.queue.put_nowait(
                ("close", None) if close_only else ("end", self.ending or {"status": "closed"})
            )
        self.subscribers.clear()
        self.hub.forget(self)


class EventHub:
    """The pollers of one process, by research id; CFG: the settings its events are shown under."""

    def __init__(self, cfg: Settings) -> None:
        self.cfg = cfg
        self.pollers: dict[str, Poller] = {}

    def join(self, research: Research, since: int) -> Subscriber:
        assert research.handle is not None
        sub = Subscriber(last=since)
        poller = self.pollers.get(research.id)
        if poller is None:
            poller = self.pollers[research.id] = Poller(
                self, research.id, research.handle, not research.running
            )
        poller.subscribers.add(sub)
        poller.nudge()
        return sub

    def leave(self, research_id: str, sub: Subscriber) -> None:
        poller = self.pollers.get(research_id)
        if poller is None or sub not in poller.subscribers:
            return
        poller.subscribers.discard(sub)
        if not poller.subscribers:
            self.forget(poller)
            poller.task.cancel()

    def nudge(self, research_id: str) -> None:
        """Something was just sent to the research from here: look for its events now."""
        poller = self.pollers.get(research_id)
        if poller is not None:
            poller.nudge()

    def forget(self, poller: Poller) -> None:
        if self.pollers.get(poller.id) is poller:
            del self.pollers[poller.id]

    async def close(self) -> None:
        tasks = [poller.task for poller in self.pollers.values()]
        self.pollers.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


# --- the endpoint --------------------------------------------------------------------------------


@router.get(
    "/research/{id}/events",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"text/event-stream": {}},
            "description": "one SSE event per research event",
        }
    },
)
async def research_events(
    research: Owned,
    app: App,
    since: Annotated[int, Query(ge=0, description="resume after this seq")] = 0,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    start = since
    if last_event_id is not None and last_event_id.strip():
        # ASCII digits only, and not too many: `²` is a digit to str.isdigit but not to int(),
        # and int() refuses thousands of digits (both were 500s)
        if not re.fullmatch(r"[0-9]{1,18}", last_event_id.strip()):
            raise ApiError(
                422, "invalid Last-Event-ID: use the seq of the last event received (0 or more)"
            )
        start = int(last_event_id.strip())
    return StreamingResponse(
        _stream(app, research, start), media_type="text/event-stream", headers=SSE_HEADERS
    )


async def _stream(app: Backend, research: Research, since: int) -> AsyncIterator[str]:
    yield "retry: 2000\n\n"
    if research.handle is None:  # only the library knows it: no events kept, already closed
        yield frame("end", {"status": research.state, "outcome": research.state})
        return
    sub = app.hub.join(research, since)
    try:
        beat = asyncio.get_running_loop().time() + HEARTBEAT_S
        while True:
            wait = beat - asyncio.get_running_loop().time()
            try:
                kind, payload = await asyncio.wait_for(sub.queue.get(), max(wait, 0))
            except TimeoutError:
                beat = asyncio.get_running_loop().time() + HEARTBEAT_S
                yield frame("heartbeat", {"at": datetime.now(UTC).isoformat()})
                continue
            if kind == "events":  # as the client hands them: local sources by name
                yield "".join(frame(e.kind.value, e.model_dump_json(), e.seq) for e in payload)
            elif kind == "close":
                return
            else:
                yield frame(kind, payload)
                if kind == "end":
                    return
    finally:
        app.hub.leave(research.id, sub)


def frame(kind: str, data: Any, seq: int | None = None) -> str:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}event: {kind}\ndata: {text}\n\n"
