"""`/api/research`: start, list, read, answer, review, cancel and download a user's research.

Thin: each route maps one call of `starter.web.services.research` (which reaches Temporal through the one
research client, `starter.client.research_client`) to HTTP, with its request and response models from
`starter.web.models`. The request is built by starter/client/requests.py (the CLI's and the MCP tool's
defaults, choices and one-line errors) and readied as the CLI readies it; answers and reviews go
through the workflow's validating updates, as the CLI's do, so an invalid one is refused with the
workflow's own reason (409 when nothing is pending, else 422), never recorded. Reading is the
`status` query while a research runs, its stored result once closed (`ResearchView`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from starter.exports import FORMATS, ascii_file_name
from starter.web.deps import ApiError, App, Owned, User, created
from starter.web.models import (
    Accepted,
    Answer,
    CancelRequested,
    ExportFormat,
    ResearchCreate,
    ResearchCreated,
    ResearchListItem,
    ResearchShown,
    Review,
    Steered,
)
from starter.web.services import downloads
from starter.web.services import research as service

router = APIRouter(tags=["research"])
MAX_LIMIT = 100
DEFAULT_FORMAT = "md"


@router.post("/research", status_code=201, response_model=ResearchCreated)
async def start(body: ResearchCreate, user: User, app: App) -> JSONResponse:
    return created("research", await service.start(body, user, app))


@router.get("/research", response_model=list[ResearchListItem])
async def list_research(
    user: User,
    app: App,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
    before: Annotated[
        str | None, Query(description="the started_at of the last research of the previous page")
    ] = None,
) -> list[ResearchListItem]:
    """Running and stored research merged by id, newest started first."""
    return await service.list_research(user, app, _cursor(before), limit)


@router.get("/research/{id}", response_model=ResearchShown)
async def show(
    research: Owned,
    app: App,
    version: Annotated[
        int | None, Query(ge=1, description="an earlier version of a revised report")
    ] = None,
) -> ResearchShown:
    """The `status` query's object while the research runs; its result once closed (or, for one
    that failed without a result, `failure`). Both with `id`, `owner`, `status` and `running`.
    A finished research's report is its latest version (`version`, `versions`), or VERSION's."""
    return (await service.view(research, app, version=version)).shown()


@router.post("/research/{id}/answer", response_model=Steered | Accepted)
async def answer(body: Answer, research: Owned, app: App) -> Steered | Accepted:
    return await service.answer(research, app, body.answer)


@router.post("/research/{id}/review", response_model=Steered | Accepted)
async def review(body: Review, research: Owned, app: App) -> Steered | Accepted:
    return await service.review(research, app, body.model_dump(exclude_none=True))


@router.post("/research/{id}/cancel", status_code=202, response_model=CancelRequested)
async def cancel(research: Owned, app: App) -> CancelRequested:
    await service.cancel(research, app)
    return CancelRequested(id=research.id)


@router.get(
    "/research/{id}/report",
    response_class=Response,
    responses={200: {"content": {f.content_type: {} for f in FORMATS.values()}}},
)
async def report(
    request: Request,
    research: Owned,
    app: App,
    format: ExportFormat = DEFAULT_FORMAT,  # noqa: A002 - the API's name
    version: Annotated[int | None, Query(ge=1)] = None,
) -> Response:
    if research.running:
        raise ApiError(409, f"research {research.id} is still running: its report is not ready yet")
    result, failure, _ = await service.closed_result(research, app, version)
    if result is None:
        raise ApiError(409, f"research {research.id} has no report: {failure}")
    accessed = await downloads.read_on(research, app) if FORMATS[format].references else None
    # bounded in size, time and concurrency, in a child process (starter/web/services/downloads.py)
    body, content_type, name = await downloads.render(
        request, result, format, research.owner, accessed
    )
    return Response(
        body, media_type=content_type, headers={"Content-Disposition": _attachment(name)}
    )


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


def _attachment(name: str) -> str:
    """RFC 6266: the name in UTF-8 (`filename*`), an ASCII one beside it for older clients."""
    return (
        f"attachment; filename=\"{ascii_file_name(name)}\"; filename*=UTF-8''{quote(name, safe='')}"
    )
