"""The pages a person uses: ask (`/`), follow and steer one research (`/research/{id}`) and the
library (`/library`); signing in (`/signin`) is signin_pages.py.

Server-rendered HTML (Jinja2, autoescaped) with small JavaScript modules from /static for what
is live: the event log, the waiting panels, the citation popovers. The pages read research through
the same service as the JSON API (`starter.web.service`, with `deps.owned_research`), as the
person who asked for the page, so a page can never show what the API would refuse that person:
the owner check and the 404 for someone else's research are one function for both.
"""

from __future__ import annotations

import html
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from temporalio.client import WorkflowQueryFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from starter.client.errors import ClientError
from starter.client.requests import RequestError
from starter.client.temporal import one_line
from starter.exports import FORMATS, clean
from starter.exports.public import public_for
from starter.web import auth, conversation, documents, review_texts, service
from starter.web.deps import ApiError, Backend, owned_research
from starter.web.models import ResearchView
from starter.web.render import render_markdown, render_report
from starter.web.standing_pages import research_context
from starter.web.templating import templates
from workflows.checks import citations
from workflows.events import EventKind
from workflows.models import (
    QUERY_MAX_CHARS,
    QUERY_MIN_CHARS,
    Depth,
    ResearchResult,
    StepStatus,
)

router = APIRouter(include_in_schema=False)
T = TypeVar("T")

#: The one source of the words a step's status is shown with: the page renders them, and hands
#: them (and which statuses count as done) to static/plan.js in the plan list's data attributes.
STEP_WORDS = {
    StepStatus.PENDING.value: "to do",
    StepStatus.IN_PROGRESS.value: "in progress",
    StepStatus.COMPLETED.value: "done",
    StepStatus.SKIPPED.value: "skipped",
}
#: A skipped step (the research was cancelled, a budget ran out) is not done: the bar says so.
DONE = (StepStatus.COMPLETED.value,)
RECENT = 10
#: The report languages the home form offers (the API takes any ISO 639 code).
LANGUAGES = [
    ("auto", "the question's language"),
    ("en", "English"),
    ("de", "German"),
    ("fr", "French"),
    ("es", "Spanish"),
    ("it", "Italian"),
    ("pt", "Portuguese"),
    ("nl", "Dutch"),
    ("pl", "Polish"),
    ("ja", "Japanese"),
    ("zh", "Chinese"),
    ("vi", "Vietnamese"),
]


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
        listed = await _read(service.list_research(user, _backend(request), None, RECENT))
        recent = [_listed(item.model_dump()) for item in listed]
    except PageError as err:
        problem = f"Your research could not be listed: {err.message}"
        if err.status == 503:  # Temporal is away: the library still knows what finished
            try:
                found = await _read(service.search_library(user, _backend(request), "", RECENT))
                recent = [_listed(item.model_dump()) for item in found]
                problem = (
                    f"Running research cannot be listed now ({err.message}); "
                    "your finished research from the library:"
                )
            except PageError:
                pass
    return _page(
        request,
        "index.html",
        user,
        here="home",
        recent=recent,
        recent_error=problem,
        **await documents.home(_backend(request).cfg, user),
        depths=[d.value for d in Depth],
        languages=LANGUAGES,
        min_chars=QUERY_MIN_CHARS,
        max_chars=QUERY_MAX_CHARS,
    )


@router.get("/research/{research_id}", response_class=HTMLResponse)
async def research(request: Request, research_id: str, ask: str = "") -> Response:
    if (user := auth.user_from_request(request)) is None:
        return _to_signin(request)
    try:
        view = await _view(request, user, research_id)
    except PageError as err:
        return _error(request, user, err)
    found = view.live or view.result
    steps = found.plan.steps if found is not None and found.plan else []
    live = view.live
    waits = live.pending_review.value if live is not None and live.pending_review else None
    context: dict[str, Any] = {
        "id": research_id,
        "question": view.heading,
        "asked": view.question if view.title else None,  # renamed: the question it answers
        "stage": view.result.outcome.value
        if view.result
        else view.live.stage.value
        if view.live
        else "",
        "follow_up_of": found.follow_up_of if found is not None else None,
        "steps": [step.model_dump(mode="json") for step in steps],
        "step_words": STEP_WORDS,
        "step_done": DONE,
        "planned": len(steps),
        "done": sum(1 for step in steps if step.status in DONE),
        "skipped": sum(1 for step in steps if step.status == StepStatus.SKIPPED.value),
        "event_kinds": [k.value for k in EventKind],
        "running": live is not None,
        "pending_question": live.pending_question if live is not None else None,
        "pending_review": waits,
        "draft": render_markdown(clean(live.draft_report_markdown or ""))
        if live is not None and waits == "report"
        else None,
        "critique": live.critique if live is not None and waits == "report" else None,
    }
    if live is not None and waits == "report":
        rounds, most = live.review_rounds, live.review_rounds_max
        context["review_round"] = rounds
        context["round_text"] = review_texts.round_text(rounds, most)
        context["revise_help"] = review_texts.revise_help(rounds, most)
    if view.result is not None:
        shown = _public(view.result, _backend(request))
        context.update(_report_context(research_id, shown))
        context.update(await research_context(_backend(request), user, shown))
        context["ask"] = ask.strip()[:QUERY_MAX_CHARS]  # a suggested follow-up, to edit and ask
    turns = await conversation.thread(
        research_id, view, user, _backend(request), lambda rid: _maybe_view(request, user, rid)
    )
    context["conversation"] = turns
    if context["follow_up_of"]:
        before = [t for t in turns if t.id == context["follow_up_of"]]
        context["earlier"] = before[0].question if before else None
    return _page(request, "research.html", user, failure=view.failure, **context)


@router.get("/research/{research_id}/report-fragment", response_class=HTMLResponse)
async def report_fragment(request: Request, research_id: str) -> Response:
    """The finished research's report, sources, verification, downloads and follow-up form, for
    the page to put in place when the research ends while it is open."""
    view = await _fragment_source(request, research_id)
    if isinstance(view, Response):
        return view
    if view.failure:
        return templates.TemplateResponse(request, "failure.html", {"failure": view.failure})
    if view.result is None:
        return _fragment_error(PageError(409, "the research has not finished yet"))
    return templates.TemplateResponse(
        request,
        "report.html",
        _report_context(research_id, _public(view.result, _backend(request))),
    )


@router.get("/research/{research_id}/draft-fragment", response_class=HTMLResponse)
async def draft_fragment(request: Request, research_id: str) -> Response:
    """The report a person is asked to approve, rendered and sanitised like the final one."""
    view = await _fragment_source(request, research_id)
    if isinstance(view, Response):
        return view
    draft = view.live.draft_report_markdown if view.live else None
    if not draft:
        return HTMLResponse("<p>The draft is not available from this research's status.</p>")
    return HTMLResponse(render_markdown(clean(draft)))


async def _fragment_source(request: Request, research_id: str) -> ResearchView | Response:
    """The research as the API shows it, or the answer a fragment gives instead (an error as a
    paragraph: the page puts it where the fragment would go)."""
    if (user := auth.user_from_request(request)) is None:
        return _fragment_error(PageError(401, "sign in again to read this"))
    try:
        return await _view(request, user, research_id)
    except PageError as err:
        return _fragment_error(err)


@router.get("/library", response_class=HTMLResponse)
async def library(request: Request, q: str = "", deleted: str = "", renamed: str = "") -> Response:
    if (user := auth.user_from_request(request)) is None:
        return _to_signin(request)
    q = q.strip()[:200]
    entries, problem = [], None
    try:
        found = await _read(service.search_library(user, _backend(request), q, 20))
        entries = [_listed(item.model_dump()) for item in found]
    except PageError as err:
        problem = f"The library could not be searched: {err.message}"
    return _page(
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


# --- helpers ---------------------------------------------------------------------------------------


def _backend(request: Request) -> Backend:
    return request.app.state.backend


async def _read(call: Awaitable[T]) -> T:
    """What the service answers; what the API would answer instead, as a `PageError`."""
    try:
        return await call
    except ApiError as err:
        raise PageError(err.status, err.message) from None
    except RequestError as err:
        raise PageError(422, str(err)) from None
    except ClientError as err:
        failure = ApiError.of(err)
        raise PageError(failure.status, failure.message) from None
    except (RPCError, TimeoutError, WorkflowQueryFailedError, ApplicationError) as err:
        message = getattr(err, "message", None) or str(err) or "Temporal did not answer"
        raise PageError(503, one_line(message)) from None


async def _view(request: Request, user: str, research_id: str) -> ResearchView:
    """The research USER may see (404 for another user's, as the API), running or finished."""
    app = _backend(request)
    return await _read(_owned_view(research_id, user, app))


async def _owned_view(research_id: str, user: str, app: Backend) -> ResearchView:
    return await service.view(await owned_research(research_id, user, app), app)


@dataclass(frozen=True)
class _Listed:
    id: str
    question: str
    #: What the lists call it: the title its owner gave it, else its question.
    title: str
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
    question = " ".join(str(item.get("question") or item.get("query") or "").split())
    return _Listed(
        id=str(item.get("id") or item.get("workflow_id") or ""),
        question=question,
        title=" ".join(str(item.get("title") or "").split()) or question,
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


def _public(result: ResearchResult, app: Backend) -> ResearchResult:
    """RESULT as a page shows it: cleaned of bidi and zero-width controls, corpus paths as names
    (starter/exports/public.py)."""
    return public_for(result, app.cfg)


def _report_context(research_id: str, result: ResearchResult) -> dict[str, Any]:
    return {
        "id": research_id,
        "report": render_report(result),
        "outcome": result.outcome.value,
        "notes": unsaid_notes(result),
        "suggestions": suggested_questions(result),
        "revised": review_texts.revised_notice(result.reviews),
        "downloads": [(f.name, f.label) for f in FORMATS.values()],
    }


#: Headings that say where a report is, not what it is about: never a suggested next question.
_NOT_A_TOPIC = re.compile(
    r"^(summary|sources|references|notes?|conclusions?|introduction|overview|what changed\b)",
    re.I,
)


def suggested_questions(result: ResearchResult, most: int = 3) -> list[str]:
    """Next questions a reader may ask: one per section the report has (its headings), as a
    follow-up would put it."""
    asked: list[str] = []
    for line in result.report_markdown.splitlines():
        heading = re.fullmatch(r"#{2,3}[ \t]+(.+?)[ \t#]*", line.strip())
        if heading is None:
            continue
        topic = " ".join(heading.group(1).replace("\\[", "[").replace("\\]", "]").split())
        topic = topic.rstrip("?.:")
        if topic and not _NOT_A_TOPIC.match(topic) and len(asked) < most:
            question = f"Tell me more about {topic[0].lower() + topic[1:] if topic[1:2].islower() else topic}"
            if question not in asked:
                asked.append(question)
    return asked


async def _maybe_view(request: Request, user: str, research_id: str) -> ResearchView | None:
    """The research USER may see, or None (another user's, unknown, or unreadable just now)."""
    try:
        return await _view(request, user, research_id)
    except PageError:
        return None


def unsaid_notes(result: ResearchResult) -> list[str]:
    """The result's notes the report does not already say: the page shows each one once."""
    said = " ".join(result.report_markdown.split())
    return [
        note
        for note in result.notes
        if " ".join(note.split()) not in said
        and " ".join(citations.escape(note).split()) not in said
    ]


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
