"""What a standing research looks like to its owner (starter/client/standing.py does the rest):
its row in a list (`StandingView`, INTERFACE.md's standing research object), and its detail
(`StandingDetail`: its runs, newest first, each saying whether it found changes, and its own
receivers with the secret each one's deliveries are signed with).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from temporalio.client import Client, ScheduleDescription
from temporalio.service import RPCError

from activities.notify import receivers
from settings import Settings
from starter.client.temporal import WORKFLOW_TYPE
from workflows.models import ResearchRequest


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
    receivers: list[Receiver] = Field(default_factory=list)


class Receiver(BaseModel):
    """A standing research's own `notify` receiver and the secret its deliveries are signed with
    (None when the operator set no RESEARCH_WEBHOOK_SECRET: then they are not signed)."""

    url: str
    secret: str | None = None


def receivers_of(cfg: Settings, urls: list[str], owner: str) -> list[Receiver]:
    """Each receiver as deliveries sign it: its URL normalised, its secret derived."""
    key = cfg.notify.webhook_secret.get_secret_value() if cfg.notify.webhook_secret else ""
    shown_urls = []
    for url in urls:
        try:
            shown_urls.append(receivers.normalised(url, allow_private=True))
        except receivers.BadReceiver:
            continue  # never delivered to: nothing to verify
    return [
        Receiver(url=url, secret=receivers.receiver_secret(key, owner, url) if key else None)
        for url in shown_urls
    ]


async def _receiver_urls(client: Client, described: ScheduleDescription) -> list[str]:
    """The `notify` URLs: from the memo, or (a standing research made before the memo kept them)
    from the request its schedule starts."""
    memo = await described.memo()
    if "receivers" in memo:
        return [str(url) for url in memo.get("receivers") or []]
    args = list(getattr(described.schedule.action, "args", None) or [])
    try:
        [request] = await client.data_converter.decode(args, [ResearchRequest])
    except Exception:  # noqa: BLE001 - an undecodable action shows no receivers, not an error
        return []
    return list(request.notify)


async def detail(
    client: Client, cfg: Settings, described: ScheduleDescription, changed: Mapping[str, bool]
) -> StandingDetail:
    """The standing research with its runs and its own receivers' signing secrets (only its
    owner ever gets here: `owned` checked)."""
    shown_view = await view(described)
    return StandingDetail(
        **shown_view.model_dump(),
        runs=await runs(client, described, changed),
        receivers=receivers_of(cfg, await _receiver_urls(client, described), shown_view.owner),
    )


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


async def runs(
    client: Client, described: ScheduleDescription, changed: Mapping[str, bool]
) -> list[StandingRun]:
    """The runs, newest first: Temporal's visibility (every run it keeps) and the schedule's
    recent actions (the newest, at once), with whether each finished run found changes."""
    seen: dict[str, StandingRun] = {}
    query = f"WorkflowType = '{WORKFLOW_TYPE}' AND TemporalScheduledById = '{described.id}'"
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
