"""The Check citations page (`/check`): paste a text whose sentences cite `[n]`, choose
its sources (the sources of a research in the library, numbered as its report numbers them; your
documents; URLs), and read each cited sentence's verdict with the evidence it rests on, in place.

A plain form post answered with the page itself (no JavaScript needed): the check is the API's
(`POST /api/check`), run as the same bounded work (starter/web/services/checks.py: slots, a child process,
a deadline, killed when the browser leaves). With no source chosen, the text's own Sources list
is read, local names included (`mercury.md`, an upload's file name: the names this product gives
local sources, found again in the corpus and the user's own documents, never any other path).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError

from starter.client import citations_check as checking
from starter.client import library
from starter.client.errors import ClientError, Kind
from starter.web.deps import RESEARCH_ID, ApiError, Backend
from starter.web.identity import auth
from starter.web.pages.forms import cross_site
from starter.web.pages.frame import PageError, backend, listed, page, read, to_signin
from starter.web.services import documents
from starter.web.services import research as service
from starter.web.services.checks import run_check

router = APIRouter(include_in_schema=False)
#: Research of the library offered as sources.
OFFERED = 30
#: The verdicts as the page says them.
SAID = {
    "supported": "Supported",
    "partial": "Partly supported",
    "unsupported": "Unsupported",
    "unverified": "Not verified",
}


@router.get("/check", response_class=HTMLResponse)
async def check_page(request: Request) -> Response:
    if (user := auth.user_from_request(request)) is None:
        return to_signin(request)
    return await _page(request, user, {})


@router.post("/check", response_class=HTMLResponse)
async def check_posted(request: Request) -> Response:
    if (user := auth.user_from_request(request)) is None:
        return to_signin(request, "/check")
    form = await request.form(
        max_files=0, max_fields=200, max_part_size=checking.MARKDOWN_MAX_CHARS * 4
    )
    fields = {k: str(v) for k, v in form.items()}
    refused = cross_site(request, fields)
    if refused:
        return await _page(request, user, fields, error=refused, status=403)
    app = backend(request)
    try:
        body, named = await _request(fields, user, app)
        result = await run_check(request, body, user, app.cfg, named)
    except ClientError as err:
        failure = ApiError.of(err)
        return await _page(request, user, fields, error=failure.message, status=failure.status)
    except ApiError as err:
        return await _page(request, user, fields, error=err.message, status=err.status)
    return await _page(request, user, fields, result=_shown(result, app.cfg.llm.engine))


async def _request(
    fields: dict[str, str], user: str, app: Backend
) -> tuple[checking.CheckRequest, list[checking.GivenSource]]:
    """The API's request from the form, and the sources chosen by name (library, documents)."""
    text = fields.get("text", "").replace("\r\n", "\n")  # as browsers send a textarea
    if not text.strip():
        raise checking.refused("paste a text whose sentences cite their sources as [1], [2]")
    named: dict[int, checking.GivenSource] = {}
    urls: dict[int, dict[str, Any]] = {}
    if chosen := fields.get("research", "").strip():
        for source in await _library_sources(chosen, user, app):
            if checking.is_web(source.where):
                urls[source.id] = {"id": source.id, "url": source.where, "title": source.title}
            else:
                named[source.id] = source
    for key, value in fields.items():
        if key.startswith("document-") and value.strip():
            number = checking.source_number(
                value, f"the number for {key.removeprefix('document-')}"
            )
            named[number] = checking.GivenSource(number, key.removeprefix("document-"))
            urls.pop(number, None)
    for number, url in checking.given_urls(fields.get("urls", "")).items():
        urls[number] = {"id": number, "url": url}
        named.pop(number, None)
    try:
        given = [checking.SourceGiven.model_validate(url) for url in urls.values()]
        body = checking.CheckRequest(markdown=text, sources=given or None)
    except ValidationError as err:
        first = err.errors()[0]
        raise checking.refused(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    return body, list(named.values())


async def _library_sources(research_id: str, user: str, app: Backend) -> list[checking.GivenSource]:
    """The sources of USER's stored research, numbered as its report numbers them; its local
    ones by the names the product gives them."""
    missing = ApiError(404, f"no research {research_id[:100]} in your library")
    if not RESEARCH_ID.fullmatch(research_id):
        raise missing
    try:
        stored = await library.stored_research(app.session, research_id, owner=user)
    except ClientError as err:
        if err.kind is Kind.NOT_FOUND:
            raise missing from None
        raise ApiError(503, f"the library could not be read: {err}") from None
    # as the client hands them: local sources by the names the product gives them
    return [checking.GivenSource(s.id, s.url, s.title) for s in stored.result.sources]


def _shown(result: dict[str, Any], engine: str) -> dict[str, Any]:
    """The check's object as the page shows it: each verdict in words, the totals in a line."""
    sentences = [{**s, "said": SAID.get(s["verdict"], s["verdict"])} for s in result["sentences"]]
    total = len(sentences)
    counts = ", ".join(
        f"{result[key]} {SAID[key].lower()}"
        for key in ("supported", "partial", "unsupported", "unverified")
        if result[key] or key in ("supported", "unsupported")
    )
    who = checking.checked_by_line(result, engine == "openai")
    noun = "sentence" if total == 1 else "sentences"
    return {
        **result,
        "sentences": sentences,
        "summary": f"{total} cited {noun}: {counts}; {who}.",
    }


async def _page(
    request: Request,
    user: str,
    fields: dict[str, str],
    *,
    result: dict[str, Any] | None = None,
    error: str | None = None,
    status: int = 200,
) -> Response:
    app = backend(request)
    offered, problem = [], None
    try:
        found = await read(service.search_library(user, app, "", OFFERED))
        offered = [listed(item.model_dump()) for item in found]
    except PageError as err:
        problem = f"The library could not be listed: {err.message}"
    try:
        mine = await documents.listed(app.cfg, user)
    except OSError:
        mine = []
    return page(
        request,
        "check.html",
        user,
        status=status,
        here="check",
        fields=fields,
        offered=offered,
        library_error=problem,
        documents=[d.model_dump() for d in mine],
        result=result,
        error=error,
        max_chars=checking.MARKDOWN_MAX_CHARS,
    )
