"""How much research one person may have going: at most
RESEARCH_RUNNING_PER_USER running at once and RESEARCH_STARTS_PER_MINUTE started in a minute.

One user's 60 starts at once once took another user's light research from 1.3 s to 72 s: the
worker's slots are shared. `admitted` guards `research_client.start`, the one start of the CLI, the
MCP server and the web app, so the three enforce the same limits; past one, a `ClientError` of kind
LIMITED with when to try again (HTTP 429 with Retry-After, exit 2, a tool error).

Counted from Temporal, so every replica and client sees the same numbers: one visibility list
of this deployment's research (its task queue) that is running or started within the minute, the
owner read from the memo `start` writes. Temporal's list lags a start by up to a second or so
(more with Elasticsearch), so the starts this process made in the last LAG_S count too (a running
one by a describe, which does not lag), and one user's starts through one process are checked one
at a time. Starts through other replicas in that same second may pass together: the limit is
exact per process and within a second's worth of starts across replicas.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from settings import Settings
from starter.client.errors import ClientError, Kind
from starter.client.temporal import WORKFLOW_TYPE

#: The window of RESEARCH_STARTS_PER_MINUTE; how long a start of this process counts before
#: Temporal's list is trusted to show it; the most rows one check reads from that list; and when a
#: person at the running limit is told to try again.
WINDOW_S, LAG_S, SCAN, RUNNING_RETRY_S = 60.0, 30.0, 5000, 30.0


class _Recent:
    """The starts this process made lately (per Temporal client and user), and one lock per user
    (per event loop)."""

    def __init__(self) -> None:
        self.starts: dict[tuple[int, str], list[tuple[float, str]]] = defaultdict(list)
        self.locks: dict[tuple[int, str], asyncio.Lock] = {}

    def lock(self, owner: str) -> asyncio.Lock:
        key = (id(asyncio.get_running_loop()), owner)
        return self.locks.setdefault(key, asyncio.Lock())

    def record(self, client: Client, owner: str, research_id: str) -> None:
        self.starts[(id(client), owner)].append((time.time(), research_id))

    def lately(self, client: Client, owner: str) -> list[tuple[float, str]]:
        cutoff = time.time() - max(WINDOW_S, LAG_S)
        key = (id(client), owner)
        kept = [(at, rid) for at, rid in self.starts.get(key, []) if at > cutoff]
        if kept:
            self.starts[key] = kept
        else:
            self.starts.pop(key, None)
        return kept


RECENT = _Recent()


@asynccontextmanager
async def admitted(
    client: Client,
    cfg: Settings,
    owner: str,
    default_owner: str,
    research_id: str,
    rpc_timeout: timedelta | None = None,
) -> AsyncIterator[None]:
    """Enter when OWNER may start one more research (else `ClientError`, LIMITED); the start made
    inside counts from then on. DEFAULT_OWNER: whose research without an owner memo is."""
    async with RECENT.lock(owner):
        await check(client, cfg, owner, default_owner, rpc_timeout)
        yield
        RECENT.record(client, owner, research_id)


async def check(
    client: Client,
    cfg: Settings,
    owner: str,
    default_owner: str,
    rpc_timeout: timedelta | None = None,
) -> None:
    running, started = await _listed(client, cfg, owner, default_owner, rpc_timeout)
    now = time.time()
    for at, rid in RECENT.lately(client, owner):
        started.setdefault(rid, at)
        if rid not in running and now - at < LAG_S and await _running(client, rid, rpc_timeout):
            running.add(rid)
    most = cfg.limits.running_per_user
    if len(running) >= most:
        raise ClientError(
            f"you have {len(running)} research running, the most at once per user ({most}): "
            "wait for one to finish, or cancel one",
            Kind.LIMITED,
            retry_after_s=RUNNING_RETRY_S,
        )
    lately = sorted(at for at in started.values() if now - at < WINDOW_S)
    per_minute = cfg.limits.starts_per_minute
    if len(lately) >= per_minute:
        wait = max(1.0, lately[-per_minute] + WINDOW_S - now)
        raise ClientError(
            f"you started {len(lately)} research in the last minute, the most per user "
            f"({per_minute}): try again in {wait:.0f} s",
            Kind.LIMITED,
            retry_after_s=wait,
        )


async def _listed(
    client: Client,
    cfg: Settings,
    owner: str,
    default_owner: str,
    rpc_timeout: timedelta | None,
) -> tuple[set[str], dict[str, float]]:
    """OWNER's research Temporal lists as running, and the start times of those started within
    the window (by id: a run that continued as new counts once)."""
    since = datetime.fromtimestamp(time.time() - WINDOW_S, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    query = (
        f"WorkflowType = '{WORKFLOW_TYPE}' AND TaskQueue = '{cfg.temporal.task_queue}' "
        f"AND (ExecutionStatus = 'Running' OR StartTime > '{since}')"
    )
    running: set[str] = set()
    started: dict[str, float] = {}
    async for wf in client.list_workflows(
        query, page_size=500, limit=SCAN, rpc_timeout=rpc_timeout
    ):
        if await _owner(wf, default_owner) != owner:
            continue
        if wf.status is WorkflowExecutionStatus.RUNNING:
            running.add(wf.id)
        at = wf.start_time.timestamp()
        started[wf.id] = min(at, started.get(wf.id, at))
    return running, started


async def _owner(wf: Any, default: str) -> str:
    try:
        return str(await wf.memo_value("owner", default))
    except Exception:  # noqa: BLE001 - an undecodable memo is nobody's
        return ""


async def _running(client: Client, research_id: str, rpc_timeout: timedelta | None) -> bool:
    try:
        described = await client.get_workflow_handle(research_id).describe(rpc_timeout=rpc_timeout)
    except RPCError:
        return False
    return described.status is WorkflowExecutionStatus.RUNNING
