"""`POST /api/check`: a text's citations checked against its sources, as `check` does on the
command line (starter/client/citations_check.py), for a signed-in user.

Nothing of the server is read: sources are http(s) URLs, fetched by the crawler under the app's
settings (its network guard refuses private and loopback addresses unless CRAWL_ALLOW_PRIVATE),
or texts given in the body. The body may be larger than other API bodies (2 MB,
starter/web/guard/shield.py); the text and each source are bounded by the request model. The check runs
as bounded work (slots per user and in all, a child process, a deadline, cancelled when the client
leaves): starter/web/services/checks.py.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from starter.client.citations_check import CheckRequest
from starter.web.deps import App, User
from starter.web.services.checks import run_check

router = APIRouter(tags=["check"])


@router.post("/check")
async def check_citations(
    body: CheckRequest, user: User, app: App, request: Request
) -> dict[str, Any]:
    """200 `{"sentences": [{text, source_ids, verdict, reason, evidence, checked_by}], supported,
    partial, unsupported, unverified, checked_by, calibration, sources}`; 422 in one line for a
    text with no cited sentence, more than MAX_SENTENCES, more than MAX_PAIRS sentences × sources,
    no sources, a source that is a path or a `file:` URL; 429 when the user already has
    WEB_CHECKS_PER_USER checks running, 503 when the server has WEB_CHECKS (both with
    Retry-After)."""
    result: dict[str, Any] = await run_check(request, body, user, app.cfg)
    return result
