"""The library page (`/library`): the user's finished research, searched by question and report,
and its forms without JavaScript (rename, delete) that send the browser back to the list."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from starter.web.deps import Backend
from starter.web.identity import auth
from starter.web.pages.forms import act, read_form
from starter.web.pages.frame import PageError, backend, listed, page, read, to_signin
from starter.web.services import research as service

router = APIRouter(include_in_schema=False)


@router.get("/library", response_class=HTMLResponse)
async def library(request: Request, q: str = "", deleted: str = "", renamed: str = "") -> Response:
    if (user := auth.user_from_request(request)) is None:
        return to_signin(request)
    q = q.strip()[:200]
    entries, problem = [], None
    try:
        found = await read(service.search_library(user, backend(request), q, 20))
        entries = [listed(item.model_dump()) for item in found]
    except PageError as err:
        problem = f"The library could not be searched: {err.message}"
    return page(
        request,
        "library.html",
        user,
        here="library",
        q=q,
        entries=entries,
        error=problem,
        deleted=bool(deleted),
        renamed=bool(renamed),
    )


@router.post("/library/{research_id}/rename")
async def rename_in_library(request: Request, research_id: str) -> Response:
    form = await read_form(request)

    async def rename(user: str, app: Backend) -> str:
        await service.rename_stored(user, app, research_id, form.get("title", ""))
        return _back(form, "renamed")

    return await act(request, form, "/library", rename)


@router.post("/library/{research_id}/delete")
async def delete_from_library(request: Request, research_id: str) -> Response:
    form = await read_form(request)

    async def remove(user: str, app: Backend) -> str:
        await service.delete_stored(user, app, research_id)
        return _back(form, "deleted")

    return await act(
        request,
        form,
        "/library",
        remove,
        confirm="Delete this research from your library? Its report and sources go with it.",
    )


def _back(form: dict[str, str], done: str) -> str:
    """The library as the person left it (their search), saying what was DONE."""
    q = form.get("q", "").strip()
    return f"/library?q={quote(q)}&{done}=1" if q else f"/library?{done}=1"
