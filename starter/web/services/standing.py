"""What the standing research's routes and page do: one call of `starter.client.standing` each,
within a time limit, its failures mapped to HTTP once (another user's standing research is 404, as
an unknown id is; bad input 422 in one line; a run already running 409), as `research.py` does for
research. The router (`api/standing.py`) and the page (`pages/standing.py`) stay thin over it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from starter.client import standing
from starter.web.deps import ApiError, Backend, within
from starter.web.models import StandingCreate

T = TypeVar("T")
#: How long one standing call may take (create and run-now wait for Temporal to show the change).
CALL_S = 25.0


async def _call(app: Backend, work: Awaitable[T]) -> T:
    try:
        return await within(work, CALL_S)
    except TimeoutError as err:
        raise ApiError(503, f"cannot reach Temporal at {app.cfg.temporal.target}") from err


async def create(body: StandingCreate, user: str, app: Backend) -> str:
    """The new standing research's id: its request built and readied as research's is (a
    follow-up of another user's research is unknown, 404, like an id that does not exist)."""
    return await _call(
        app,
        standing.create_standing(
            app.session,
            body.request_values(),
            owner=user,
            every=body.every,
            cron=body.cron,
            notify=body.notify,
            max_runs=body.max_runs,
        ),
    )


async def list_for(user: str, app: Backend) -> list[standing.StandingView]:
    session = await app.connected()
    return await _call(app, standing.list_standing(await session.connect(), app.cfg, user))


async def listed_with_changes(user: str, app: Backend) -> list[dict[str, Any]]:
    """The user's standing research as the page lists it: each with whether its last run changed."""
    found = await _call(app, standing.listed_with_changes(await app.connected(), user))
    return [{**view.model_dump(mode="json"), "changed": changed} for view, changed in found]


async def detail(standing_id: str, user: str, app: Backend) -> standing.StandingDetail:
    return await _call(app, standing.show(await app.connected(), standing_id, user))


async def run_now(standing_id: str, user: str, app: Backend) -> str:
    session = await app.connected()
    return await _call(app, standing.run_now(await session.connect(), app.cfg, standing_id, user))


async def pause(standing_id: str, user: str, app: Backend) -> standing.StandingView:
    session = await app.connected()
    return await _call(app, standing.pause(await session.connect(), app.cfg, standing_id, user))


async def resume(standing_id: str, user: str, app: Backend) -> standing.StandingView:
    session = await app.connected()
    return await _call(app, standing.resume(await session.connect(), app.cfg, standing_id, user))


async def delete(standing_id: str, user: str, app: Backend) -> None:
    session = await app.connected()
    await _call(app, standing.delete(await session.connect(), app.cfg, standing_id, user))
