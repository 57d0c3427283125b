"""The research client: the one way every client (the CLI, the MCP server, the web app) starts,
steers, reads and lists research.

Shaped like DeerFlow's gateway `services.py` with its `RunCreateRequest`: an entry point builds a
`ResearchRequest` (`starter.client.requests.build_request`, the one mapping of the edges' `question` to
the models' `query`), readies it here (`ready`: prices, a follow-up's conversation), and starts it
with a `StartResearch` through `start`, the only `start_workflow` in `starter/` (a standing
research's schedule starts its runs with `scheduled_start`, built the same way). `start` is also the
one place the owner is written: into the request (which the workflow keeps, and the library stores
in its `owner` column) and into the one memo (`memo`), which listing and the web app's owner check
read without a worker. Everything after that is a thin call on a handle: `answer`, `review`,
`cancel`, `status`, `events`, `result`; `list_research` reads Temporal's visibility into one shape
of row (`ListedResearch`) for `list` and `GET /api/research` alike.

Failures the person can cause or meet are `starter.client.temporal.ClientError` (one line and an exit code);
the web app turns them into its status codes in one place (`starter.web.deps.api_error`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field
from temporalio.client import (
    Client,
    ScheduleActionStartWorkflow,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError

from config import Settings
from starter.client import followup, hints, quotas
from starter.client.errors import ClientError, Kind
from starter.client.requests import check_prices, check_sources
from starter.client.session import Session, local_owner
from starter.client.steering import send_review
from starter.client.temporal import (
    WORKFLOW_TYPE,
    ResearchHandle,
    is_not_found,
    query_events,
    query_status,
    result_handle,
    send_answer,
    shown,
)
from storage import store
from workflows.events import Event
from workflows.models import ResearchRequest, ResearchResult, ResearchStatus, Stage
from workflows.research import DeepResearchWorkflow

#: The longest summary line a research carries in Temporal's Web UI.
SUMMARY_CHARS = 80

Handle = WorkflowHandle[Any, ResearchResult]


def new_id() -> str:
    return f"research-{uuid.uuid4().hex[:8]}"


def stored_owner(stored: Any, cfg: Settings) -> str:
    """The owner of a library entry or stored research (the library's `owner` column; research
    from before owners is RESEARCH_USER's)."""
    owner = getattr(stored, "owner", None) or getattr(
        getattr(stored, "result", None), "owner", None
    )
    return str(owner or local_owner(cfg))


async def owner_of(research: ResearchHandle, cfg: Settings) -> str:
    """The owner of a research Temporal knows: the memo `start` writes (research from before
    owners is RESEARCH_USER's)."""
    return await owner_in(await research.describe(), cfg)


async def owner_in(described: WorkflowExecutionDescription, cfg: Settings) -> str:
    """The owner a described research's memo names (research from before owners is
    RESEARCH_USER's): the one reading of it, for the CLI, MCP and the web app alike."""
    return str(await described.memo_value("owner", local_owner(cfg)))


async def check_owner(research: ResearchHandle, cfg: Settings) -> None:
    """The CLI's and the MCP server's owner check: they read as RESEARCH_USER, and another user's
    research is unknown to them (`ClientError`, the words of an id that does not exist). An id
    Temporal does not know passes: the call that follows says so in its own words."""
    try:
        owner = await owner_of(research, cfg)
    except RPCError as err:
        if is_not_found(err):
            return
        raise
    if owner != local_owner(cfg):
        raise ClientError(f"no research with id {shown(research.id)}", Kind.NOT_FOUND)


class StartResearch(BaseModel):
    """What starting one research takes (DeerFlow's `RunCreateRequest`): the request, whose it is,
    its id, and whether someone is there to answer a review (`attended`; None keeps the request's)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    request: ResearchRequest
    owner: str = Field(min_length=1, max_length=200)
    id: str = Field(default_factory=new_id)
    attended: bool | None = None


class ListedResearch(BaseModel):
    """One research as Temporal's visibility lists it: the one shape of a list row."""

    id: str
    run_id: str | None = None
    question: str | None = None
    stage: str | None = None
    status: str
    owner: str
    started_at: datetime
    closed_at: datetime | None = None


async def ready(
    request: ResearchRequest,
    session: Session,
    names: Mapping[str, str] | None = None,
    *,
    owner: str,
) -> ResearchRequest:
    """What every client does to a built request before it starts: prices checked for a cost
    budget, web sources refused when no web provider is configured, a follow-up's conversation read from the earlier research (continuing a research),
    which must be OWNER's: the user the research will belong to."""
    check_prices(request, session.cfg, names)
    check_sources(request, session.cfg, names)
    if not request.follow_up_of:
        return request
    try:
        earlier = await earlier_research(request.follow_up_of, session, owner)
    except ClientError as err:
        if err.kind in (Kind.UNREACHABLE, Kind.NO_ANSWER):
            raise
        raise ClientError(
            str(err), Kind.INVALID
        ) from None  # the request names what cannot be followed
    return request.model_copy(update={"history": followup.conversation(earlier)})


async def earlier_research(research_id: str, session: Session, owner: str) -> ResearchResult:
    """The research to follow up: from the library (which keeps it after Temporal forgot it),
    else from Temporal if it completed there. Another user's research is unknown, exactly like an
    id that does not exist: a follow-up never reads someone else's question or report."""
    unknown = ClientError(
        f"no research with id {shown(research_id)} in the library or in Temporal", Kind.NOT_FOUND
    )
    # off the event loop: the web app's loop serves every page while the library is read
    stored = await asyncio.to_thread(store.load_research, session.cfg.research_db_url, research_id)
    if stored is not None:
        if stored_owner(stored, session.cfg) != owner:
            raise unknown
        return stored.result
    research = (await session.connect()).get_workflow_handle(
        research_id, result_type=ResearchResult
    )
    try:
        described = await research.describe()
    except RPCError as err:
        raise unknown from err
    if await owner_in(described, session.cfg) != owner:
        raise unknown
    if described.status is not WorkflowExecutionStatus.COMPLETED:
        state = described.status.name.lower() if described.status else "unknown"
        raise ClientError(
            f"research {shown(research_id)} is {state}: only a finished research can be followed up",
            Kind.CONFLICT,
        )
    return cast(ResearchResult, await research.result())


def summary_line(request: ResearchRequest) -> str:
    """The research's line in Temporal's Web UI."""
    query = " ".join(request.query.split())
    if len(query) > SUMMARY_CHARS:
        query = query[: SUMMARY_CHARS - 1] + "…"
    return f"Research: {query} ({request.depth.value}, {request.mode.value})"


def memo(request: ResearchRequest) -> dict[str, str]:
    """The one memo a research carries: its owner (the web app's owner check, listing), its
    question (lists show it with no worker and no parsing) and, for a follow-up, the research it
    follows (the web app's conversation view finds running follow-ups by it)."""
    written = {"owner": request.owner, "question": request.query}
    if request.follow_up_of:
        written["follows"] = request.follow_up_of
    return written


async def memo_of(wf: Any, cfg: Settings) -> dict[str, Any]:
    """What `memo` wrote, as read back from a listed research (an undecodable value: its default)."""
    return {
        "owner": str(await _memo(wf, "owner", local_owner(cfg))),
        "question": await _memo(wf, "question", None),
        "follows": await _memo(wf, "follows", None),
    }


async def start(
    client: Client, cfg: Settings, run: StartResearch, rpc_timeout: timedelta | None = None
) -> Handle:
    """Start a `DeepResearchWorkflow`: the one `start_workflow` of the starter, and the one place
    the owner is written. A duplicate running id is bad input (exit 2); an owner at their limits
    (starter/client/quotas.py) is LIMITED (429, exit 2)."""
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
                task_queue=cfg.temporal_task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
                static_summary=summary_line(request),
                memo=memo(request),
                rpc_timeout=rpc_timeout,
            )
    except WorkflowAlreadyStartedError as err:
        raise ClientError(
            f"a research with id {shown(run.id)} is already running "
            f"(follow it with `{hints.result_command(run.id)}`)",
            Kind.CONFLICT,
        ) from err


async def _id_free_for(client: Client, cfg: Settings, run: StartResearch) -> None:
    """Refuse an id another user's research has, in Temporal or in the library (a finished one
    whose history is gone): reusing it would put a new run where that owner's research was, and
    its owner would get 404 (issue 38). The owner's own finished id may be reused, as before."""
    try:
        found: str | None = await owner_of(client.get_workflow_handle(run.id), cfg)
    except RPCError as err:
        if not is_not_found(err):
            raise
        found = None
    if found is None:
        try:
            stored = await asyncio.to_thread(store.owner_of, cfg.research_db_url, run.id)
        except ApplicationError:
            stored = None  # the library unreachable: Temporal's answer is the one there is
        found = None if stored is None else (stored or local_owner(cfg))
    if found is not None and found != run.owner:
        raise ClientError(
            f"the id {shown(run.id)} is taken: choose another (or leave the id out)", Kind.CONFLICT
        )


def scheduled_start(cfg: Settings, run: StartResearch) -> ScheduleActionStartWorkflow:
    """What a standing research's schedule starts (starter/client/standing.py): the same workflow, request,
    owner, summary and memo as `start`, each run's id being RUN.id plus the time Temporal appends."""
    request = run.request.model_copy(update={"owner": run.owner, "attended": False})
    return ScheduleActionStartWorkflow(
        DeepResearchWorkflow.run,
        args=[request],
        id=run.id,
        task_queue=cfg.temporal_task_queue,
        static_summary=summary_line(request),
        memo=memo(request),
    )


def handle(client: Client, research_id: str) -> Handle:
    return result_handle(client, research_id)


async def status(research: ResearchHandle) -> ResearchStatus:
    """The `status` query (`ClientError` when unknown or no worker answers)."""
    return await query_status(research)


async def events(research: ResearchHandle, since: int = 0) -> list[Event]:
    """The research's events after SINCE, oldest first."""
    return await query_events(research, since)


async def events_as_sent(
    research: ResearchHandle, since: int, rpc_timeout: timedelta | None = None
) -> list[Event]:
    """The `events` query with Temporal's own errors (the web app's poller tells them apart)."""
    return await research.query(DeepResearchWorkflow.events, since, rpc_timeout=rpc_timeout)


async def answer(research: ResearchHandle, text: str) -> str:
    """Answer the pending clarification question (validated by the workflow)."""
    return await send_answer(research, text)


async def review(research: ResearchHandle, payload: Mapping[str, Any]) -> str:
    """Answer the pending plan or report review (validated by the workflow)."""
    return await send_review(research, dict(payload))


async def cancel(research: ResearchHandle, rpc_timeout: timedelta | None = None) -> None:
    """Cancel the research; it still returns what it had."""
    await research.cancel(rpc_timeout=rpc_timeout)


async def result(research: Handle, rpc_timeout: timedelta | None = None) -> ResearchResult:
    """Wait for the research's result."""
    return await research.result(rpc_timeout=rpc_timeout)


def visibility_query(running_only: bool = False, before: datetime | None = None) -> str:
    """The visibility query for research, newest first; BEFORE: started before that moment."""
    query = f"WorkflowType = '{WORKFLOW_TYPE}'"
    if running_only:
        query += " AND ExecutionStatus = 'Running'"
    if before is not None:
        query += f" AND StartTime < '{before.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')}'"
    return query


async def list_research(
    client: Client,
    cfg: Settings,
    *,
    limit: int,
    owner: str | None = None,
    running_only: bool = False,
    before: datetime | None = None,
    scan: int | None = None,
    rpc_timeout: timedelta | None = None,
) -> list[ListedResearch]:
    """Research from Temporal's visibility, newest first: at most LIMIT rows, OWNER's only when
    given (read from the memo: at most SCAN rows are looked at to find them); a run that continued
    as new is listed once, as its latest run."""
    rows: list[ListedResearch] = []
    listing = client.list_workflows(
        visibility_query(running_only, before),
        page_size=200,
        limit=None if owner else limit,
        rpc_timeout=rpc_timeout,
    )
    scanned = 0
    async for wf in listing:
        scanned += 1
        if len(rows) >= limit or (scan is not None and scanned > scan):
            break
        if owner is not None and wf.status is WorkflowExecutionStatus.CONTINUED_AS_NEW:
            continue
        who = str(await _memo(wf, "owner", local_owner(cfg)))
        if owner is not None and who != owner:
            continue
        rows.append(_listed(wf, who, await _memo(wf, "question", None), await _memo_stage(wf)))
    return rows


def _listed(wf: Any, owner: str, question: Any, stage: str | None) -> ListedResearch:
    return ListedResearch(
        id=wf.id,
        run_id=wf.run_id,
        question=str(question) if question is not None else None,
        stage=stage,
        status=wf.status.name.lower() if wf.status else "unknown",
        owner=owner,
        started_at=wf.start_time,
        closed_at=wf.close_time,
    )


async def _memo(wf: Any, key: str, default: Any) -> Any:
    try:
        return await wf.memo_value(key, default)
    except Exception:  # noqa: BLE001 - an undecodable memo must not break the listing
        return default


async def _memo_stage(wf: Any) -> str | None:
    """The stage `stages.enter` writes into the memo at every transition."""
    value = await _memo(wf, "stage", None)
    return str(value.value if isinstance(value, Stage) else value) if value is not None else None
