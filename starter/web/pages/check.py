"""The Check citations page (`/check`, issue 48): paste a text whose sentences cite `[n]`, choose
its sources (the sources of a research in the library, numbered as its report numbers them; your
documents; URLs), and read each cited sentence's verdict with the evidence it rests on, in place.

A plain form post answered with the page itself (no JavaScript needed): the check is the API's
(`POST /api/check`), run as the same bounded work (starter/web/services/checks.py: slots, a child process,
a deadline, killed when the browser leaves). With no source chosen, the text's own Sources list
is read, local names included (`mercury.md`, an upload's file name: the names this product gives
local sources, found again in the corpus and the user's own documents, never any other path).
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from temporalio.exceptions import ApplicationError

from starter.client import citations_check as checking
from starter.client.research_client import stored_owner
from starter.web.deps import RESEARCH_ID, ApiError, Backend
from starter.web.identity import auth
from starter.web.pages.forms import cross_site
from starter.web.pages.frame import PageError, backend, listed, page, read, to_signin
from starter.web.services import documents
from starter.web.services import research as service
from starter.web.services.checks import run_check
from storage import store
from storage.public_names import PublicNames

router = APIRouter(include_in_schema=False)
#: Research of the library offered as sources.
OFFERED = 30
#: A line of the URLs box: `1 https://...`, `[1] https://...`, `1=https://...` or `1. https://...`.
_URL_LINE = re.compile(r"^\s*\[?(\d{1,6})\]?\s*[.=:)]?\s*(\S+)\s*$")
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
    except checking.CheckRefused as err:
        return await _page(request, user, fields, error=str(err), status=422)
    except ApiError as err:
        return await _page(request, user, fields, error=err.message, status=err.status)
    return await _page(request, user, fields, result=_shown(result, app.cfg.engine_name))


async def _request(
    fields: dict[str, str], user: str, app: Backend
) -> tuple[checking.CheckRequest, list[checking.GivenSource]]:
    """The API's request from the form, and the sources chosen by name (library, documents)."""
    text = fields.get("text", "").replace("\r\n", "\n")  # as browsers send a textarea
    if not text.strip():
        raise checking.CheckRefused("paste a text whose sentences cite their sources as [1], [2]")
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
            number = _number(value, f"the number for {key.removeprefix('document-')}")
            named[number] = checking.GivenSource(number, key.removeprefix("document-"))
            urls.pop(number, None)
    for line in fields.get("urls", "").splitlines():  # \r\n or \n
        if not line.strip():
            continue
        found = _URL_LINE.match(line)
        if not found or not checking.is_web(found.group(2)):
            raise checking.CheckRefused(
                f"{line.strip()[:100]!r} is not a number and an http(s) URL "
                "(e.g. 1 https://example.org/page)"
            )
        number = _number(found.group(1), "a source's number")
        urls[number] = {"id": number, "url": found.group(2)}
        named.pop(number, None)
    try:
        body = checking.CheckRequest(markdown=text, sources=list(urls.values()) or None)
    except ValidationError as err:
        first = err.errors()[0]
        raise checking.CheckRefused(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    return body, list(named.values())


def _number(value: str, what: str) -> int:
    value = value.strip()
    if not value.isdigit() or not 1 <= int(value) <= 999_999:
        raise checking.CheckRefused(f"{what} must be a whole number from 1, as the text cites it")
    return int(value)


async def _library_sources(research_id: str, user: str, app: Backend) -> list[checking.GivenSource]:
    """The sources of USER's stored research, numbered as its report numbers them; its local
    ones by the names the product gives them."""
    if not RESEARCH_ID.fullmatch(research_id):
        raise ApiError(404, f"no research {research_id[:100]} in your library")
    try:
        stored = await app.library(lambda url: store.load_research(url, research_id))
    except ApplicationError as err:
        raise ApiError(503, f"the library could not be read: {err.message}") from None
    if stored is None or stored_owner(stored, app.cfg) != user:
        raise ApiError(404, f"no research {research_id[:100]} in your library")
    names = PublicNames.of(app.cfg)
    return [checking.GivenSource(s.id, names.name(s.url), s.title) for s in stored.result.sources]


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
