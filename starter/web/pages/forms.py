"""The pages' forms without JavaScript (issue 31, item 4): start a research, answer its question,
review its plan or report, cancel it, follow it up; rename or delete a research in the library.
Each is a plain HTML form post that does what the page's script does through the JSON API (the
same `service` calls, the same owner check and one-line refusals) and then sends the browser to
the research's page, or back to the library (303). With JavaScript the pages never post here
(but the library's Delete): their scripts call the API and update in place.

A form carries the page's CSRF token in a hidden `csrf` field, and a post another site's page
sends (Sec-Fetch-Site or Origin says so) is refused.
"""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from starter.client import research_client
from starter.client.requests import RequestError
from starter.web import auth, service
from starter.web.deps import ApiError, Backend, owned_research
from starter.web.models import ResearchCreate

router = APIRouter(include_in_schema=False)
#: A form is a question, an answer or feedback: 5,000 characters each at most, and a few fields.
FORM_LIMIT = 64 * 1024
DECISIONS = ("approve", "revise", "cancel")


@router.post("/research")
async def start(request: Request) -> Response:
    form = await _form(request)
    body = {
        "question": form.get("question"),
        "depth": form.get("depth") or None,
        "review_plan": "review_plan" in form,
        "review_report": form.get("review_report") or None,
        "mode": form.get("mode") or None,
        "language": form.get("language") or None,
        "sources": form.get("sources") or None,
    }
    return await _do(
        request,
        form,
        None,
        lambda user, app: service.start(
            ResearchCreate(**{k: v for k, v in body.items() if v is not None}), user, app
        ),
    )


@router.post("/research/{research_id}/answer")
async def answer(request: Request, research_id: str) -> Response:
    form = await _form(request)

    async def send(user: str, app: Backend) -> str:
        research = await owned_research(research_id, user, app)
        handle = service.running(research, "answer")
        text = form.get("answer", "").strip()
        await service.steer(research, app, "answer", research_client.answer(handle, text))
        return research_id

    return await _do(request, form, research_id, send)


@router.post("/research/{research_id}/review")
async def review(request: Request, research_id: str) -> Response:
    form = await _form(request)

    async def send(user: str, app: Backend) -> str:
        decision = form.get("decision", "")
        if decision not in DECISIONS:
            raise ApiError(422, f"invalid decision {decision!r}: use approve, revise or cancel")
        research = await owned_research(research_id, user, app)
        handle = service.running(research, "review")
        payload: dict[str, Any] = {"decision": decision, "feedback": form.get("feedback", "")}
        if form.get("round"):  # the report review round the page showed: a later one refuses it
            if not form["round"].isdigit():
                raise ApiError(422, f"invalid round {form['round']!r}: a whole number")
            payload["round"] = int(form["round"])
        await service.steer(research, app, "review", research_client.review(handle, payload))
        return research_id

    return await _do(request, form, research_id, send)


@router.post("/research/{research_id}/cancel")
async def cancel(request: Request, research_id: str) -> Response:
    form = await _form(request)

    async def send(user: str, app: Backend) -> str:
        await service.cancel(await owned_research(research_id, user, app), app)
        return research_id

    return await _do(request, form, research_id, send)


@router.post("/research/{research_id}/follow-up")
async def follow_up(request: Request, research_id: str) -> Response:
    form = await _form(request)
    body = ResearchCreate(question=form.get("question"), follow_up_of=research_id)
    return await _do(request, form, research_id, lambda user, app: service.start(body, user, app))


@router.post("/library/{research_id}/rename")
async def rename_in_library(request: Request, research_id: str) -> Response:
    form = await _form(request)

    async def rename(user: str, app: Backend) -> str:
        await service.rename_stored(user, app, research_id, form.get("title", ""))
        q = form.get("q", "").strip()
        return f"/library?q={quote(q)}&renamed=1" if q else "/library?renamed=1"

    return await _do(request, form, None, rename)


@router.post("/library/{research_id}/delete")
async def delete_from_library(request: Request, research_id: str) -> Response:
    form = await _form(request)

    async def remove(user: str, app: Backend) -> str:
        await service.delete_stored(user, app, research_id)
        q = form.get("q", "").strip()
        return f"/library?q={quote(q)}&deleted=1" if q else "/library?deleted=1"

    return await _do(request, form, None, remove)


async def _do(request: Request, form: dict[str, str], back: str | None, work: Any) -> Response:
    """WORK(user, app) for the signed-in user, then the research's page (or the path WORK
    answers); or an error page."""
    from starter.web import pages  # the pages' helpers; they import this module's router

    user = auth.user_from_request(request)
    here = f"/research/{quote(back, safe='')}" if back else "/"
    if user is None:
        return RedirectResponse(f"/signin?next={quote(here, safe='')}", status_code=303)
    refused = _cross_site(request, form)
    if refused:
        return _error(request, user, 403, refused, here)
    try:
        research_id = await work(user, pages._backend(request))
    except ApiError as err:
        return _error(request, user, err.status, err.message, here)
    except RequestError as err:
        return _error(request, user, 422, str(err), here)
    # WORK's answer: a research id (its page), or a path of this site
    target = (
        research_id if research_id.startswith("/") else f"/research/{quote(research_id, safe='')}"
    )
    return RedirectResponse(target, status_code=303)


def _cross_site(request: Request, form: dict[str, str]) -> str | None:
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return "Refused: the form did not come from this site's page."
    if not hmac.compare_digest(form.get("csrf", "").encode(), auth.csrf_token(request).encode()):
        return "Refused: the form is out of date or did not come from this site's page. Reload the page and try again."
    return None


def _error(request: Request, user: str, status: int, message: str, back: str) -> Response:
    from starter.web import pages

    title = {404: "No such research", 503: "The research service is unavailable"}.get(
        status, "That did not work"
    )
    return pages._page(
        request, "error.html", user, status=status, title=title, message=message, back=back
    )


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > FORM_LIMIT:
        return {}
    fields = parse_qs(body.decode("utf-8", "replace"), max_num_fields=20, keep_blank_values=True)
    return {k: v[0] for k, v in fields.items()}
