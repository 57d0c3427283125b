"""`GET /api/library?q=TEXT`: the user's stored research whose question (or title) contains the
text; `PATCH /api/library/{id}` renames one, `DELETE /api/library/{id}` removes it.

The library is read in a worker thread (SQLAlchemy is synchronous); its failures are a 503.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from starter.web.deps import App, User
from starter.web.models import LibraryItem, LibraryRename
from starter.web.services import research as service

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


@router.patch("/library/{id}", response_model=LibraryItem)
async def rename_in_library(id: str, body: LibraryRename, user: User, app: App) -> LibraryItem:  # noqa: A002
    """Gives the user's stored research a title of their own (`{"title": "..."}`, 1 to 200
    characters, cleaned of control, bidi and zero-width characters): the library, the research's
    page and its downloads use it. Empty or too long: 422; another user's id is 404, as an
    unknown one."""
    return await service.rename_stored(user, app, id, body.title)


@router.delete("/library/{id}", status_code=204)
async def delete_from_library(id: str, user: User, app: App) -> Response:  # noqa: A002
    """Removes the user's stored research from the library (Temporal may still show it until
    its retention ends); another user's id is 404, as an unknown one."""
    await service.delete_stored(user, app, id)
    return Response(status_code=204)
