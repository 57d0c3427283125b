"""The standing research pages: `/standing` (the user's standing research with next run, last run
and whether it found changes, and a form to create one) and, on a finished research's page, what
changed since the previous run beside that run's report, and a button to research it again on a
schedule. The buttons and the form call the JSON API (static/standing.js), as the other pages do.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from activities.corpus.public_names import PublicNames
from activities.storage import store
from starter.client.errors import ClientError
from starter.client.temporal import one_line
from starter.client.titles import titled
from starter.exports import clean
from starter.web import auth, standing_service
from starter.web.deps import Backend
from starter.web.render import render_markdown
from starter.web.templating import templates
from workflows.models import QUERY_MAX_CHARS, QUERY_MIN_CHARS, Depth, ResearchResult

router = APIRouter(include_in_schema=False)


def page(request: Request, name: str, user: str, **context: Any) -> Response:
    who = auth.identify(request)
    return templates.TemplateResponse(
        request,
        name,
        {
            "user": user,
            "signed_in": who is not None and who.via == "cookie",
            "csrf": auth.csrf_token(request),
            **context,
        },
    )


@router.get("/standing", response_class=HTMLResponse)
async def standing_page(request: Request, question: str = "", depth: str = "") -> Response:
    user = auth.user_from_request(request)
    if user is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/signin?next={quote(target, safe='')}", status_code=303)
    app: Backend = request.app.state.backend
    items: list[dict[str, Any]] = []
    problem = None
    try:
        items = await standing_service.listed_with_changes(user, app)
    except Exception as err:  # noqa: BLE001 - the page says it, the form still works
        problem = f"Your standing research could not be listed: {one_line(str(getattr(err, 'message', err)))}"
    return page(
        request,
        "standing.html",
        user,
        here="standing",
        items=items,
        error=problem,
        question=question[:QUERY_MAX_CHARS],
        depth=depth if depth in {d.value for d in Depth} else "auto",
        depths=[d.value for d in Depth],
        min_chars=QUERY_MIN_CHARS,
        max_chars=QUERY_MAX_CHARS,
    )


async def research_context(app: Backend, user: str, result: ResearchResult) -> dict[str, Any]:
    """What a finished research's page adds: the run's changes beside the previous run's report
    (RESULT as the page shows it, `pages._public`; the previous report cleaned as it is)."""
    context: dict[str, Any] = {"again_question": result.query, "again_depth": result.depth.value}
    changes = result.changes
    if changes is None:
        return context
    context["changes"] = changes.model_dump(mode="json")
    context["changed"] = changes.changed
    try:
        earlier = await app.library(lambda url: store.load_research(url, changes.since_research_id))
    except (ClientError, Exception):  # noqa: BLE001 - the comparison still shows without it
        earlier = None
    if earlier is not None and earlier.result.owner == user:
        earlier_report = PublicNames.of(app.cfg).text(  # as its owner titled it
            titled(earlier.result, earlier.title).report_markdown
        )
        context["previous_report"] = render_markdown(clean(earlier_report))
    return context
