"""What the standing research's routes and page do: one call of `starter.client.standing` each,
within a time limit, its failures mapped to HTTP once (another user's standing research is 404, as
an unknown id is; bad input 422 in one line; a run already running 409), as `service.py` does for
research. The router (`api/standing.py`) and the page (`pages/standing.py`) stay thin over it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from temporalio.service import RPCError

from config import as_the_worker_runs
from starter.client import research_client, standing
from starter.client.requests import build_request
from starter.client.session import Session
from starter.web.deps import ApiError, Backend, within
from starter.web.models import StandingCreate
from storage import standing as stored

T = TypeVar("T")
#: How long one standing call may take (create and run-now wait for Temporal to show the change).
CALL_S = 25.0


async def _call(app: Backend, work: Awaitable[T]) -> T:
    try:
        return await within(work, CALL_S)
    except (RPCError, TimeoutError) as err:
        raise ApiError(503, f"cannot reach Temporal at {app.cfg.temporal_address}") from err


async def create(body: StandingCreate, user: str, app: Backend) -> str:
    """The new standing research's id: its request built and readied as research's is."""
    request = build_request(body.request_values())
    standing.spec_of(body.every, body.cron)
    client = await app.temporal()
    # a follow-up of another user's research is unknown (422), like an id that does not exist
    # checked against the settings the worker published, as a research's start is
    worker = as_the_worker_runs(app.cfg)
    request = await research_client.ready(request, Session(worker, client=client), owner=user)
    return await _call(
        app,
        standing.create(
            client,
            app.cfg,
            request,
            user,
            every=body.every,
            cron=body.cron,
            notify=body.notify,
            max_runs=body.max_runs,
        ),
    )


async def list_for(user: str, app: Backend) -> list[standing.StandingView]:
    return await _call(app, standing.list_standing(await app.temporal(), app.cfg, user))


async def listed_with_changes(user: str, app: Backend) -> list[dict[str, Any]]:
    """The user's standing research as the page lists it: each with whether its last run changed."""
    items = []
    for view in await list_for(user, app):
        changed = await app.library(lambda url, sid=view.id: stored.changed_runs(url, sid))
        items.append(
            {**view.model_dump(mode="json"), "changed": changed.get(view.last_research_id or "")}
        )
    return items


async def detail(standing_id: str, user: str, app: Backend) -> standing.StandingDetail:
    async def read() -> standing.StandingDetail:
        client = await app.temporal()
        described = await standing.owned(client, app.cfg, standing_id, user)
        changed = await app.library(lambda url: stored.changed_runs(url, standing_id))
        return await standing.detail(client, app.cfg, described, changed)

    return await _call(app, read())


async def run_now(standing_id: str, user: str, app: Backend) -> str:
    return await _call(app, standing.run_now(await app.temporal(), app.cfg, standing_id, user))


async def pause(standing_id: str, user: str, app: Backend) -> standing.StandingView:
    return await _call(app, standing.pause(await app.temporal(), app.cfg, standing_id, user))


async def resume(standing_id: str, user: str, app: Backend) -> standing.StandingView:
    return await _call(app, standing.resume(await app.temporal(), app.cfg, standing_id, user))


async def delete(standing_id: str, user: str, app: Backend) -> None:
    await _call(app, standing.delete(await app.temporal(), app.cfg, standing_id, user))
