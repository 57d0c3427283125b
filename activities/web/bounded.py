"""Extraction where it can be bounded and stopped: a few long-lived child processes with limits.

A document's size on the wire says little about what reading it costs: a 90 KB PDF whose content
stream inflates to 60 MiB of text operators drove a reader to 5.7 GB, and heavy HTML at the byte
cap costs tens of seconds of CPU. In a thread, such work cannot be cancelled, holds the PDF
lock, and can take the whole worker down. So every extraction runs in a child process:

- **memory**: each child runs under `RLIMIT_AS` (EXTRACT_MAX_MEMORY_MB, default 1024); a document
  that needs more fails with MemoryError (or the child dies) and costs that page only;
- **time**: a document that takes longer than EXTRACT_TIMEOUT_S (default 15 s) is abandoned and
  its child killed;
- **cancellation**: cancelling the awaiting activity kills the child within 0.1 s;
- **output**: at most MAX_TEXT_CHARS of text come back (the PDF reader also stops early, see
  extraction.py), so nothing large crosses back into the worker.

A child runs any module-level function it is sent (`run_now`): web pages go through `extract`, the
local corpus's files through `activities.corpus.reader.documents_of` (its own caps on what comes back).

Children are forked from a `forkserver` that has the extraction libraries imported already, so a
killed child is replaced in milliseconds, and nothing is forked from the worker's own threads.
The cost for a normal page is one round trip through a pipe (about 1 ms; see the README).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import queue
import resource
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar, cast

from activities.web.extraction import Extracted, extract

#: The lane of the web's pages (a corpus file's lane is its folder: `Lanes`).
WEB_LANE = "web"
#: Longest text one document may yield; a research keeps far less (its passages, 4,000 chars).
MAX_TEXT_CHARS = 2_000_000
_POLL_S = 0.1
T = TypeVar("T")
#: What a child sends back: ("ok", the function's result), or ("limit" | "unreadable", why).
_Answer = tuple[str, Any]
#: Imported once in the forkserver, so a child (a new one after a kill too) starts with the
#: functions it runs loaded: web pages' and the local corpus's files'.
PRELOAD = (__name__, "activities.corpus.reader")


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 1024
    timeout_s: float = 15.0
    processes: int = 2


class ExtractionLimit(ValueError):
    """The document needed more memory or time than a page may have: it will not read on a retry."""


def _serve(conn: Connection, memory_mb: int) -> None:
    """The child's loop: one call in (a function and its arguments), one answer out, until the
    parent closes the pipe."""
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # pypdf logs what it repairs in a damaged PDF; the child has no handler, so logging's last
    # resort would print it on the caller's terminal (`starter index`). The reason a file could
    # not be read comes back in the answer instead.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    while True:
        try:
            function, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            conn.send(("ok", function(*args)))
        except MemoryError:
            conn.send(("limit", f"reading it needed more than {memory_mb} MiB"))
            return  # a process that ran out of memory is not trusted with the next document
        except ValueError as err:
            conn.send(("unreadable", str(err)))
        except Exception as err:  # noqa: BLE001 - any parser failure is this document's, not the worker's
            conn.send(("unreadable", f"{type(err).__name__}: {err}"))


def _extract_page(
    body: bytes, content_type: str, url: str | None, charset: str | None
) -> Extracted:
    """`extract` in a child, its title and text capped."""
    found = extract(body, content_type, url, charset)
    return Extracted(found.title[:300], found.text[:MAX_TEXT_CHARS], found.method)


class _Child:
    def __init__(self, context: Any, memory_mb: int) -> None:
        self.conn, child_end = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child_end, memory_mb), daemon=True, name="extraction"
        )
        self.process.start()
        child_end.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.join(2)
        self.conn.close()


class ExtractionPool:
    """At most `limits.processes` documents are read at once; the others wait for a child, in
    turns between lanes (`Lanes`)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(list(PRELOAD))
        self._idle: queue.LifoQueue[_Child | None] = queue.LifoQueue()
        for _ in range(limits.processes):
            self._idle.put(None)  # a slot; its child starts on first use
        self._lanes = Lanes(limits.processes)

    async def extract(
        self, body: bytes, content_type: str, url: str | None, charset: str | None
    ) -> Extracted:
        cancelled = threading.Event()
        try:
            request = (_extract_page, (body, content_type, url, charset))
            return await asyncio.to_thread(self._run, request, cancelled, WEB_LANE)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    def extract_now(self, body: bytes, content_type: str) -> Extracted:
        """`extract`, for a caller that is a thread of its own."""
        return self.run_now(_extract_page, body, content_type, None, None)

    def run_now(self, function: Callable[..., T], *args: Any, lane: str = WEB_LANE) -> T:
        """`function(*args)` in a child, with the limits, for a caller that is a thread of its own
        (the local corpus's indexing: its LANE is the corpus folder). `function` is a module-level
        function (it is sent by name); what it raises comes back as ValueError (its message) or
        ExtractionLimit."""
        # The child's answer is what `function(*args)` returned, pickled across the pipe.
        return cast(T, self._run((function, args), threading.Event(), lane))

    def _run(self, request: tuple[Any, ...], cancelled: threading.Event, lane: str) -> Any:
        self._lanes.acquire(lane, cancelled)
        try:
            return self._in_child(request, cancelled)
        finally:
            self._lanes.release()

    def _in_child(self, request: tuple[Any, ...], cancelled: threading.Event) -> Any:
        child = self._idle.get()
        try:
            if child is None or not child.process.is_alive():
                child = _Child(self._context, self.limits.memory_mb)
            child.conn.send(request)
            answer = self._wait(child, cancelled)
        except BaseException:
            if child is not None:
                child.kill()
            self._idle.put(None)
            raise
        if answer[0] == "limit":
            child.kill()
            child = None
        self._idle.put(child)
        kind, *rest = answer
        if kind == "ok":
            return rest[0]
        if kind == "limit":
            raise ExtractionLimit(rest[0])
        raise ValueError(rest[0])

    def _wait(self, child: _Child, cancelled: threading.Event) -> _Answer:
        deadline = time.monotonic() + self.limits.timeout_s
        while not child.conn.poll(_POLL_S):
            if cancelled.is_set():
                raise ExtractionLimit("extraction cancelled")
            if time.monotonic() > deadline:
                raise ExtractionLimit(f"reading it took longer than {self.limits.timeout_s:g} s")
        try:
            answer: _Answer = child.conn.recv()  # what `_serve` sent
            return answer
        except (EOFError, OSError):
            raise ExtractionLimit(
                f"the reader stopped (it needs more than {self.limits.memory_mb} MiB or crashed)"
            ) from None

    def close(self) -> None:
        while not self._idle.empty():
            child = self._idle.get_nowait()
            if child is not None:
                child.kill()


class Lanes:
    """The pool's children handed out in turns: each document waits in its lane
    (one per corpus folder, so one per user's uploads, and one for the web's pages), and a freed
    child goes to the lane served longest ago. One user's 16 slow documents (15 s each) once held
    another user's research from 1.3 s to 10.5 s; now the other's next document waits for one
    child to come free, never for the backlog."""

    def __init__(self, slots: int) -> None:
        self.free = slots
        self.lock = threading.Lock()
        self.waiting: dict[str, deque[threading.Event]] = {}
        self.served: dict[str, float] = {}

    def acquire(self, lane: str, cancelled: threading.Event) -> None:
        turn = threading.Event()
        with self.lock:
            self.waiting.setdefault(lane, deque()).append(turn)
            self._grant()
        while not turn.wait(_POLL_S):
            if cancelled.is_set():
                with self.lock:
                    if not turn.is_set():
                        self._forget(lane, turn)
                        raise ExtractionLimit("extraction cancelled")
                self.release()  # granted as it was cancelled: give it on
                raise ExtractionLimit("extraction cancelled")

    def release(self) -> None:
        with self.lock:
            self.free += 1
            self._grant()

    def _grant(self) -> None:
        while self.free > 0 and self.waiting:
            lane = min(self.waiting, key=lambda name: self.served.get(name, float("-inf")))
            turns = self.waiting[lane]
            turn = turns.popleft()
            if not turns:
                del self.waiting[lane]
            self.served[lane] = time.monotonic()
            if len(self.served) > 10_000:  # forget lanes no one waits in
                self.served = {k: v for k, v in self.served.items() if k in self.waiting}
            self.free -= 1
            turn.set()

    def _forget(self, lane: str, turn: threading.Event) -> None:
        turns = self.waiting.get(lane)
        if turns is not None and turn in turns:
            turns.remove(turn)
            if not turns:
                del self.waiting[lane]


@functools.lru_cache(maxsize=1)
def pool() -> ExtractionPool:
    """The worker's (or the starter's) one pool, with the configured limits."""
    from settings import settings

    config = settings()
    return ExtractionPool(
        Limits(
            memory_mb=config.crawl.extract_max_memory_mb,
            timeout_s=config.crawl.extract_timeout_s,
            processes=config.crawl.extract_processes,
        )
    )


async def extract_bounded(
    body: bytes, content_type: str, url: str | None, charset: str | None
) -> Extracted:
    return await pool().extract(body, content_type, url, charset)


def close_pool() -> None:
    """Stop the extraction children (if any were started); the worker calls it when it stops."""
    if pool.cache_info().currsize:
        pool().close()
