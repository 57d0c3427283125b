"""The research client: the one way every client (the CLI, the MCP server, the web app) starts,
steers and reads research.

Shaped like DeerFlow's gateway `services.py` with its `RunCreateRequest`: `start_research` builds
a `ResearchRequest` from plain values (`starter.client.requests.build_request`, the one mapping of
the edges' `question` to the models' `query`), readies it (`ready`: prices, a follow-up's
conversation) and starts it with a `StartResearch` through `start`, the only `start_workflow` in
`starter/` (a standing research's schedule starts its runs with `scheduled_start`, built the same
way). `start` is also the one place the owner is written: into the request (which the workflow
keeps, and the library stores in its `owner` column) and into the one memo (`memo`), which
listing (starter/client/mine.py) and finding (starter/client/finding.py) read without a worker.
Everything after that is a thin call on a handle: `answer`, `review`, `cancel`, `status`,
`events`, `result`, `ending`; what they hand back is as people may see it (`public`).

Failures the person can cause or meet are `ClientError` (one line and a kind): no Temporal
exception leaves this module.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from temporalio import exceptions as tex
from temporalio.client import (
    Client,
    ScheduleActionStartWorkflow,
    WorkflowExecutionDescription,
    WorkflowFailureError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError

from settings import Settings
from starter.client import followup, library, quotas
from starter.client.errors import ClientError, Kind
from starter.client.finding import Found, Handle, find
from starter.client.public import public, public_all
from starter.client.requests import build_request, check_prices, check_sources
from starter.client.session import Session, local_owner
from starter.client.steering import send_review
from starter.client.temporal import (
    WORKFLOW_TYPE,  # noqa: F401 - named from here by standing research's runs
    ResearchHandle,
    query_events,
    query_status,
    result_handle,
    root_message,
    send_answer,
    shown,
    temporal_errors,
    translated,
)
from storage import store
from workflows.events import Event
from workflows.models import ResearchRequest, ResearchResult, ResearchStatus
from workflows.research import DeepResearchWorkflow

#: The longest summary line a research carries in Temporal's Web UI.
SUMMARY_CHARS = 80
#: How a research that closed without a result closed, by its failure's cause (else: failed).
CLOSED_BY = (
    (tex.TerminatedError, "terminated"),
    (tex.CancelledError, "cancelled"),
    (tex.TimeoutError, "timed_out"),
)


def new_id() -> str:
    return f"research-{uuid.uuid4().hex[:8]}"


async def owner_of(research: ResearchHandle, cfg: Settings) -> str:
    """The owner of a research Temporal knows: the memo `start` writes (research from before
    owners is RESEARCH_USER's)."""
    with temporal_errors(research.id):
        return await owner_in(await research.describe(), cfg)


async def owner_in(described: WorkflowExecutionDescription, cfg: Settings) -> str:
    """The owner a described research's memo names (research from before owners is
    RESEARCH_USER's)."""
    return str(await described.memo_value("owner", local_owner(cfg)))


class StartResearch(BaseModel):
    """What starting one research takes (DeerFlow's `RunCreateRequest`): the request, whose it is,
    its id, and whether someone is there to answer a review (`attended`; None keeps the request's)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    request: ResearchRequest
    owner: str = Field(min_length=1, max_length=200)
    id: str = Field(default_factory=new_id)
    attended: bool | None = None


class Started(BaseModel):
    """A research just started: its id, its first run, and the request it runs (readied)."""

    id: str
    run_id: str | None = None
    request: ResearchRequest


async def start_research(
    session: Session,
    values: Mapping[str, Any],
    *,
    owner: str | None = None,
    names: Mapping[str, str] | None = None,
    attended: bool | None = None,
    research_id: str | None = None,
    rpc_timeout: timedelta | None = None,
    readied: Callable[[ResearchRequest], object] | None = None,
) -> Started:
    """Start the research VALUES ask for (the plain values every front end has: a command's
    flags, a tool's arguments, a body's fields), OWNER's (default: the session's user's): built,
    readied and started, the one way all three front ends do it. NAMES: the front end's words for
    the fields, in its errors; READIED: told the request once it is ready, before the start
    connects (the CLI says which engine will run it)."""
    who = owner or session.user
    request = build_request(values, names)
    request = await ready(request, session, names, owner=who)
    if readied is not None:
        readied(request)
    run = StartResearch(request=request, owner=who, id=research_id or new_id(), attended=attended)
    handle = await start(await session.connect(), session.cfg, run, rpc_timeout)
    return Started(id=run.id, run_id=handle.result_run_id, request=request)


async def ready(
    request: ResearchRequest,
    session: Session,
    names: Mapping[str, str] | None = None,
    *,
    owner: str,
) -> ResearchRequest:
    """What every client does to a built request before it starts: prices checked for a cost
    budget, web sources refused when no web provider is configured, a follow-up's conversation
    read from the earlier research (continuing a research), which must be OWNER's: the user the
    research will belong to."""
    check_prices(request, session.cfg, names)
    check_sources(request, session.cfg, names)
    if not request.follow_up_of:
        return request
    earlier = await earlier_research(request.follow_up_of, session, owner)
    return request.model_copy(update={"history": followup.conversation(earlier)})


async def _found_anywhere(session: Session, research_id: str, owner: str | None) -> Found:
    """`find`, its not-found said as a finished research's reader needs it: in neither store."""
    try:
        return await find(session, research_id, owner)
    except ClientError as err:
        if err.kind is not Kind.NOT_FOUND:
            raise
        raise ClientError(
            f"no research with id {shown(research_id)} in the library or in Temporal",
            Kind.NOT_FOUND,
        ) from None


async def earlier_research(research_id: str, session: Session, owner: str) -> ResearchResult:
    """The research to follow up (`find`: Temporal, else the library, which keeps it after
    Temporal forgot it). Another user's research is unknown, exactly like an id that does not
    exist: a follow-up never reads someone else's question or report."""
    found = await _found_anywhere(session, research_id, owner)
    if found.running:
        raise ClientError(
            f"research {shown(research_id)} is running: only a finished research can be "
            "followed up",
            Kind.CONFLICT,
        )
    closed = await closed_result(session, found)
    if closed.result is None:
        raise ClientError(
            f"research {shown(research_id)} is {found.state}: only a finished research can be "
            "followed up",
            Kind.CONFLICT,
        )
    return closed.result


def summary_line(request: ResearchRequest) -> str:
    """The research's line in Temporal's Web UI."""
    query = " ".join(request.query.split())
    if len(query) > SUMMARY_CHARS:
        query = query[: SUMMARY_CHARS - 1] + "…"
    return f"Research: {query} ({request.depth.value}, {request.mode.value})"


def memo(request: ResearchRequest) -> dict[str, str]:
    """The one memo a research carries: its owner (finding, listing), its question (lists show it
    with no worker and no parsing) and, for a follow-up, the research it follows (a conversation
    finds running follow-ups by it)."""
    written = {"owner": request.owner, "question": request.query}
    if request.follow_up_of:
        written["follows"] = request.follow_up_of
    return written


async def start(
    client: Client, cfg: Settings, run: StartResearch, rpc_timeout: timedelta | None = None
) -> Handle:
    """Start a `DeepResearchWorkflow`: the one `start_workflow` of the starter, and the one place
    the owner is written. A duplicate running id is CONFLICT; an owner at their limits
    (starter/client/quotas.py) is LIMITED."""
    update: dict[str, Any] = {"owner": run.owner}
    if run.attended is not None:
        update["attended"] = run.attended
    request = run.request.model_copy(update=update)
    await _id_free_for(client, cfg, run)
    try:
        async with quotas.admitted(
            client, cfg, run.owner, local_owner(cfg), run.id, rpc_timeout
        ):  # the owner's running and per-minute limits
            return await client.start_workflow(
                DeepResearchWorkflow.run,
                args=[request],  # `run` takes it raw (RawValue): it validates what it is given
                id=run.id,
                task_queue=cfg.temporal.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
                static_summary=summary_line(request),
                memo=memo(request),
                rpc_timeout=rpc_timeout,
            )
    except WorkflowAlreadyStartedError as err:
        raise ClientError(
            f"a research with id {shown(run.id)} is already running",
            Kind.CONFLICT,
            follow=("result", run.id),
        ) from err
    except tex.TemporalError as err:
        raise translated(err, run.id, cfg.temporal.target) from err


async def _id_free_for(client: Client, cfg: Settings, run: StartResearch) -> None:
    """Refuse an id another user's research has, in Temporal or in the library (a finished one
    whose history is gone): reusing it would put a new run where that owner's research was, and
    its owner would get 404. The owner's own finished id may be reused, as before."""
    try:
        found: str | None = await owner_of(client.get_workflow_handle(run.id), cfg)
    except ClientError as err:
        if err.kind is not Kind.NOT_FOUND:
            raise
        found = None
    if found is None:
        try:
            stored = await asyncio.to_thread(store.owner_of, cfg.library.db_url, run.id)
        except ApplicationError:
            stored = None  # the library unreachable: Temporal's answer is the one there is
        found = None if stored is None else (stored or local_owner(cfg))
    if found is not None and found != run.owner:
        raise ClientError(
            f"the id {shown(run.id)} is taken: choose another (or leave the id out)", Kind.CONFLICT
        )


def scheduled_start(cfg: Settings, run: StartResearch) -> ScheduleActionStartWorkflow:
    """What a standing research's schedule starts (starter/client/standing.py): the same workflow,
    request, owner, summary and memo as `start`, each run's id being RUN.id plus the time Temporal
    appends."""
    request = run.request.model_copy(update={"owner": run.owner, "attended": False})
    return ScheduleActionStartWorkflow(
        DeepResearchWorkflow.run,
        args=[request],
        id=run.id,
        task_queue=cfg.temporal.task_queue,
        static_summary=summary_line(request),
        memo=memo(request),
    )


def handle(client: Client, research_id: str) -> Handle:
    return result_handle(client, research_id)


# --- reading and steering a research -------------------------------------------------------------


async def status(research: ResearchHandle, cfg: Settings) -> ResearchStatus:
    """The `status` query, as people may see it (`ClientError` when unknown or no worker
    answers)."""
    return public(await query_status(research), cfg)


async def events(research: ResearchHandle, since: int, cfg: Settings) -> list[Event]:
    """The research's events after SINCE, oldest first, as people may see them."""
    return public_all(await query_events(research, since), cfg)


async def events_as_sent(
    research: ResearchHandle,
    since: int,
    rpc_timeout: timedelta | None = None,
    *,
    cfg: Settings,
) -> list[Event]:
    """One `events` query, not retried nor explained (the web app's poller, which asks again and
    says why once): NOT_FOUND once Temporal forgot the research, NO_ANSWER when no worker answered
    in time, as people may see them."""
    with temporal_errors(research.id):
        batch = await research.query(DeepResearchWorkflow.events, since, rpc_timeout=rpc_timeout)
    return public_all(batch, cfg)


async def answer(research: ResearchHandle, text: str) -> str:
    """Answer the pending clarification question (validated by the workflow)."""
    return await send_answer(research, text)


async def review(research: ResearchHandle, payload: Mapping[str, Any]) -> str:
    """Answer the pending plan or report review (validated by the workflow)."""
    return await send_review(research, dict(payload))


async def cancel(research: ResearchHandle, rpc_timeout: timedelta | None = None) -> None:
    """Cancel the research; it still returns what it had."""
    with temporal_errors(research.id):
        await research.cancel(rpc_timeout=rpc_timeout)


async def result(
    research: Handle, rpc_timeout: timedelta | None = None, *, cfg: Settings
) -> ResearchResult:
    """Wait for the research's result, as people may see it (FAILED when it ended in failure,
    with its root cause)."""
    with temporal_errors(research.id):
        done = await research.result(rpc_timeout=rpc_timeout)
    return public(done, cfg)


class Ending(BaseModel):
    """How a research closed: its status (`completed`, `failed`, `cancelled`, `terminated`,
    `timed_out`, `closed`), its outcome when it returned one, else why not."""

    status: str
    outcome: str | None = None
    failure: str | None = None


async def ending(research: Handle, rpc_timeout: timedelta | None = None) -> Ending:
    """Wait for the research to close (following continue-as-new); how it did. A `ClientError`
    when Temporal cannot say now (NOT_FOUND: it forgot the research)."""
    try:
        done = await research.result(rpc_timeout=rpc_timeout)
    except WorkflowFailureError as err:
        closed = next((name for kind, name in CLOSED_BY if isinstance(err.cause, kind)), "failed")
        return Ending(status=closed, failure=root_message(err))
    except tex.TemporalError as err:
        raise translated(err, research.id) from err
    except Exception as err:  # noqa: BLE001 - closed, but its result does not decode: the end
        return Ending(status="closed", failure=root_message(err))
    return Ending(status="completed", outcome=done.outcome.value)


class Closed(BaseModel):
    """A closed research's result (None: it has none), why there is none (the failure's root
    cause), and the library's stored research it came from with its owner's title (None:
    Temporal's)."""

    result: ResearchResult | None = None
    failure: str | None = None
    stored: library.StoredResearch | None = None

    @property
    def title(self) -> str | None:
        return self.stored.title if self.stored is not None else None


async def closed_result(
    session: Session,
    found: Found,
    version: int | None = None,
    rpc_timeout: timedelta | None = None,
) -> Closed:
    """The result of a closed research as people may see it: the library's copy (its report
    titled as its owner renamed it) at VERSION of its report (None: the latest), else Temporal's;
    or why there is none."""
    stored = found.stored if version is None else None
    if stored is None:
        try:
            stored = await library.load(session, found.id, version)
        except ClientError as err:
            if err.kind is not Kind.UNREACHABLE or found.handle is None:
                raise
            stored = None  # the library is unavailable: Temporal may still have the result
    if stored is not None:
        return Closed(result=stored.result, stored=stored)
    if version not in (None, 1):
        raise ClientError(
            f"research {shown(found.id)} has no version {version} in the library", Kind.INVALID
        )
    if found.handle is None:
        raise ClientError(f"no research with id {shown(found.id)}", Kind.NOT_FOUND)
    try:
        return Closed(result=await result(found.handle, rpc_timeout, cfg=session.cfg))
    except ClientError as err:
        if err.kind is not Kind.FAILED or not isinstance(err.__cause__, WorkflowFailureError):
            raise
        return Closed(failure=root_message(err.__cause__))


async def finished_research(session: Session, research_id: str, owner: str | None = None) -> Closed:
    """OWNER's (default: the session's user's) finished research with its result: from the
    library (kept after Temporal forgot it), else Temporal's. CONFLICT while it runs; FAILED when
    it ended without a result."""
    found = await _found_anywhere(session, research_id, owner)
    if found.running and found.handle is not None:
        stage = (await status(found.handle, session.cfg)).stage.value
        raise ClientError(
            f"research {shown(research_id)} is still running ({stage})", Kind.CONFLICT
        )
    closed = await closed_result(session, found)
    if closed.result is None:
        raise ClientError(f"research {shown(research_id)} failed: {closed.failure}", Kind.FAILED)
    return closed
