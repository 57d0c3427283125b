"""`GET /api/library?q=TEXT`: the user's stored research whose question contains the text.

The library is read in a worker thread (SQLAlchemy is synchronous); its failures are a 503.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

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


@router.delete("/library/{id}", status_code=204)
async def delete_from_library(id: str, user: User, app: App) -> Response:  # noqa: A002
    """Removes the user's stored research from the library (Temporal may still show it until
    its retention ends); another user's id is 404, as an unknown one."""
    await service.delete_stored(user, app, id)
    return Response(status_code=204)
