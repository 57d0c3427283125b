"""`/api/research`: start, list, read, answer, review, cancel and download a user's research.

The request is built by starter/requests.py (the CLI's and the MCP tool's defaults, choices and
one-line errors) and readied as the CLI readies it (prices, a follow-up's conversation); answers
and reviews go through the workflow's validating updates, as the CLI's do, so an invalid one is
refused with the workflow's own reason (409 when nothing is pending, else 422), never recorded.
Reading is the `status` query while a research runs, its stored result once closed.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError

from activities.storage import store
from config import Settings
from starter.commands import new_id, ready, summary_line
from starter.requests import RequestError, build_request
from starter.reviews import send_review
from starter.session import Session
from starter.temporal import (
    WORKFLOW_TYPE,
    CliError,
    Refused,
    query_status,
    root_message,
    send_answer,
)
from starter.web import downloads
from starter.web.api.library import stored_page
from starter.web.deps import (
    RPC_TIMEOUT,
    ApiError,
    Backend,
    Research,
    backend,
    current_user,
    owned_research,
    within,
)
from workflows.models import ResearchResult

router = APIRouter(tags=["research"])
#: How long an answer or a review may wait for a worker to take it.
UPDATE_S = 10.0
#: How long listing may take, and how many of everyone's research it reads to find a user's.
LIST_S = 8.0
MAX_SCAN = 2000
MAX_LIMIT = 100
#: What the workflow's validators say when there is nothing to answer or review (409, not 422).
NOTHING_PENDING = ("no clarification question is pending", "no review is pending")

User = Annotated[str, Depends(current_user)]
App = Annotated[Backend, Depends(backend)]
Owned = Annotated[Research, Depends(owned_research)]


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    description: str = ""


class Review(BaseModel):
    """What the `plan_review` / `report_review` signals take; `steps` replace a plan's pending steps."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve", "revise", "cancel"]
    feedback: str = ""
    steps: list[Step] | None = None


@router.post("/research", status_code=201)
async def start(body: Annotated[dict[str, Any], Body()], user: User, app: App) -> JSONResponse:
    # attended (default true): the research's page shows a review and takes the answer, so `auto`
    # may ask for one; a script that starts research nobody will review says false.
    attended = body.pop("attended", True) if isinstance(body, dict) else True
    if not isinstance(attended, bool):
        raise ApiError(422, f"invalid attended {attended!r}: use true or false")
    try:
        request = build_request(body)
    except RequestError as err:
        raise ApiError(422, str(err)) from None
    if request.follow_up_of:
        await owned_research(request.follow_up_of, user, app)  # someone else's: 404, as unknown
    client = await app.temporal()
    try:
        request = await ready(request, Session(app.cfg, client=client))
    except (RequestError, CliError) as err:
        raise ApiError(422, str(err)) from None
    research_id = new_id()
    await within(
        client.start_workflow(
            WORKFLOW_TYPE,
            request.model_copy(update={"owner": user, "attended": attended}),
            id=research_id,
            task_queue=app.cfg.temporal_task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            static_summary=summary_line(request),
            memo={"owner": user, "question": request.query},  # owner: read back by owned_research
            rpc_timeout=RPC_TIMEOUT,
        )
    )
    return JSONResponse(
        {"id": research_id}, status_code=201, headers={"Location": f"/api/research/{research_id}"}
    )


@router.get("/research")
async def list_research(
    user: User,
    app: App,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
    before: Annotated[
        str | None, Query(description="the started_at of the last research of the previous page")
    ] = None,
) -> list[dict[str, Any]]:
    """Running and stored research merged by id, newest started first."""
    cursor = _cursor(before)
    client = await app.temporal()
    live = await within(_temporal_page(client, user, app.cfg, cursor, limit), LIST_S)
    stored = await app.library(lambda url: stored_page(url, user, app.cfg, cursor, limit))
    rows = {row["id"]: row for row in stored}
    for row in live:
        row["question"] = row["question"] or rows.get(row["id"], {}).get("question")
        rows[row["id"]] = row
    page = sorted(rows.values(), key=lambda row: row["started_at"], reverse=True)[:limit]
    await within(_fill_questions(client, page))
    return [
        {**row, "started_at": _time(row["started_at"]), "closed_at": _time(row["closed_at"])}
        for row in page
    ]


@router.get("/research/{id}")
async def show(research: Owned, app: App) -> dict[str, Any]:
    """The `status` query's object while the research runs; its result once closed (or, for one
    that failed without a result, `failure`). Both with `id`, `owner` and `status`."""
    head = {"id": research.id, "owner": research.owner, "status": research.state}
    if research.running and research.handle is not None:
        status = await within(query_status(research.handle))
        return {**status.model_dump(mode="json"), **head}
    result, failure = await closed_result(research, app)
    return {**result.model_dump(mode="json"), **head} if result else {**head, "failure": failure}


@router.post("/research/{id}/answer")
async def answer(body: Answer, research: Owned, app: App) -> dict[str, Any]:
    handle = _running(research, "answer")
    reply = await _deliver("answer", send_answer(handle, body.answer.strip()))
    return await _after(research, app, reply)


@router.post("/research/{id}/review")
async def review(body: Review, research: Owned, app: App) -> dict[str, Any]:
    handle = _running(research, "review")
    reply = await _deliver("review", send_review(handle, body.model_dump(exclude_none=True)))
    return await _after(research, app, reply)


@router.post("/research/{id}/cancel", status_code=202)
async def cancel(research: Owned, app: App) -> dict[str, Any]:
    handle = _running(research, "cancel")
    await within(handle.cancel(rpc_timeout=RPC_TIMEOUT))
    app.hub.nudge(research.id)
    return {"id": research.id, "cancel_requested": True}


@router.get("/research/{id}/report")
async def report(
    request: Request,
    research: Owned,
    app: App,
    format: Literal["md", "html", "docx", "pdf"] = "md",  # noqa: A002 - the API's name
) -> Response:
    if research.running:
        raise ApiError(409, f"research {research.id} is still running: its report is not ready yet")
    result, failure = await closed_result(research, app)
    if result is None:
        raise ApiError(409, f"research {research.id} has no report: {failure}")
    # bounded in size, time and concurrency, in a child process (starter/web/downloads.py)
    body, content_type, name = await downloads.render(request, result, format, research.owner)
    return Response(
        body, media_type=content_type, headers={"Content-Disposition": _attachment(name)}
    )


# --- reading ---------------------------------------------------------------------------------------


async def closed_result(
    research: Research, app: Backend
) -> tuple[ResearchResult | None, str | None]:
    """The result of a closed research: the library's copy, else Temporal's; or why there is none."""
    if research.stored is not None:
        return research.stored.result, None
    try:
        stored = await app.library(lambda url: store.load_research(url, research.id))
    except ApplicationError:
        stored = None  # the library is unavailable: Temporal may still have the result
    if stored is not None:
        return stored.result, None
    assert research.handle is not None
    try:
        return await within(research.handle.result(rpc_timeout=RPC_TIMEOUT)), None
    except WorkflowFailureError as err:
        return None, f"the research failed: {root_message(err)}"


async def _temporal_page(
    client: Client, user: str, cfg: Settings, before: datetime | None, limit: int
) -> list[dict[str, Any]]:
    query = f"WorkflowType = '{WORKFLOW_TYPE}'"
    if before is not None:
        query += f" AND StartTime < '{before.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')}'"
    rows: list[dict[str, Any]] = []
    scanned = 0
    async for wf in client.list_workflows(query, page_size=200, rpc_timeout=RPC_TIMEOUT):
        scanned += 1
        if scanned > MAX_SCAN or len(rows) >= limit:
            break
        # owner: the memo, filtered here; a search attribute would let the query filter instead.
        if (
            wf.status is WorkflowExecutionStatus.CONTINUED_AS_NEW
            or str(await wf.memo_value("owner", cfg.research_user)) != user
        ):
            continue
        rows.append(
            {
                "id": wf.id,
                "question": await wf.memo_value("question", None),
                "stage": await wf.memo_value("stage", None),
                "status": wf.status.name.lower() if wf.status else "unknown",
                "owner": user,
                "started_at": wf.start_time,
                "closed_at": wf.close_time,
            }
        )
    return rows


async def _fill_questions(client: Client, rows: list[dict[str, Any]]) -> None:
    """Research started elsewhere (the CLI) has no question in its memo: its summary has it."""

    async def fill(row: dict[str, Any]) -> None:
        summary = await (
            await client.get_workflow_handle(row["id"]).describe(rpc_timeout=RPC_TIMEOUT)
        ).static_summary()
        row["question"] = re.sub(r"^Research: |\s\(\w+, \w+\)$", "", summary or "")

    await asyncio.gather(*(fill(row) for row in rows if not row["question"]))


def _cursor(before: str | None) -> datetime | None:
    if not before or not before.strip():
        return None
    try:
        moment = datetime.fromisoformat(before.strip().replace(" ", "+"))
    except ValueError:
        raise ApiError(
            422, "invalid before: use the started_at of the last research listed"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _time(moment: datetime | None) -> str | None:
    """UTC with a `Z`: usable as `before=` in a URL as it is (no `+` to escape)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z") if moment else None


# --- steering --------------------------------------------------------------------------------------


def _running(research: Research, what: str) -> WorkflowHandle[Any, ResearchResult]:
    if not research.running or research.handle is None:
        raise ApiError(
            409, f"research {research.id} is already {research.state}: nothing to {what}"
        )
    return research.handle


async def _deliver(what: str, sending: Any) -> str:
    """The update's reply; a refusal is 409 (nothing pending) or 422 (invalid), with its reason."""
    try:
        return await within(sending, UPDATE_S)
    except Refused as refused:
        reason = str(refused)
        raise ApiError(
            409 if reason in NOTHING_PENDING else 422, f"{what} refused: {reason}"
        ) from None
    except (TimeoutError, CliError):
        raise ApiError(
            503,
            f"no worker took the {what} within {UPDATE_S:.0f}s: is a worker running? "
            f"(the {what} was not confirmed)",
        ) from None


async def _after(research: Research, app: Backend, reply: str) -> dict[str, Any]:
    """The research's status once the update was taken (just the reply if it cannot be read)."""
    app.hub.nudge(research.id)
    head = {"id": research.id, "owner": research.owner, "accepted": reply}
    try:
        assert research.handle is not None
        status = await within(query_status(research.handle))
    except Exception:  # noqa: BLE001 - the update was taken; the status is a courtesy
        return head
    return {**status.model_dump(mode="json"), "status": "running", **head}


# --- downloads -------------------------------------------------------------------------------------


def _export(result: ResearchResult, fmt: str) -> tuple[bytes, str, str]:
    try:
        from starter.exports import export
    except ModuleNotFoundError as err:
        if err.name != "starter.exports":
            raise
        return _plain_export(result, fmt)
    try:
        return export(result, fmt)
    except ValueError as err:
        raise ApiError(422, str(err)) from None


def _plain_export(result: ResearchResult, fmt: str) -> tuple[bytes, str, str]:
    """Until starter/exports exists: the library's own md and html."""
    from starter.exports.markup import to_html, to_markdown

    if fmt not in ("md", "html"):
        raise ApiError(422, f"format {fmt} not available")
    text = to_html(result) if fmt == "html" else to_markdown(result)
    name = re.sub(r"[^\w-]+", "-", result.query.lower()).strip("-")[:60] or "report"
    return (
        text.encode(),
        "text/html; charset=utf-8" if fmt == "html" else "text/markdown; charset=utf-8",
        f"{name}.{fmt}",
    )


def _attachment(name: str) -> str:
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "report"
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"
