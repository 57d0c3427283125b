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
- Caps (STANDING_MAX_PER_USER, STANDING_MAX_RUNS_PER_DAY) are counted and used holding the
  user's lease in the library (quota_locks.py), so concurrent creates on any replica cannot all
  pass one count.

Failures a person can cause are `ClientError` (one line, an exit code); the web app maps them.
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, ParamSpec, TypeVar

from temporalio.client import (
    Client,
    Schedule,
    ScheduleDescription,
    ScheduleHandle,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
)
from temporalio.service import RPCError, RPCStatusCode

from activities.notify import receivers
from settings import Settings
from starter.client import library, quota_locks, research_client
from starter.client.errors import ClientError, Kind
from starter.client.requests import build_request
from starter.client.schedule_owners import (
    UNMARKED_QUERY,
    ids_listed,
    owner_attribute_ready,
    owner_attributes,
    owner_query,
)
from starter.client.schedule_pace import check_cron, check_pace, runs_per_day, spec_of
from starter.client.session import Session
from starter.client.standing_views import (  # noqa: F401 - what a standing research looks like
    Receiver,
    StandingDetail,
    StandingRun,
    StandingView,
    detail,
    receivers_of,
    runs,
    view,
)
from starter.client.temporal import shown, temporal_errors
from workflows.models import ResearchRequest

P = ParamSpec("P")
T = TypeVar("T")

PREFIX = "standing-"
STANDING_ID = re.compile(r"standing-[0-9a-f]{8}")
#: How long "run now" looks for the run it started.
RUN_NOW_WAIT_S = 15.0
MAX_NOTIFY = 5


def _translated(call: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """CALL with Temporal's failures as `ClientError`s: no front end sees the SDK's exceptions."""

    @functools.wraps(call)
    async def translated(*args: P.args, **kwargs: P.kwargs) -> T:
        with temporal_errors():
            return await call(*args, **kwargs)

    return translated


async def create_standing(
    session: Session,
    values: Mapping[str, Any],
    *,
    owner: str | None = None,
    every: str | None = None,
    cron: str | None = None,
    notify: list[str] | None = None,
    max_runs: int | None = None,
    names: Mapping[str, str] | None = None,
) -> str:
    """Research VALUES again on a schedule (EVERY or CRON), OWNER's (default: the session's
    user's): the request built and readied as a research's is (`research_client.start_research`),
    the schedule checked before anything connects; its id. The one way all three front ends do
    it."""
    who = owner or session.user
    request = build_request(values, names)
    spec_of(every, cron)  # bad input before any connection
    request = await research_client.ready(request, session, names, owner=who)
    client = await session.connect()
    return await create(
        client, session.cfg, request, who, every=every, cron=cron, notify=notify, max_runs=max_runs
    )


async def show(session: Session, standing_id: str, owner: str | None = None) -> StandingDetail:
    """OWNER's standing research with its runs (each saying whether it found changes) and its
    own receivers; another user's is unknown."""
    client = await session.connect()
    described = await owned(client, session.cfg, standing_id, owner or session.user)
    changed = await library.changed_runs(session, standing_id)
    return await detail(client, session.cfg, described, changed)


async def listed_with_changes(
    session: Session, owner: str | None = None
) -> list[tuple[StandingView, bool | None]]:
    """OWNER's standing research, each with whether its last run found changes (None: no
    finished run says)."""
    views = await list_standing(await session.connect(), session.cfg, owner or session.user)
    found = []
    for shown_view in views:
        changed = await library.changed_runs(session, shown_view.id)
        found.append((shown_view, changed.get(shown_view.last_research_id or "")))
    return found


async def check_notify(cfg: Settings, urls: list[str]) -> list[str]:
    """The `notify` URLs normalised, judged and resolved as the worker will (one line each
    otherwise): `0177.0.0.1`, `localhost.` and friends never get as far as a delivery."""
    cleaned = [u.strip() for u in urls if u and u.strip()]
    if len(cleaned) > MAX_NOTIFY:
        raise ClientError(f"invalid notify: at most {MAX_NOTIFY} URLs", Kind.INVALID)
    plain: list[str] = []
    for url in cleaned:
        try:
            plain.append(await receivers.checked(url, cfg.notify.webhook_allow_private))
        except receivers.BadReceiver as err:
            raise ClientError(
                f"invalid notify URL {shown(url)}: {err.reason}", Kind.INVALID
            ) from None
    return plain


@_translated
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
    """A new standing research of OWNER's; its id. It is created paused and measured as Temporal
    compiled it (faster than a run a minute: refused, INVALID; past OWNER's caps on schedules or
    runs a day: refused, LIMITED), and only then set going."""
    spec, catchup = spec_of(every, cron)
    if max_runs is not None and not 1 <= max_runs <= 10_000:
        raise ClientError(f"invalid max_runs {max_runs}: use 1 to 10000", Kind.INVALID)
    notify = await check_notify(cfg, notify or [])
    async with quota_locks.held(cfg, f"standing:{owner}"):  # one create of OWNER's at a time
        standing_id = await _create(
            client, cfg, request, owner, spec, catchup, every, cron, notify, max_runs
        )
    await _listed(client, owner, standing_id, present=True)
    return standing_id


async def _create(
    client: Client,
    cfg: Settings,
    request: ResearchRequest,
    owner: str,
    spec: ScheduleSpec,
    catchup: timedelta,
    every: str | None,
    cron: str | None,
    notify: list[str],
    max_runs: int | None,
) -> str:
    """The create itself, holding OWNER's lease: counted, made paused, measured, set going."""
    theirs = await _counted(client, cfg, owner)
    if len(theirs) >= cfg.limits.standing_per_user:
        raise ClientError(
            f"you have {len(theirs)} standing research, the most allowed "
            f"(STANDING_MAX_PER_USER={cfg.limits.standing_per_user}): delete one first",
            Kind.LIMITED,
        )
    standing_id = f"{PREFIX}{uuid.uuid4().hex[:8]}"
    request = request.model_copy(update={"standing_id": standing_id, "notify": notify})
    run = research_client.StartResearch(request=request, owner=owner, id=standing_id)
    schedule = Schedule(
        action=research_client.scheduled_start(cfg, run),
        spec=spec,
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=catchup),
        state=ScheduleState(
            note="standing research",
            paused=True,
            limited_actions=max_runs is not None,
            remaining_actions=max_runs or 0,
        ),
    )
    marked = await owner_attribute_ready(client)
    try:
        handle = await client.create_schedule(
            standing_id,
            schedule,
            memo=_memo(request, owner, every, cron, max_runs),
            search_attributes=owner_attributes(owner) if marked else None,
        )
    except RPCError as err:
        raise ClientError(f"the schedule was refused: {err.message}", Kind.INVALID) from None
    await _set_going(client, cfg, handle, theirs, given=every or cron or "")
    await quota_locks.created(cfg, owner, standing_id)
    return standing_id


async def _counted(client: Client, cfg: Settings, owner: str) -> list[ScheduleDescription]:
    """OWNER's standing research as Temporal lists them, and those made lately that its list
    (which lags) does not show yet."""
    theirs = await _described(client, cfg, owner)
    listed = {d.id for d in theirs}
    for standing_id in await quota_locks.lately(cfg, owner):
        if standing_id not in listed:
            try:
                theirs.append(await owned(client, cfg, standing_id, owner))
            except ClientError:
                continue  # deleted since
    return theirs


def _memo(
    request: ResearchRequest, owner: str, every: str | None, cron: str | None, max_runs: int | None
) -> dict[str, Any]:
    """What a list shows without describing the schedule, and whose it is."""
    return {
        "owner": owner,
        "question": request.query,
        "every": (every or "").strip().lower() or None,
        "cron": check_cron(cron) if cron else None,
        "max_runs": max_runs,
        "notify": len(request.notify),
        "receivers": request.notify,
    }


async def _set_going(
    client: Client,
    cfg: Settings,
    handle: ScheduleHandle,
    theirs: list[ScheduleDescription],
    given: str,
) -> None:
    """Measure the paused new schedule as Temporal compiled it; unpause it, or delete it and say
    why."""
    spec = (await handle.describe()).schedule.spec
    try:
        check_pace(spec, given)
        per_day = runs_per_day(spec) + sum(runs_per_day(d.schedule.spec) for d in theirs)
        if per_day > cfg.limits.standing_runs_per_day:
            raise ClientError(
                f"{shown(given)} would bring your standing research to {per_day} runs a day, more "
                f"than allowed (STANDING_MAX_RUNS_PER_DAY={cfg.limits.standing_runs_per_day}): "
                "run it less often or delete another",
                Kind.LIMITED,
            )
    except ClientError:
        await handle.delete()
        raise
    await handle.unpause(note="standing research")


async def _listed(client: Client, owner: str, standing_id: str, present: bool) -> None:
    """Wait (a few seconds at most) until Temporal's list of schedules shows the change, so a
    list right after a create or a delete agrees with it."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        found = any(i == standing_id for i, _ in await _candidates(client, owner))
        if found == present:
            return
        await asyncio.sleep(0.2)


async def _candidates(client: Client, owner: str | None = None) -> list[tuple[str, Any]]:
    """The schedules that may be OWNER's (all of them when OWNER is None, or when the owner
    attribute cannot be used): theirs by the attribute, and the unmarked older ones."""
    if not await owner_attribute_ready(client):
        return await ids_listed(client, None)
    query = f"({owner_query(owner)}) OR {UNMARKED_QUERY}" if owner is not None else None
    try:
        return await ids_listed(client, query)
    except RPCError:
        return await ids_listed(client, None)


@_translated
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
    if str((await described.memo()).get("owner") or cfg.access.user) != owner:
        raise unknown(standing_id)
    return described


def unknown(standing_id: str) -> ClientError:
    return ClientError(f"no standing research with id {shown(str(standing_id))}", Kind.NOT_FOUND)


async def _described(client: Client, cfg: Settings, owner: str) -> list[ScheduleDescription]:
    """OWNER's standing research, described: their marked schedules, and the unmarked older ones
    whose memo says they are OWNER's; never a walk over every user's schedules."""
    found: list[ScheduleDescription] = []
    for standing_id, item in await _candidates(client, owner):
        if not standing_id.startswith(PREFIX):
            continue
        memo = await item.memo()
        if str(memo.get("owner") or cfg.access.user) != owner:
            continue
        try:
            found.append(await owned(client, cfg, standing_id, owner))
        except ClientError:
            continue  # deleted since it was listed
    return found


@_translated
async def list_standing(client: Client, cfg: Settings, owner: str) -> list[StandingView]:
    """OWNER's standing research, newest first."""
    views = [await view(described) for described in await _described(client, cfg, owner)]
    return sorted(views, key=lambda v: v.created_at or datetime.min, reverse=True)


async def _within_runs_a_day(client: Client, cfg: Settings, owner: str) -> None:
    """ "Run now" counts too: OWNER's standing research started at most STANDING_MAX_RUNS_PER_DAY
    runs in the last 24 hours, or this one is refused (LIMITED), so pressing it in a loop is no
    way around the cap a schedule's spec is held to."""
    ids = [d.id for d in await _described(client, cfg, owner)]
    since = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    listed = ", ".join(f"'{i}'" for i in ids)
    query = f"TemporalScheduledById IN ({listed}) AND StartTime > '{since}'"
    try:
        started = (await client.count_workflows(query)).count
    except RPCError:
        return  # a visibility store without that attribute: the spec's cap still holds
    if started >= cfg.limits.standing_runs_per_day:
        raise ClientError(
            f"your standing research started {started} runs in the last 24 hours, the most "
            f"allowed (STANDING_MAX_RUNS_PER_DAY={cfg.limits.standing_runs_per_day}): try again later",
            Kind.LIMITED,
            retry_after_s=3600,
        )


@_translated
async def run_now(client: Client, cfg: Settings, standing_id: str, owner: str) -> str:
    """Start a run at once; the research id of the run. One already running: `ClientError` (409)."""
    described = await owned(client, cfg, standing_id, owner)
    running = [getattr(a, "workflow_id", "") for a in described.info.running_actions]
    if running:
        raise ClientError(
            f"a run of {standing_id} is already running: {running[-1]} (runs never overlap)",
            Kind.CONFLICT,
        )
    async with quota_locks.held(cfg, f"standing:{owner}"):  # counted and started alone
        await _within_runs_a_day(client, cfg, owner)
        return await _triggered(client, described, standing_id)


async def _triggered(client: Client, described: ScheduleDescription, standing_id: str) -> str:
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


@_translated
async def pause(client: Client, cfg: Settings, standing_id: str, owner: str) -> StandingView:
    await owned(client, cfg, standing_id, owner)
    handle: ScheduleHandle = client.get_schedule_handle(standing_id)
    await handle.pause(note=f"paused by {owner}")
    return await view(await handle.describe())


@_translated
async def resume(client: Client, cfg: Settings, standing_id: str, owner: str) -> StandingView:
    await owned(client, cfg, standing_id, owner)
    handle = client.get_schedule_handle(standing_id)
    await handle.unpause(note=f"resumed by {owner}")
    return await view(await handle.describe())


@_translated
async def delete(client: Client, cfg: Settings, standing_id: str, owner: str) -> None:
    """Stop it for good; its runs stay in the library (and a running one finishes)."""
    await owned(client, cfg, standing_id, owner)
    await client.get_schedule_handle(standing_id).delete()
    await _listed(client, owner, standing_id, present=False)
