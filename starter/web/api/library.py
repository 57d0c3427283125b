"""`GET /api/library?q=TEXT`: the user's stored research whose question contains the text.

The library is read in a worker thread (SQLAlchemy is synchronous); its failures are a 503.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from starter.web import service
from starter.web.deps import App, User
from starter.web.models import LibraryItem

router = APIRouter(tags=["library"])
MAX_LIMIT = 100


@router.get("/library", response_model=list[LibraryItem])
async def search_library(
    user: User,
    app: App,
    q: Annotated[str, Query(max_length=500, description="text the question contains")] = "",
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
) -> list[LibraryItem]:
    return await service.search_library(user, app, q, limit)
