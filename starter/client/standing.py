"""Standing research: a question researched again on a schedule, one Temporal Schedule each.

The CLI (`schedule ...`), the web API (`/api/standing`), the pages and the MCP tools all go through
here. A standing research is a Schedule whose id is `standing-<hex>` and whose action starts
`DeepResearchWorkflow` with the request built as for any research (`research_client.scheduled_start`:
the same owner, memo and summary), its `standing_id` set: each run is ordinary research (steerable,
budgeted, stored in the library), with the id Temporal gives it (the schedule's id plus the time).

- Overlapping runs are skipped, not stacked (`ScheduleOverlapPolicy.SKIP`); after downtime the
  missed runs within the catch-up window are caught up, and with SKIP that is one run.
- Budgets: each run has the request's `max_tokens` / `max_cost_usd`; `max_runs` stops the schedule
  after that many scheduled runs (Temporal's `remaining_actions`), a budget in all.
- Owners: the schedule's memo says whose it is; another user's answers as an unknown id does.

Failures a person can cause are `ClientError` (one line, an exit code); the web app maps them.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field
from temporalio.client import (
    Client,
    Schedule,
    ScheduleDescription,
    ScheduleHandle,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
)
from temporalio.service import RPCError, RPCStatusCode

from config import Settings
from starter.client import research_client
from starter.client.errors import ClientError, Kind
from starter.client.temporal import shown
from workflows.models import ResearchRequest

PREFIX = "standing-"
STANDING_ID = re.compile(r"standing-[0-9a-f]{8}")
#: Shortest and longest `every`: a run a minute is already a lot of research.
MIN_EVERY, MAX_EVERY = timedelta(minutes=1), timedelta(days=366)
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
#: How long a missed run may be late and still run (once, with SKIP) after downtime.
MAX_CATCHUP = timedelta(days=1)
#: How long "run now" looks for the run it started.
RUN_NOW_WAIT_S = 15.0
MAX_NOTIFY = 5


class StandingRun(BaseModel):
    research_id: str
    started_at: datetime | None = None
    status: str
    #: Whether the run found changes since the run before (None while it runs).
    changed: bool | None = None


class StandingView(BaseModel):
    """INTERFACE.md's standing research object."""

    id: str
    question: str
    every: str | None = None
    cron: str | None = None
    paused: bool
    next_run_at: datetime | None = None
    last_research_id: str | None = None
    owner: str
    max_runs: int | None = None
    remaining_runs: int | None = None
    notify: int = 0
    created_at: datetime | None = None


class StandingDetail(StandingView):
    runs: list[StandingRun] = Field(default_factory=list)


def parse_every(text: str) -> timedelta:
    """`30m`, `12h`, `1d`, `7d`, `2w`, `1d12h`: one line naming what is allowed otherwise."""
    given = str(text).strip().lower()
    parts = re.findall(r"(\d+)\s*([smhdw])", given)
    if not parts or re.sub(r"\d+\s*[smhdw]", "", given).strip():
        raise ClientError(
            f"invalid every {shown(given)}: use a duration such as 30m, 12h, 1d or 7d", Kind.INVALID
        )
    every = timedelta(seconds=sum(int(n) * UNITS[u] for n, u in parts))
    if not MIN_EVERY <= every <= MAX_EVERY:
        raise ClientError(f"invalid every {shown(given)}: use 1m to 366d", Kind.INVALID)
    return every


def check_cron(expr: str) -> str:
    expr = " ".join(str(expr).split())
    fields = expr.split(" ")
    if not (5 <= len(fields) <= 7) and not expr.startswith("@"):
        raise ClientError(
            f"invalid cron {shown(expr)}: use five fields, e.g. '0 8 * * 1' (Mondays 08:00 UTC)",
            Kind.INVALID,
        )
    return expr


def check_notify(urls: list[str]) -> list[str]:
    cleaned = [u.strip() for u in urls if u and u.strip()]
    if len(cleaned) > MAX_NOTIFY:
        raise ClientError(f"invalid notify: at most {MAX_NOTIFY} URLs", Kind.INVALID)
    for url in cleaned:
        if not re.fullmatch(r"https?://[^\s/?#]+[^\s]*", url) or "@" in url.split("/")[2]:
            raise ClientError(
                f"invalid notify URL {shown(url)}: use http(s)://host/path", Kind.INVALID
            )
    return cleaned


def spec_of(every: str | None, cron: str | None) -> tuple[ScheduleSpec, timedelta]:
    """The schedule's spec and its catch-up window."""
    if bool(every) == bool(cron):
        raise ClientError(
            "give either every (e.g. 1d) or cron (e.g. '0 8 * * 1'), not both", Kind.INVALID
        )
    if every:
        interval = parse_every(every)
        return ScheduleSpec(intervals=[ScheduleIntervalSpec(every=interval)]), min(
            interval, MAX_CATCHUP
        )
    return ScheduleSpec(cron_expressions=[check_cron(cron or "")]), MAX_CATCHUP


async def create(
    client: Client,
    cfg: Settings,
    request: ResearchRequest,
    owner: str,
    *,
    every: str | None = None,
    cron: str | None = None,
    notify: list[str] | None = None,
    max_runs: int | None = None,
) -> str:
    """A new standing research of OWNER's; its id."""
    spec, catchup = spec_of(every, cron)
    if max_runs is not None and not 1 <= max_runs <= 10_000:
        raise ClientError(f"invalid max_runs {max_runs}: use 1 to 10000", Kind.INVALID)
    standing_id = f"{PREFIX}{uuid.uuid4().hex[:8]}"
    request = request.model_copy(
        update={"standing_id": standing_id, "notify": check_notify(notify or [])}
    )
    run = research_client.StartResearch(request=request, owner=owner, id=standing_id)
    schedule = Schedule(
        action=research_client.scheduled_start(cfg, run),
        spec=spec,
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=catchup),
        state=ScheduleState(
            note="standing research",
            limited_actions=max_runs is not None,
            remaining_actions=max_runs or 0,
        ),
    )
    memo = {
        "owner": owner,
        "question": request.query,
        "every": (every or "").strip().lower() or None,
        "cron": check_cron(cron) if cron else None,
        "max_runs": max_runs,
        "notify": len(request.notify),
    }
    try:
        await client.create_schedule(standing_id, schedule, memo=memo)
    except RPCError as err:
        raise ClientError(f"the schedule was refused: {err.message}", Kind.INVALID) from None
    await _listed(client, standing_id, present=True)
    return standing_id


async def _listed(client: Client, standing_id: str, present: bool) -> None:
    """Wait (a few seconds at most) until Temporal's list of schedules shows the change, so a
    list right after a create or a delete agrees with it."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        found = False
        async for item in await client.list_schedules():
            found = found or item.id == standing_id
        if found == present:
            return
        await asyncio.sleep(0.2)


async def owned(client: Client, cfg: Settings, standing_id: str, owner: str) -> ScheduleDescription:
    """OWNER's standing research STANDING_ID described, or `ClientError` (the same for another
    user's as for one that does not exist)."""
    if not STANDING_ID.fullmatch(str(standing_id)):
        raise unknown(standing_id)
    try:
        described = await client.get_schedule_handle(standing_id).describe()
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:
            raise unknown(standing_id) from None
        raise
    if str((await described.memo()).get("owner") or cfg.research_user) != owner:
        raise unknown(standing_id)
    return described


def unknown(standing_id: str) -> ClientError:
    return ClientError(f"no standing research with id {shown(str(standing_id))}", Kind.NOT_FOUND)


async def view(described: ScheduleDescription) -> StandingView:
    memo: Mapping[str, Any] = await described.memo()
    info, state = described.info, described.schedule.state
    recent = [a.action for a in info.recent_actions]
    last = getattr(recent[-1], "workflow_id", None) if recent else None
    running = [getattr(a, "workflow_id", None) for a in info.running_actions]
    return StandingView(
        id=described.id,
        question=str(memo.get("question") or ""),
        every=memo.get("every"),
        cron=memo.get("cron"),
        paused=state.paused,
        next_run_at=None
        if state.paused or not info.next_action_times
        else info.next_action_times[0],
        last_research_id=running[-1] if running else last,
        owner=str(memo.get("owner") or ""),
        max_runs=memo.get("max_runs"),
        remaining_runs=state.remaining_actions if state.limited_actions else None,
        notify=int(memo.get("notify") or 0),
        created_at=info.created_at,
    )


async def list_standing(client: Client, cfg: Settings, owner: str) -> list[StandingView]:
    """OWNER's standing research, newest first."""
    ids: list[str] = []
    async for item in await client.list_schedules():
        if item.id.startswith(PREFIX):
            memo = await item.memo()
            if str(memo.get("owner") or cfg.research_user) == owner:
                ids.append(item.id)
    views: list[StandingView] = []
    for standing_id in ids:
        try:
            views.append(await view(await owned(client, cfg, standing_id, owner)))
        except ClientError:
            continue  # deleted since it was listed
    return sorted(views, key=lambda v: v.created_at or datetime.min, reverse=True)


async def runs(
    client: Client, described: ScheduleDescription, changed: Mapping[str, bool]
) -> list[StandingRun]:
    """The runs, newest first: Temporal's visibility (every run it keeps) and the schedule's
    recent actions (the newest, at once), with whether each finished run found changes."""
    seen: dict[str, StandingRun] = {}
    query = (
        f"WorkflowType = '{research_client.WORKFLOW_TYPE}' "
        f"AND TemporalScheduledById = '{described.id}'"
    )
    try:
        async for wf in client.list_workflows(query, limit=200):
            status = wf.status.name.lower() if wf.status else "unknown"
            seen[wf.id] = StandingRun(
                research_id=wf.id,
                started_at=wf.start_time,
                status=status,
                changed=changed.get(wf.id) if status != "running" else None,
            )
    except RPCError:
        pass  # a visibility store without that attribute: the recent actions still answer
    for result in described.info.recent_actions:
        wid = getattr(result.action, "workflow_id", None)
        if wid and wid not in seen:
            seen[wid] = StandingRun(
                research_id=wid, started_at=result.started_at, status="running", changed=None
            )
    return sorted(seen.values(), key=lambda r: r.started_at or datetime.min, reverse=True)


async def run_now(client: Client, cfg: Settings, standing_id: str, owner: str) -> str:
    """Start a run at once; the research id of the run. One already running: `ClientError` (409)."""
    described = await owned(client, cfg, standing_id, owner)
    running = [getattr(a, "workflow_id", "") for a in described.info.running_actions]
    if running:
        raise ClientError(
            f"a run of {standing_id} is already running: {running[-1]} (runs never overlap)",
            Kind.CONFLICT,
        )
    before = {getattr(a.action, "workflow_id", "") for a in described.info.recent_actions}
    handle = client.get_schedule_handle(standing_id)
    await handle.trigger(overlap=ScheduleOverlapPolicy.SKIP)
    deadline = time.monotonic() + RUN_NOW_WAIT_S
    while time.monotonic() < deadline:
        info = (await handle.describe()).info
        started = [getattr(a, "workflow_id", "") for a in info.running_actions] + [
            getattr(a.action, "workflow_id", "") for a in info.recent_actions
        ]
        new = [wid for wid in started if wid and wid not in before]
        if new:
            return new[-1]
        await asyncio.sleep(0.2)
    raise ClientError(
        f"the run of {standing_id} did not start within {RUN_NOW_WAIT_S:.0f}s", Kind.NO_ANSWER
    )


async def pause(client: Client, cfg: Settings, standing_id: str, owner: str) -> StandingView:
    await owned(client, cfg, standing_id, owner)
    handle: ScheduleHandle = client.get_schedule_handle(standing_id)
    await handle.pause(note=f"paused by {owner}")
    return await view(await handle.describe())


async def resume(client: Client, cfg: Settings, standing_id: str, owner: str) -> StandingView:
    await owned(client, cfg, standing_id, owner)
    handle = client.get_schedule_handle(standing_id)
    await handle.unpause(note=f"resumed by {owner}")
    return await view(await handle.describe())


async def delete(client: Client, cfg: Settings, standing_id: str, owner: str) -> None:
    """Stop it for good; its runs stay in the library (and a running one finishes)."""
    await owned(client, cfg, standing_id, owner)
    await client.get_schedule_handle(standing_id).delete()
    await _listed(client, standing_id, present=False)
