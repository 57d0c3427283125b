"""What the web app does with research, for the API's routers and the pages alike (DeerFlow's
gateway `services.py`): start one, show one (`view`: running or finished), list a user's, search
the library, steer one. Everything reaches Temporal and the library through `starter.client`
(which hands everything out as people may see it); the routers only map this to HTTP, and the
pages render it, so a page can never show what the API would refuse (the owner check is
`deps.owned_research`, the client's `find`, used by both).
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from typing import Any

from starter.client import library, mine, research_client
from starter.client.errors import ClientError, Kind
from starter.web.deps import (
    RPC_TIMEOUT,
    ApiError,
    Backend,
    Research,
    within,
)
from starter.web.models import (
    Accepted,
    LibraryItem,
    ResearchCreate,
    ResearchListItem,
    ResearchView,
    Steered,
)
from workflows.events import Event
from workflows.models import ResearchResult, Stage

#: How long a status may take: the query, and when it is late, asking Temporal whether a worker
#: polls the research's task queue (busy or gone: starter/client/temporal.py slow_or_stopped).
STATUS_S = RPC_TIMEOUT.total_seconds() + 5
#: How long an answer or a review may wait for a worker to take it.
UPDATE_S = 10.0
#: How long listing may take.
LIST_S = 8.0


async def start(body: ResearchCreate, user: str, app: Backend) -> str:
    """Start USER's research from the API's body; its id. A `ClientError` (a bad request, a
    follow-up that cannot be: someone else's is unknown, 404) is answered by the app's handler."""
    # attended (default true): the research's page shows a review and takes the answer, so `auto`
    # may ask for one; a script that starts research nobody will review says false.
    if not isinstance(body.attended, bool):
        raise ApiError(422, f"invalid attended {body.attended!r}: use true or false")
    started = await research_client.start_research(
        app.session, body.values(), owner=user, attended=body.attended, rpc_timeout=RPC_TIMEOUT
    )
    return started.id


async def view(
    research: Research, app: Backend, patient: bool = False, version: int | None = None
) -> ResearchView:
    """The research as it is now: its status query while it runs, its result once closed (at
    VERSION of its report: None the latest), as people may see them (the client's `public`).
    PATIENT (a page): its events so far too, read before the status (so the plan shown is at least
    as new as the log), and a busy worker's late answer is "still working" (`busy`), not a failure."""
    if version is not None and research.running:
        raise ApiError(
            422, f"research {research.id} is still running: its report has no versions yet"
        )
    if research.running and research.handle is not None:
        return await _live(research, research.handle, app, patient)
    closed = await within(
        research_client.closed_result(app.session, research, version, RPC_TIMEOUT), STATUS_S
    )
    result = closed.result
    cancelled = result is not None and result.outcome is Stage.CANCELLED
    return ResearchView(
        id=research.id,
        owner=research.owner,
        # the workflow returned what it had: Temporal says completed
        status="cancelled" if cancelled else research.state,
        result=result,
        failure=f"the research failed: {closed.failure}" if closed.failure else None,
        title=closed.title,
        version=closed.stored.version if closed.stored else None,
        versions=closed.stored.versions if closed.stored else [],
    )


async def _live(
    research: Research, handle: research_client.Handle, app: Backend, patient: bool
) -> ResearchView:
    try:
        events = await _events_so_far(handle, app) if patient else []
        live = await within(research_client.status(handle, app.cfg), STATUS_S)
    except ClientError as err:
        if not (patient and err.retry_after_s and err.kind is Kind.NO_ANSWER):
            raise
        return ResearchView(
            id=research.id,
            owner=research.owner,
            status=research.state,
            busy=str(err),
            asked=research.question,
        )
    return ResearchView(
        id=research.id, owner=research.owner, status=research.state, live=live, events=events
    )


async def _events_so_far(handle: research_client.Handle, app: Backend) -> list[Event]:
    """A page's Progress log as rendered: the research's events so far (none when Temporal is
    slow to say: the live log fetches them); a busy worker's `ClientError` is raised."""
    try:
        return await within(research_client.events(handle, 0, app.cfg), STATUS_S)
    except TimeoutError:
        return []
    except ClientError as err:
        if err.retry_after_s:
            raise
        return []


async def closed_result(
    research: Research, app: Backend, version: int | None = None
) -> tuple[ResearchResult | None, str | None, str | None]:
    """The result of a closed research: the library's copy (its report titled as its owner
    renamed it) at VERSION of its report (None: the latest), else Temporal's; or why there is
    none. Third: the owner's title, if any."""
    closed = await within(
        research_client.closed_result(app.session, research, version, RPC_TIMEOUT), STATUS_S
    )
    failure = f"the research failed: {closed.failure}" if closed.failure else None
    return closed.result, failure, closed.title


async def list_research(
    user: str, app: Backend, before: datetime | None, limit: int
) -> list[ResearchListItem]:
    """USER's running and stored research merged by id, newest started first (the client's one
    list of a person's research)."""
    return await within(
        mine.my_research(
            app.session, limit=limit, owner=user, before=before, rpc_timeout=RPC_TIMEOUT
        ),
        LIST_S,
    )


async def search_library(user: str, app: Backend, text: str, limit: int) -> list[LibraryItem]:
    found = await library.entries(app.session, contains=text, limit=limit, owner=user)
    return [_item(e) for e in found]


def _item(e: library.LibraryEntry) -> LibraryItem:
    return LibraryItem(
        id=e.workflow_id,
        run_id=e.run_id,
        question=e.query,
        title=e.title or e.query,
        outcome=e.outcome,
        finished_at=e.finished_at.isoformat(),
        sources=e.sources,
        claims=e.claims,
        supported=e.supported,
        owner=e.owner,
    )


async def delete_stored(user: str, app: Backend, research_id: str) -> None:
    """Remove USER's research from the library; 404 when none of USER's has that id."""
    if not await library.delete(app.session, user, research_id):
        raise ApiError(404, f"no research with id {research_id} in your library")


async def rename_stored(user: str, app: Backend, research_id: str, title: object) -> LibraryItem:
    """Give USER's stored research the title TITLE (cleaned; empty or too long: 422); its
    library entry after that. 404 when none of USER's has that id, as for delete."""
    entry = await library.rename(app.session, user, research_id, title)
    if entry is None:
        raise ApiError(404, f"no research with id {research_id} in your library")
    return _item(entry)


# --- steering --------------------------------------------------------------------------------------


def running(research: Research, what: str) -> research_client.Handle:
    if not research.running or research.handle is None:
        raise ApiError(
            409, f"research {research.id} is already {research.state}: nothing to {what}"
        )
    return research.handle


async def answer(research: Research, app: Backend, text: str) -> Steered | Accepted:
    """The person's answer to the research's question, through its validating update."""
    handle = running(research, "answer")
    return await steer(research, app, "answer", research_client.answer(handle, text.strip()))


async def review(research: Research, app: Backend, payload: dict[str, Any]) -> Steered | Accepted:
    """The person's review of the plan or the report, through the validating update."""
    handle = running(research, "review")
    return await steer(research, app, "review", research_client.review(handle, payload))


async def steer(
    research: Research, app: Backend, what: str, sending: Awaitable[str]
) -> Steered | Accepted:
    """Deliver an answer or a review; the research's status once it was taken (just the reply if
    that cannot be read). A refusal is 409 (nothing pending) or 422 (invalid), with its reason."""
    try:
        reply = await within(sending, UPDATE_S)
    except TimeoutError:
        raise ApiError(
            503,
            f"no worker took the {what} within {UPDATE_S:.0f}s: is a worker running? "
            f"(the {what} was not confirmed)",
        ) from None
    app.hub.nudge(research.id)
    head = {"id": research.id, "owner": research.owner, "accepted": reply}
    try:
        assert research.handle is not None
        status = await within(research_client.status(research.handle, app.cfg))
    except Exception:  # noqa: BLE001 - the update was taken; the status is a courtesy
        return Accepted(**head)
    return Steered(**{**status.model_dump(), **head})


async def cancel(research: Research, app: Backend) -> None:
    handle = running(research, "cancel")
    await within(research_client.cancel(handle, RPC_TIMEOUT))
    app.hub.nudge(research.id)
