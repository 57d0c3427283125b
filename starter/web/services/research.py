"""What the web app does with research, for the API's routers and the pages alike (DeerFlow's
gateway `services.py`): start one, show one (`view`: running or finished), list a user's, search
the library, steer one. Everything reaches Temporal through `starter.client.research_client` and the
library through `storage.store`; the routers only map this to HTTP, and the pages
render it, so a page can never show what the API would refuse (the owner check is
`deps.owned_research`, used by both).
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any

from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError

from config import as_the_worker_runs
from starter.client import library, research_client
from starter.client.errors import ClientError, Kind
from starter.client.requests import build_request
from starter.client.session import Session
from starter.client.temporal import Refused, root_message
from starter.client.titles import titled
from starter.exports import clean_model
from starter.exports.public import public_for
from starter.web.deps import (
    RPC_TIMEOUT,
    ApiError,
    Backend,
    Research,
    owned_research,
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
from storage import store
from storage.public_names import PublicNames
from storage.revisions import NoSuchVersion
from workflows.events import Event
from workflows.models import ResearchResult, Stage

#: How long a status may take: the query, and when it is late, asking Temporal whether a worker
#: polls the research's task queue (busy or gone: starter/client/temporal.py slow_or_stopped).
STATUS_S = RPC_TIMEOUT.total_seconds() + 5
#: How long an answer or a review may wait for a worker to take it.
UPDATE_S = 10.0
#: How long listing may take, and how many of everyone's research it reads to find a user's.
LIST_S = 8.0
MAX_SCAN = 2000
#: What the workflow's validators say when there is nothing to answer or review (409, not 422).
NOTHING_PENDING = ("no clarification question is pending", "no review is pending")


async def start(body: ResearchCreate, user: str, app: Backend) -> str:
    """Start USER's research from the API's body; its id."""
    # attended (default true): the research's page shows a review and takes the answer, so `auto`
    # may ask for one; a script that starts research nobody will review says false.
    if not isinstance(body.attended, bool):
        raise ApiError(422, f"invalid attended {body.attended!r}: use true or false")
    request = build_request(body.values())
    if request.follow_up_of:
        await owned_research(request.follow_up_of, user, app)  # someone else's: 404, as unknown
    client = await app.temporal()
    # a ClientError (a bad request, a follow-up that cannot be): the app's handler answers it;
    # checked against the settings the worker published: what it will really search with
    worker = as_the_worker_runs(app.cfg)
    request = await research_client.ready(request, Session(worker, client=client), owner=user)
    run = research_client.StartResearch(request=request, owner=user, attended=body.attended)
    await within(research_client.start(client, app.cfg, run, rpc_timeout=RPC_TIMEOUT))
    return run.id


async def view(
    research: Research, app: Backend, patient: bool = False, version: int | None = None
) -> ResearchView:
    """The research as it is now: its status query while it runs, its result once closed (at
    VERSION of its report: None the latest).
    PATIENT (a page): its events so far too, read before the status (so the plan shown is at least
    as new as the log), and a busy worker's late answer is "still working" (`busy`), not a failure."""
    head = {"id": research.id, "owner": research.owner, "status": research.state}
    if version is not None and research.running:
        raise ApiError(
            422, f"research {research.id} is still running: its report has no versions yet"
        )
    if research.running and research.handle is not None:
        try:
            events = await _events_so_far(research.handle) if patient else []
            live = await within(research_client.status(research.handle), STATUS_S)
        except ClientError as err:
            if not (patient and err.retry_after_s and err.kind is Kind.NO_ANSWER):
                raise
            return ResearchView(**head, busy=str(err))
        # a model's question, the critic's words: cleaned as the report is
        return ResearchView(
            **head, live=PublicNames.of(app.cfg).model(clean_model(live)), events=events
        )
    stored, result, failure, title = await _closed(research, app, version)
    if result is not None and result.outcome is Stage.CANCELLED:
        head["status"] = "cancelled"  # the workflow returned what it had: Temporal says completed
    shown = None if result is None else public_for(result, app.cfg)  # local sources by name
    return ResearchView(
        **head,
        result=shown,
        failure=failure,
        title=title,
        version=stored.version if stored else None,
        versions=stored.versions if stored else [],
    )


async def _events_so_far(handle: WorkflowHandle) -> list[Event]:
    """A page's Progress log as rendered: the research's events so far (none when Temporal is
    slow to say: the live log fetches them); a busy worker's `ClientError` is raised."""
    try:
        return [clean_model(e) for e in await within(research_client.events(handle, 0), STATUS_S)]
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
    _, result, failure, title = await _closed(research, app, version)
    return result, failure, title


async def _closed(
    research: Research, app: Backend, version: int | None
) -> tuple[store.StoredResearch | None, ResearchResult | None, str | None, str | None]:
    """`closed_result`, with the library's stored research it came from (None: Temporal's)."""
    stored = research.stored if version is None else None
    if stored is None:
        try:
            stored = await app.library(
                lambda url: (
                    store.load_research(url, research.id)
                    if version is None
                    else store.load_research(url, research.id, version)
                )
            )
        except NoSuchVersion as err:
            raise ApiError(422, str(err)) from None
        except ApplicationError:
            stored = None  # the library is unavailable: Temporal may still have the result
    if stored is not None:
        return stored, titled(stored.result, stored.title), None, stored.title
    if version not in (None, 1):
        raise ApiError(422, f"research {research.id} has no version {version} in the library")
    assert research.handle is not None
    try:
        return None, await within(research_client.result(research.handle, RPC_TIMEOUT)), None, None
    except WorkflowFailureError as err:
        return None, None, f"the research failed: {root_message(err)}", None


async def list_research(
    user: str, app: Backend, before: datetime | None, limit: int
) -> list[ResearchListItem]:
    """USER's running and stored research merged by id, newest started first."""
    client = await app.temporal()
    live = await within(
        research_client.list_research(
            client,
            app.cfg,
            limit=limit,
            owner=user,
            before=before,
            scan=MAX_SCAN,
            rpc_timeout=RPC_TIMEOUT,
        ),
        LIST_S,
    )
    stored = await app.library(
        lambda url: store.started_before(url, owner=user, before=before, limit=limit)
    )
    rows: dict[str, tuple[datetime, ResearchListItem]] = {
        s.workflow_id: (
            s.started_at,
            ResearchListItem(
                id=s.workflow_id,
                question=s.query,
                title=s.title,
                stage=s.outcome,
                status=s.outcome,
                owner=user,
                started_at=utc(s.started_at),
                closed_at=utc(s.finished_at),
            ),
        )
        for s in stored
    }
    for row in live:
        known = rows.get(row.id)
        item = ResearchListItem(
            **row.model_dump(include={"id", "stage", "status", "owner"}),
            question=row.question or (known[1].question if known else None),
            title=known[1].title if known else None,
            started_at=utc(row.started_at),
            closed_at=utc(row.closed_at),
        )
        rows[row.id] = (row.started_at, item)
    newest = sorted(rows.values(), key=lambda pair: pair[0], reverse=True)
    return [item for _, item in newest[:limit]]


async def search_library(user: str, app: Backend, text: str, limit: int) -> list[LibraryItem]:
    entries = await app.library(
        lambda url: store.list_research(
            url, contains=text.strip() or None, limit=limit, owner=user, about=True
        )
    )
    return [_item(e) for e in entries]


def _item(e: store.LibraryEntry) -> LibraryItem:
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
    gone = await app.library(lambda url: store.delete_research(url, research_id, user))
    if not gone:
        raise ApiError(404, f"no research with id {research_id} in your library")


async def rename_stored(user: str, app: Backend, research_id: str, title: object) -> LibraryItem:
    """Give USER's stored research the title TITLE (cleaned; empty or too long: 422); its
    library entry after that. 404 when none of USER's has that id, as for delete."""
    entry = await library.rename(app.cfg.research_db_url, user, research_id, title)
    if entry is None:
        raise ApiError(404, f"no research with id {research_id} in your library")
    return _item(entry)


def utc(moment: datetime | None) -> str | None:
    """UTC with a `Z`: usable as `before=` in a URL as it is (no `+` to escape)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z") if moment else None


# --- steering --------------------------------------------------------------------------------------


def running(research: Research, what: str) -> WorkflowHandle[Any, ResearchResult]:
    if not research.running or research.handle is None:
        raise ApiError(
            409, f"research {research.id} is already {research.state}: nothing to {what}"
        )
    return research.handle


async def answer(research: Research, app: Backend, text: str) -> Any:
    """The person's answer to the research's question, through its validating update."""
    handle = running(research, "answer")
    return await steer(research, app, "answer", research_client.answer(handle, text.strip()))


async def review(research: Research, app: Backend, payload: dict[str, Any]) -> Any:
    """The person's review of the plan or the report, through the validating update."""
    handle = running(research, "review")
    return await steer(research, app, "review", research_client.review(handle, payload))


async def steer(research: Research, app: Backend, what: str, sending: Awaitable[str]) -> Any:
    """Deliver an answer or a review; the research's status once it was taken (just the reply if
    that cannot be read). A refusal is 409 (nothing pending) or 422 (invalid), with its reason."""
    try:
        reply = await within(sending, UPDATE_S)
    except Refused as refused:
        reason = str(refused)
        raise ApiError(
            409 if reason in NOTHING_PENDING else 422, f"{what} refused: {reason}"
        ) from None
    except ClientError as err:
        raise ApiError.of(err) from None
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
        status = await within(research_client.status(research.handle))
    except Exception:  # noqa: BLE001 - the update was taken; the status is a courtesy
        return Accepted(**head)
    return Steered(**{**status.model_dump(), **head})


async def cancel(research: Research, app: Backend) -> None:
    handle = running(research, "cancel")
    await within(research_client.cancel(handle, RPC_TIMEOUT))
    app.hub.nudge(research.id)
