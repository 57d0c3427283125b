"""The standing research pages: `/standing` (the user's standing research with next run, last run
and whether it found changes, and a form to create one) and, on a finished research's page, what
changed since the previous run beside that run's report, and a button to research it again on a
schedule. With JavaScript the buttons and the form call the JSON API (static/standing.js), as the
other pages do; without it the form posts here and the buttons are forms of their own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from starter.client import library
from starter.client.errors import ClientError
from starter.client.temporal import one_line
from starter.exports import clean
from starter.web.deps import ApiError, Backend
from starter.web.identity import auth
from starter.web.models import StandingCreate
from starter.web.pages import request_form
from starter.web.pages.forms import act, cross_site, read_form
from starter.web.pages.frame import backend, error_page, page, to_signin
from starter.web.presentation.render import render_markdown
from starter.web.services import standing as standing_service
from starter.web.services.sources import sources_words, unavailable_sources
from workflows.models import QUERY_MAX_CHARS, QUERY_MIN_CHARS, ResearchResult

router = APIRouter(include_in_schema=False)
#: A standing research's schedule when the form names none.
DEFAULT_EVERY = "7d"


@router.get("/standing", response_class=HTMLResponse)
async def standing_page(request: Request, question: str = "", created: str = "") -> Response:
    """The user's standing research and the form to create one, filled from the query (a finished
    research's "Research again on a schedule" sends its request's fields)."""
    user = auth.user_from_request(request)
    if user is None:
        return to_signin(request)
    return await _standing(request, user, {**request.query_params, "question": question}, created)


@router.post("/standing", response_class=HTMLResponse)
async def create(request: Request) -> Response:
    """The form without JavaScript: create, then the list; a refusal is the form again, as it was
    filled, with the one line that says why."""
    form = await read_form(request, fields=30)
    user = auth.user_from_request(request)
    if user is None:
        return to_signin(request, "/standing")
    refused = cross_site(request, form)
    if refused:
        return error_page(request, user, 403, refused, "/standing")
    try:
        await standing_service.create(creation(form), user, backend(request))
    except (ApiError, ClientError) as err:
        failure = ApiError.of(err) if isinstance(err, ClientError) else err
        return await _standing(request, user, form, problem=failure.message, status=failure.status)
    return RedirectResponse("/standing?created=1", status_code=303)


#: What each action button of a standing research does, and where the browser goes after it.
ACTIONS: dict[str, Callable[[str, str, Backend], Awaitable[Any]]] = {
    "run": standing_service.run_now,
    "pause": standing_service.pause,
    "resume": standing_service.resume,
    "delete": standing_service.delete,
}


@router.post("/standing/{standing_id}/{action}", response_class=HTMLResponse)
async def act_on(request: Request, standing_id: str, action: str) -> Response:
    """An action button without JavaScript: run now (then the run's page), pause, resume or
    delete (asked first), then the list."""
    form = await read_form(request)

    async def work(user: str, app: Backend) -> str:
        if action not in ACTIONS:
            raise ApiError(404, f"no action {action!r}: use run, pause, resume or delete")
        answer = await ACTIONS[action](standing_id, user, app)
        return answer if action == "run" else "/standing"

    confirm = (
        "Delete this standing research? Its schedule ends; the research it made stays in your library."
        if action == "delete"
        else None
    )
    return await act(request, form, "/standing", work, confirm=confirm)


def creation(form: dict[str, str]) -> StandingCreate:
    """What a posted /standing form asks for, as `POST /api/standing` takes it: its schedule
    (every or cron, as typed: both is refused, neither is every 7 days), its receivers (one URL a
    line) and the request's options."""
    every, cron = form.get("every", "").strip(), form.get("cron", "").strip()
    notify = [line.strip() for line in form.get("notify", "").splitlines() if line.strip()]
    return StandingCreate(
        question=form.get("question"),
        every=every or (None if cron else DEFAULT_EVERY),
        cron=cron or None,
        notify=notify,
        **request_form.values(form),
    )


async def _standing(
    request: Request,
    user: str,
    filled: Mapping[str, str],
    created: str = "",
    problem: str | None = None,
    status: int = 200,
) -> Response:
    app = backend(request)
    items: list[dict[str, Any]] = []
    listing_problem = None
    try:
        items = await standing_service.listed_with_changes(user, app)
    except Exception as err:  # noqa: BLE001 - the page says it, the form still works
        listing_problem = f"Your standing research could not be listed: {one_line(str(getattr(err, 'message', err)))}"
    return page(
        request,
        "standing.html",
        user,
        status=status,
        here="standing",
        items=items,
        error=listing_problem,
        form_error=problem,
        created=bool(created),
        filled={k: str(v)[:QUERY_MAX_CHARS] for k, v in filled.items()},
        controls=request_form.controls(
            {"sources": dict(sources_words(app.cfg))},
            {"sources": unavailable_sources(app.cfg)},
        ),
        default_every=DEFAULT_EVERY,
        min_chars=QUERY_MIN_CHARS,
        max_chars=QUERY_MAX_CHARS,
    )


async def research_context(app: Backend, user: str, result: ResearchResult) -> dict[str, Any]:
    """What a finished research's page adds: the run's changes beside the previous run's report
    (RESULT and the previous report as the client hands them: cleaned, local sources by name)."""
    context: dict[str, Any] = {"again": asked_again(result)}
    changes = result.changes
    if changes is None:
        return context
    context["changes"] = changes.model_dump(mode="json")
    context["changed"] = changes.changed
    context["since_text"] = changes.since.strftime("%-d %B %Y, %H:%M UTC")
    # the report opens with its own "What changed since DATE" section (workflows/standing/
    # changes.py): the page then lists nothing twice, and shows the previous run beside it
    context["in_report"] = "## What changed since" in result.report_markdown
    try:
        earlier = await library.stored_research(app.session, changes.since_research_id, owner=user)
    except ClientError:  # another user's, gone, or unreadable: the comparison shows without it
        earlier = None
    if earlier is not None:  # as the client hands it: titled as its owner titled it, by name
        context["previous_report"] = render_markdown(clean(earlier.result.report_markdown))
    return context


def asked_again(result: ResearchResult) -> dict[str, str]:
    """The finished research's request as /standing's form takes it (its query's fields): the
    same question, depth, mode, sources, language and budgets, researched again on a schedule."""
    budget = result.budget
    given = {
        "question": result.query,
        "depth": result.depth.value,
        "mode": result.mode.value,
        "sources": result.searched.value,
        "language": result.language,
        "max_tokens": budget.max_tokens if budget else None,
        "max_cost_usd": budget.max_cost_usd if budget else None,
    }
    return {name: str(value) for name, value in given.items() if value is not None}
