"""The pages a person uses: ask (`/`), follow and steer one research (`/research/{id}`), the
library (`/library`) and signing in (`/signin`).

Server-rendered HTML (Jinja2, autoescaped) with small JavaScript modules from /static for what
is live: the event log, the waiting panels, the citation popovers. The pages read research only
through the app's own JSON API, called in-process with the reader's own credentials, so a page
can never show what the API would refuse that person: the owner check, the 404 for someone
else's research and the 503 when Temporal is away are the API's, in one place.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

import httpx
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader
from starlette.exceptions import HTTPException

from starter.exports import clean
from starter.exports.public import public_result
from starter.web import auth
from starter.web.render import render_markdown, render_report
from workflows.events import EventKind
from workflows.models import QUERY_MAX_CHARS, QUERY_MIN_CHARS, Depth, ResearchResult

HERE = Path(__file__).parent
templates = Jinja2Templates(
    env=Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
)
router = APIRouter(include_in_schema=False)

DOWNLOADS = (
    ("md", "Download Markdown"),
    ("html", "Download HTML"),
    ("docx", "Download Word"),
    ("pdf", "Download PDF"),
)
STEP_WORDS = {
    "pending": "to do",
    "in_progress": "in progress",
    "completed": "done",
    "skipped": "skipped",
}
FINAL = {"completed", "cancelled", "failed"}
#: A sign-in form is a token and a path: anything longer is not one.
FORM_LIMIT = 8192
RECENT = 10


class PageError(Exception):
    """What the API said instead of data: its status and its one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# --- pages ------------------------------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
async def home(request: Request) -> Response:
    if (user := auth.user_from_request(request)) is None:
        return _to_signin(request)
    recent, problem = [], None
    try:
        recent = [
            _listed(item) for item in _items(await _api(request, f"/api/research?limit={RECENT}"))
        ]
    except PageError as err:
        problem = f"Your research could not be listed: {err.message}"
    return _page(
        request,
        "index.html",
        user,
        here="home",
        recent=recent,
        recent_error=problem,
        depths=[d.value for d in Depth],
        min_chars=QUERY_MIN_CHARS,
        max_chars=QUERY_MAX_CHARS,
    )


@router.get("/research/{research_id}", response_class=HTMLResponse)
async def research(request: Request, research_id: str) -> Response:
    if (user := auth.user_from_request(request)) is None:
        return _to_signin(request)
    try:
        shown = await _api(request, f"/api/research/{quote(research_id, safe='')}")
    except PageError as err:
        return _error(request, user, err)
    plan = shown.get("plan") or {}
    steps = plan.get("steps") or []
    closed = _closed(shown)
    context: dict[str, Any] = {
        "id": research_id,
        "question": shown.get("query") or shown.get("question") or research_id,
        "stage": shown.get("outcome") or shown.get("stage") or "",
        "follow_up_of": shown.get("follow_up_of"),
        "steps": steps,
        "step_words": STEP_WORDS,
        "planned": len(steps),
        "done": sum(1 for s in steps if s.get("status") in ("completed", "skipped")),
        "event_kinds": [k.value for k in EventKind],
    }
    if closed:
        context.update(_report_context(research_id, shown))
    return _page(request, "research.html", user, failure=shown.get("failure"), **context)


@router.get("/research/{research_id}/report-fragment", response_class=HTMLResponse)
async def report_fragment(request: Request, research_id: str) -> Response:
    """The finished research's report, sources, verification, downloads and follow-up form, for
    the page to put in place when the research ends while it is open."""
    shown = await _fragment_source(request, research_id)
    if isinstance(shown, Response):
        return shown
    if shown.get("failure"):
        return templates.TemplateResponse(request, "failure.html", {"failure": shown["failure"]})
    if not _closed(shown):
        return _fragment_error(PageError(409, "the research has not finished yet"))
    return templates.TemplateResponse(request, "report.html", _report_context(research_id, shown))


@router.get("/research/{research_id}/draft-fragment", response_class=HTMLResponse)
async def draft_fragment(request: Request, research_id: str) -> Response:
    """The report a person is asked to approve, rendered and sanitised like the final one."""
    shown = await _fragment_source(request, research_id)
    if isinstance(shown, Response):
        return shown
    draft = shown.get("draft_report_markdown")
    if not draft:
        return HTMLResponse("<p>The draft is not available from this research's status.</p>")
    return HTMLResponse(render_markdown(clean(draft)))


async def _fragment_source(request: Request, research_id: str) -> dict[str, Any] | Response:
    """What the API shows of the research, or the answer a fragment gives instead (an error as a
    paragraph: the page puts it where the fragment would go)."""
    if auth.user_from_request(request) is None:
        return _fragment_error(PageError(401, "sign in again to read this"))
    try:
        return await _api(request, f"/api/research/{quote(research_id, safe='')}")
    except PageError as err:
        return _fragment_error(err)


@router.get("/library", response_class=HTMLResponse)
async def library(request: Request, q: str = "") -> Response:
    if (user := auth.user_from_request(request)) is None:
        return _to_signin(request)
    q = q.strip()[:200]
    entries, problem = [], None
    try:
        entries = [
            _listed(item) for item in _items(await _api(request, f"/api/library?q={quote(q)}"))
        ]
    except PageError as err:
        problem = f"The library could not be searched: {err.message}"
    return _page(request, "library.html", user, here="library", q=q, entries=entries, error=problem)


# --- signing in ---------------------------------------------------------------------------------------


@router.get("/signin", response_class=HTMLResponse)
async def signin_form(request: Request, next: str = "/") -> Response:  # noqa: A002 - the query's name
    return _page(request, "signin.html", None, next=_local(next), error=None)


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    form = await _form(request)
    target = _local(form.get("next", "/"))
    refused = auth.cross_site_signin(request)  # login CSRF
    if refused:
        return HTMLResponse(refused, status_code=403)
    try:
        user = auth.check_token(form.get("token", "").strip())
        if user is not None:
            auth.signed_in(user)
    except HTTPException as err:  # too many attempts
        return _limited(request, target, err)
    if user is None:
        return _page(
            request,
            "signin.html",
            None,
            status=401,
            next=target,
            error="That access token is not valid. Check it and try again.",
        )
    response = RedirectResponse(target, status_code=303)
    auth.start_session(response, user)
    return response


@router.post("/signout")
async def signout(request: Request) -> Response:
    form = await _form(request)
    if auth.user_from_request(request) is not None and form.get("csrf") != auth.csrf_token(request):
        return HTMLResponse(
            "Refused: the form did not come from this site's page.", status_code=403
        )
    response = RedirectResponse("/signin", status_code=303)
    auth.end_session(response)
    return response


# --- helpers ---------------------------------------------------------------------------------------


def _limited(request: Request, target: str, err: HTTPException) -> Response:
    page = _page(request, "signin.html", None, status=429, next=target, error=str(err.detail))
    page.headers.update(err.headers or {})
    return page


async def _api(request: Request, path: str) -> Any:
    """GET the app's own API in-process, as the person who asked for the page."""
    headers = {
        name: request.headers[name]
        for name in ("cookie", "authorization")
        if name in request.headers
    }
    transport = httpx.ASGITransport(app=request.app)
    async with httpx.AsyncClient(
        transport=transport, base_url=str(request.base_url), headers=headers
    ) as client:
        response = await client.get(path, headers={"accept": "application/json"})
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.status_code >= 400:
        message = data.get("error") if isinstance(data, dict) else None
        raise PageError(response.status_code, message or response.reason_phrase)
    return data


def _items(data: Any) -> list[dict[str, Any]]:
    """A list from the API: the list itself, or the first list in its object."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for value in data.values():
            if isinstance(value, list):
                return value
    return []


@dataclass(frozen=True)
class _Listed:
    id: str
    question: str
    stage: str
    outcome: str
    sources: int | None
    claims: int | None
    supported: int | None
    when: datetime | None


def _listed(item: dict[str, Any]) -> _Listed:
    """One research as the lists show it, from the API's list or library entry."""
    stage = str(item.get("stage") or item.get("outcome") or item.get("status") or "")
    when = next(
        (v for v in (item.get(k) for k in ("closed_at", "finished_at", "started_at")) if v), None
    )
    return _Listed(
        id=str(item.get("id") or item.get("workflow_id") or ""),
        question=" ".join(str(item.get("question") or item.get("query") or "").split()),
        stage=stage,
        outcome=str(item.get("outcome") or stage),
        sources=item.get("sources"),
        claims=item.get("claims"),
        supported=item.get("supported"),
        when=_when(when),
    )


def _when(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def _closed(shown: dict[str, Any]) -> bool:
    return "outcome" in shown or shown.get("stage") in FINAL and "report_markdown" in shown


def _report_context(research_id: str, shown: dict[str, Any]) -> dict[str, Any]:
    # cleaned of bidi and zero-width controls, corpus paths as names (starter/exports/public.py)
    result = public_result(ResearchResult.model_validate(shown), _corpus_dir())
    return {
        "id": research_id,
        "report": render_report(result),
        "outcome": result.outcome.value,
        "notes": result.notes,
        "downloads": DOWNLOADS,
    }


def _corpus_dir() -> Path | None:
    request = auth.current_request.get()
    backend = getattr(request.app.state, "backend", None) if request is not None else None
    return backend.cfg.research_corpus_dir if backend is not None else None


def _page(
    request: Request, name: str, user: str | None, status: int = 200, **context: Any
) -> Response:
    context.setdefault("here", "")
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
        status_code=status,
    )


def _error(request: Request, user: str, err: PageError) -> Response:
    title = {404: "No such research", 503: "The research service is unavailable"}.get(
        err.status, "Something went wrong"
    )
    message = "There is no research with that id among yours." if err.status == 404 else err.message
    return _page(request, "error.html", user, status=err.status, title=title, message=message)


def _fragment_error(err: PageError) -> Response:
    return HTMLResponse(f'<p class="error">{html.escape(err.message)}</p>', status_code=err.status)


def _to_signin(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/signin?next={quote(target, safe='')}", status_code=303)


def _local(target: str) -> str:
    """Only a path of this site: never another origin (`//host`, `https://...`, `/\\host`)."""
    return target if target.startswith("/") and not target.startswith(("//", "/\\")) else "/"


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > FORM_LIMIT:
        return {}
    return {
        k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), max_num_fields=10).items()
    }
