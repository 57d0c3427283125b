"""Following and steering one research (`/research/{id}`): its plan, progress and waiting
panels while it runs, its report, sources and downloads once it ends; and the page's forms that
work without JavaScript (start, answer, review, cancel, follow up).

Server-rendered HTML (Jinja2, autoescaped) with small JavaScript modules from /static for what
is live: the event log, the waiting panels, the citation popovers. The page reads research through
the same service as the JSON API (`starter.web.services.research`, with `deps.owned_research`), as the
person who asked for the page, so a page can never show what the API would refuse that person:
the owner check and the 404 for someone else's research are one function for both.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from starter.exports import FORMATS, clean
from starter.web.deps import ApiError, Backend, Research, owned_research
from starter.web.guard.fair import renders_of
from starter.web.identity import auth
from starter.web.models import ResearchCreate, ResearchView
from starter.web.pages import request_form
from starter.web.pages.forms import act, read_form
from starter.web.pages.frame import (
    PageError,
    backend,
    error_page,
    fragment_error,
    page,
    read,
    to_signin,
)
from starter.web.pages.standing import research_context
from starter.web.presentation import review_texts
from starter.web.presentation.render import render_markdown, render_report
from starter.web.presentation.templating import templates
from starter.web.services import conversation
from starter.web.services import research as service
from starter.web.services import revisions as revising
from workflows.events import EventKind
from workflows.kit import citations
from workflows.models import QUERY_MAX_CHARS, ResearchResult, StepStatus

router = APIRouter(include_in_schema=False)

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
# --- pages ------------------------------------------------------------------------------------------


@router.get("/research/{research_id}", response_class=HTMLResponse)
async def research(
    request: Request, research_id: str, ask: str = "", version: str = ""
) -> Response:
    if (user := auth.user_from_request(request)) is None:
        return to_signin(request)
    try:
        view = await _view(request, user, research_id, revising.version_asked(version))
    except PageError as err:
        return error_page(request, user, err.status, err.message)
    found = view.live or view.result
    steps = found.plan.steps if found is not None and found.plan else []
    live = view.live
    waits = live.pending_review.value if live is not None and live.pending_review else None
    context: dict[str, Any] = {
        "id": research_id,
        "question": view.heading,
        "asked": view.question if view.title else None,  # renamed: the question it answers
        "stage": view.stage_shown,
        "busy": view.busy,
        "events": view.events,
        "follow_up_of": found.follow_up_of if found is not None else None,
        "steps": [step.model_dump(mode="json") for step in steps],
        "step_words": STEP_WORDS,
        "revision_words": review_texts.PANEL_WORDS,
        "step_done": DONE,
        "planned": len(steps),
        "done": sum(1 for step in steps if step.status in DONE),
        "skipped": sum(1 for step in steps if step.status == StepStatus.SKIPPED.value),
        "event_kinds": [k.value for k in EventKind],
        "running": view.running,
        "pending_question": live.pending_question if live is not None else None,
        "pending_review": waits,
        "draft": await renders_of(request).run(user, _draft_html, live.draft_report_markdown)
        if live is not None and waits == "report"
        else None,
        "critique": live.critique if live is not None and waits == "report" else None,
    }
    if live is not None and waits:
        context.update(review_texts.review_context(live))
    if view.result is not None:
        shown, rendered = await renders_of(request).run(
            user, _rendered, research_id, view.result, backend(request), view
        )
        context.update(rendered)
        context.update(await research_context(backend(request), user, shown))
        context["ask"] = ask.strip()[:QUERY_MAX_CHARS]  # a suggested follow-up, to edit and ask
    turns = await conversation.thread(
        research_id, view, user, backend(request), lambda rid: _maybe_view(request, user, rid)
    )
    context["conversation"] = turns
    if context["follow_up_of"]:
        before = [t for t in turns if t.id == context["follow_up_of"]]
        context["earlier"] = before[0].question if before else None
    return page(request, "research.html", user, failure=view.failure, **context)


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
        return fragment_error(PageError(409, "the research has not finished yet"))
    user = auth.user_from_request(request) or ""
    shown, rendered = await renders_of(request).run(
        user, _rendered, research_id, view.result, backend(request), view
    )
    # what the page shows on a reload: the previous run of a standing research, and Research
    # again on a schedule; the report's forms (revise a section) post with the page's token
    around = await research_context(backend(request), user, shown)
    return templates.TemplateResponse(
        request, "report_area.html", {**rendered, **around, "csrf": auth.csrf_token(request)}
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
    user = auth.user_from_request(request) or ""
    return HTMLResponse(await renders_of(request).run(user, _draft_html, draft))


async def _fragment_source(request: Request, research_id: str) -> ResearchView | Response:
    """The research as the API shows it, or the answer a fragment gives instead (an error as a
    paragraph: the page puts it where the fragment would go)."""
    if (user := auth.user_from_request(request)) is None:
        return fragment_error(PageError(401, "sign in again to read this"))
    try:
        return await _view(request, user, research_id)
    except PageError as err:
        return fragment_error(err)


# --- helpers ---------------------------------------------------------------------------------------


async def _view(
    request: Request, user: str, research_id: str, version: int | None = None
) -> ResearchView:
    """The research USER may see (404 for another user's, as the API), running or finished (at
    VERSION of its report: None the latest)."""
    app = backend(request)
    if version is not None:
        return await read(_owned_version(research_id, user, app, version))
    return await read(_owned_view(research_id, user, app))


async def _owned_view(research_id: str, user: str, app: Backend) -> ResearchView:
    return await service.view(await owned_research(research_id, user, app), app, patient=True)


async def _owned_version(research_id: str, user: str, app: Backend, version: int) -> ResearchView:
    """An earlier version of a finished research's report (`?version=N`)."""
    research = await owned_research(research_id, user, app)
    return await service.view(research, app, patient=True, version=version)


def _rendered(
    research_id: str, result: ResearchResult, app: Backend, view: ResearchView | None = None
) -> tuple[ResearchResult, dict[str, Any]]:
    """RESULT as the page shows it and its report's context: a page's heavy part, rendered in a
    thread in the user's turn (starter/web/guard/fair.py). VIEW: which version of the report it is."""
    shown = result  # as the client hands it: cleaned, local sources by name
    context = _report_context(research_id, shown)
    if view is not None:  # its sections, each with its Revise this section form
        context.update(revising.report_sections(research_id, shown, view.version, view.versions))
    return shown, context


def _draft_html(draft: str | None) -> str:
    """The report a person is asked to approve, rendered (in a thread, in the user's turn)."""
    return render_markdown(clean(draft or ""))


def _report_context(research_id: str, result: ResearchResult) -> dict[str, Any]:
    return {
        "id": research_id,
        "report": render_report(result),
        "outcome": result.outcome.value,
        "notes": unsaid_notes(result),
        "suggestions": suggested_questions(result),
        "revised": review_texts.revised_notice(result.reviews, result.report_markdown),
        "downloads": [(f.name, f.label) for f in FORMATS.values()],
    }


#: Headings that say where a report is, not what it is about: never a suggested next question.
_NOT_A_TOPIC = re.compile(
    r"^(summary|sources|references|notes?|conclusions?|introduction|overview|what changed\b"
    r"|answer\b|not found\b|open (questions|issues)\b|limitations?\b|caveats?\b)",
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
        topic = _MORE_ABOUT.sub("", topic.rstrip("?.:"))  # a follow-up's own heading: said once
        if topic and not _NOT_A_TOPIC.match(topic) and len(asked) < most:
            question = (
                f"Tell me more: {topic[0].upper()}{topic[1:]}?"  # a question stays a question
                if _ASKS.match(topic)
                else f"Tell me more about {topic[0].lower() + topic[1:] if topic[1:2].islower() else topic}"
            )
            if question not in asked:
                asked.append(question)
    return asked


#: "Tell me more about tell me more about ...": a heading that already says it.
_MORE_ABOUT = re.compile(r"^(?:(?:tell me more(?: about)?|more on)[:\s]+)+", re.I)
#: A heading that is a question ("Why is Venus hotter than Mercury"): "Tell me more: ...?".
_ASKS = re.compile(
    r"(?:(?:what|how|why|when|where|which|who)\s+(?:\w+\s+)?"
    r"(?:is|are|was|were|does|do|did|can|could|should|would|will|has|have)"
    r"|(?:is|are|was|were|does|do|did|can|should))\s",
    re.I,
)


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


# --- the page's forms without JavaScript ----------------------------------------------------------

DECISIONS = ("approve", "revise", "cancel")


@router.post("/research")
async def start(request: Request) -> Response:
    form = await read_form(request)
    body = ResearchCreate(question=form.get("question"), **request_form.values(form))
    return await act(request, form, None, lambda user, app: service.start(body, user, app))


@router.post("/research/{research_id}/answer")
async def answer(request: Request, research_id: str) -> Response:
    return await _steer(
        request, research_id, lambda r, app, form: service.answer(r, app, form.get("answer", ""))
    )


@router.post("/research/{research_id}/review")
async def review(request: Request, research_id: str) -> Response:
    return await _steer(
        request, research_id, lambda r, app, form: service.review(r, app, _review(form))
    )


@router.post("/research/{research_id}/cancel")
async def cancel(request: Request, research_id: str) -> Response:
    return await _steer(request, research_id, lambda r, app, _form: service.cancel(r, app))


async def _steer(
    request: Request,
    research_id: str,
    send: Callable[[Research, Backend, dict[str, str]], Awaitable[Any]],
) -> Response:
    """A form's word to the user's own research (another's is unknown, as the API says): SEND
    it with the form, then the research's page."""
    form = await read_form(request)

    async def work(user: str, app: Backend) -> str:
        await send(await owned_research(research_id, user, app), app, form)
        return research_id

    return await act(request, form, research_id, work)


def _review(form: dict[str, str]) -> dict[str, Any]:
    """The review a form sends, as the API's `Review` body has it."""
    decision = form.get("decision", "")
    if decision not in DECISIONS:
        raise ApiError(422, f"invalid decision {decision!r}: use approve, revise or cancel")
    payload: dict[str, Any] = {"decision": decision, "feedback": form.get("feedback", "")}
    if form.get("round"):  # the report review round the page showed: a later one refuses it
        if not form["round"].isdigit():
            raise ApiError(422, f"invalid round {form['round']!r}: a whole number")
        payload["round"] = int(form["round"])
    return payload


@router.post("/research/{research_id}/follow-up")
async def follow_up(request: Request, research_id: str) -> Response:
    form = await read_form(request)
    body = ResearchCreate.model_validate(
        {"question": form.get("question"), "follow_up_of": research_id}
    )
    return await act(request, form, research_id, lambda user, app: service.start(body, user, app))
