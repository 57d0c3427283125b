"""A person's research, listed: `my_research`, the one list the CLI's `list`, the MCP tool
`list_research` and the web app (`GET /api/research`, the home page) all show.

Two sources, merged by id into one shape of row (`ListedResearch`): Temporal's visibility (what
runs, and what closed that Temporal still keeps: the stage and the question come from the memo
`research_client.start` writes, so no worker is needed) and the library (finished research, kept
after Temporal forgot it; with the title its owner gave it). A research both know is one row:
Temporal's status and stage, the library's title. Newest started first.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel
from temporalio.client import WorkflowExecutionStatus

from settings import Settings
from starter.client import library
from starter.client.errors import ClientError, Kind
from starter.client.session import Session, local_owner
from starter.client.temporal import WORKFLOW_TYPE, temporal_errors
from workflows.models import Stage

#: Research looked at in Temporal's visibility to find one person's (everyone's are listed there).
OWNER_SCAN = 2000


class ListedResearch(BaseModel):
    """One research in a person's list, running or stored (times in UTC)."""

    id: str
    run_id: str | None = None
    question: str | None = None
    #: The title its owner gave it in the library (None: none of their own).
    title: str | None = None
    stage: str | None = None
    status: str
    owner: str
    started_at: datetime
    closed_at: datetime | None = None


async def my_research(
    session: Session,
    *,
    limit: int,
    owner: str | None = None,
    before: datetime | None = None,
    running_only: bool = False,
    rpc_timeout: timedelta | None = None,
) -> list[ListedResearch]:
    """OWNER's (default: the session's user's) research that started before BEFORE, running and
    stored, at most LIMIT, newest started first; RUNNING_ONLY: what runs (the library has none)."""
    who = owner or session.user
    live = await listed_in_temporal(
        session, limit=limit, owner=who, before=before, running_only=running_only,
        rpc_timeout=rpc_timeout,
    )  # fmt: skip
    stored = [] if running_only else await library.started(session, who, before, limit)
    rows: dict[str, ListedResearch] = {s.workflow_id: _stored_row(s, who) for s in stored}
    for row in live:
        known = rows.get(row.id)
        if known is not None:
            row = row.model_copy(
                update={"title": known.title, "question": row.question or known.question}
            )
        rows[row.id] = row
    newest = sorted(rows.values(), key=lambda row: row.started_at, reverse=True)
    return newest[:limit]


def _stored_row(s: library.StartedResearch, owner: str) -> ListedResearch:
    return ListedResearch(
        id=s.workflow_id,
        question=s.query,
        title=s.title,
        stage=s.outcome,
        status=s.outcome,
        owner=owner,
        started_at=s.started_at.astimezone(UTC),
        closed_at=s.finished_at.astimezone(UTC),
    )


def visibility_query(running_only: bool = False, before: datetime | None = None) -> str:
    """The visibility query for research, newest first; BEFORE: started before that moment."""
    query = f"WorkflowType = '{WORKFLOW_TYPE}'"
    if running_only:
        query += " AND ExecutionStatus = 'Running'"
    if before is not None:
        query += f" AND StartTime < '{before.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')}'"
    return query


async def listed_in_temporal(
    session: Session,
    *,
    limit: int,
    owner: str | None = None,
    running_only: bool = False,
    before: datetime | None = None,
    scan: int = OWNER_SCAN,
    rpc_timeout: timedelta | None = None,
) -> list[ListedResearch]:
    """Research from Temporal's visibility, newest first: at most LIMIT rows, OWNER's only when
    given (read from the memo: at most SCAN rows are looked at to find them); a run that continued
    as new is listed once, as its latest run."""
    client = await session.connect()
    rows: list[ListedResearch] = []
    with temporal_errors(address=session.cfg.temporal.target):
        listing = client.list_workflows(
            visibility_query(running_only, before),
            page_size=200,
            limit=None if owner else limit,
            rpc_timeout=rpc_timeout,
        )
        scanned = 0
        async for wf in listing:
            scanned += 1
            if len(rows) >= limit or scanned > scan:
                break
            if owner is not None and wf.status is WorkflowExecutionStatus.CONTINUED_AS_NEW:
                continue
            memo = await memo_of(wf, session.cfg)
            if owner is None or memo["owner"] == owner:
                rows.append(_listed(wf, memo, await _memo_stage(wf)))
    return rows


async def summaries(session: Session, rows: list[ListedResearch]) -> list[str | None]:
    """Each row's line in Temporal's Web UI (None for one only the library keeps)."""
    client = await session.connect()

    async def summary(row: ListedResearch) -> str | None:
        if row.run_id is None:
            return None
        handle = client.get_workflow_handle(row.id, run_id=row.run_id)
        try:
            with temporal_errors(row.id):
                return await (await handle.describe()).static_summary()
        except ClientError as err:
            if err.kind is Kind.NOT_FOUND:
                return None
            raise

    return list(await asyncio.gather(*(summary(row) for row in rows)))


def _listed(wf: Any, memo: dict[str, Any], stage: str | None) -> ListedResearch:
    question = memo["question"]
    return ListedResearch(
        id=wf.id,
        run_id=wf.run_id,
        question=str(question) if question is not None else None,
        stage=stage,
        status=wf.status.name.lower() if wf.status else "unknown",
        owner=memo["owner"],
        started_at=wf.start_time.astimezone(UTC),
        closed_at=wf.close_time.astimezone(UTC) if wf.close_time else None,
    )


async def memo_of(wf: Any, cfg: Settings) -> dict[str, Any]:
    """What `research_client.memo` wrote, as read back from a listed research (an undecodable
    value: its default)."""
    return {
        "owner": str(await _memo(wf, "owner", local_owner(cfg))),
        "question": await _memo(wf, "question", None),
        "follows": await _memo(wf, "follows", None),
    }


async def _memo(wf: Any, key: str, default: Any) -> Any:
    try:
        return await wf.memo_value(key, default)
    except Exception:  # noqa: BLE001 - an undecodable memo must not break the listing
        return default


async def _memo_stage(wf: Any) -> str | None:
    """The stage `stages.enter` writes into the memo at every transition."""
    value = await _memo(wf, "stage", None)
    return str(value.value if isinstance(value, Stage) else value) if value is not None else None
