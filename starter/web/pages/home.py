"""The home page (`/`): ask a question (with the request's options), the user's recent research,
and their documents (upload, list, delete)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from starter.web.identity import auth
from starter.web.pages import request_form
from starter.web.pages.frame import PageError, backend, listed, page, read, to_signin
from starter.web.services import documents
from starter.web.services import research as service
from workflows.models import QUERY_MAX_CHARS, QUERY_MIN_CHARS

router = APIRouter(include_in_schema=False)
#: How many of the user's research the home page lists.
RECENT = 10


@router.get("/", response_class=HTMLResponse)
async def home(request: Request) -> Response:
    if (user := auth.user_from_request(request)) is None:
        return to_signin(request)
    recent, problem = [], None
    try:
        mine = await read(service.list_research(user, backend(request), None, RECENT))
        recent = [listed(item.model_dump()) for item in mine]
    except PageError as err:
        problem = f"Your research could not be listed: {err.message}"
        if err.status == 503:  # Temporal is away: the library still knows what finished
            try:
                found = await read(service.search_library(user, backend(request), "", RECENT))
                recent = [listed(item.model_dump()) for item in found]
                problem = (
                    f"Running research cannot be listed now ({err.message}); "
                    "your finished research from the library:"
                )
            except PageError:
                pass
    theirs = await documents.home(backend(request).cfg, user)
    return page(
        request,
        "index.html",
        user,
        here="home",
        recent=recent,
        recent_error=problem,
        **theirs,
        # each Sources choice says what it searches on this server (as the worker runs)
        controls=request_form.controls(
            {"sources": dict(theirs["sources"])}, {"sources": theirs["unavailable"]}
        ),
        min_chars=QUERY_MIN_CHARS,
        max_chars=QUERY_MAX_CHARS,
    )
