"""`GET /api/library?q=TEXT`: the user's stored research whose question contains the text; and the
library's side of `GET /api/research` (stored research, newest first, before a cursor).

The library is read in a worker thread (SQLAlchemy is synchronous); its failures are a 503.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from activities.storage import store
from activities.storage.schema import ResearchRow
from config import Settings
from starter.web.deps import ApiError, Backend, backend, current_user

router = APIRouter(tags=["library"])
MAX_LIMIT = 100


@router.get("/library")
async def search_library(
    user: Annotated[str, Depends(current_user)],
    app: Annotated[Backend, Depends(backend)],
    q: Annotated[str, Query(max_length=500, description="text the question contains")] = "",
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
) -> list[dict[str, Any]]:
    entries = await app.library(
        lambda url: store.list_research(url, contains=q.strip() or None, limit=limit, owner=user)
    )
    return [
        {
            "id": e.workflow_id,
            "run_id": e.run_id,
            "question": e.query,
            "outcome": e.outcome,
            "finished_at": e.finished_at.isoformat(),
            "sources": e.sources,
            "claims": e.claims,
            "supported": e.supported,
            "owner": e.owner,
        }
        for e in entries
    ]


def stored_page(
    url: str, user: str, cfg: Settings, before: datetime | None, limit: int
) -> list[dict[str, Any]]:
    """The user's stored research that started before BEFORE, newest first, one row per id, as
    the research list shows them."""
    db = store.database_url(url)
    try:
        with Session(store.engine_for(db)) as session:
            query = (
                select(
                    ResearchRow.workflow_id,
                    ResearchRow.query,
                    ResearchRow.outcome,
                    ResearchRow.started_at,
                    ResearchRow.finished_at,
                )
                .order_by(ResearchRow.started_at.desc(), ResearchRow.id.desc())
                .limit(limit * 2)
            )  # a research stored for two runs is listed once
            if before is not None:
                bound = before.astimezone(UTC)
                query = query.where(
                    ResearchRow.started_at
                    < (bound.replace(tzinfo=None) if db.get_backend_name() == "sqlite" else bound)
                )
            query = query.where(
                ResearchRow.owner == user
            )  # owner: the library's column (migration 0004)
            rows = session.execute(query).all()
    except SQLAlchemyError as err:
        raise ApiError(503, f"the research library at {store.safe(db)} is unavailable") from err
    page: dict[str, dict[str, Any]] = {}
    for workflow_id, question, outcome, started, finished in rows:
        page.setdefault(
            workflow_id,
            {
                "id": workflow_id,
                "question": question,
                "stage": outcome,
                "status": outcome,
                "owner": user,
                "started_at": _utc(started),
                "closed_at": _utc(finished),
            },
        )
    return list(page.values())[:limit]


def _utc(moment: datetime) -> datetime:
    """SQLite hands timestamps back without their zone; they were written in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
