"""`POST /api/check`: a text's citations checked against its sources, as `check` does on the
command line (starter/client/citations_check.py), for a signed-in user.

Nothing of the server is read: sources are http(s) URLs, fetched by the crawler under the app's
settings (its network guard refuses private and loopback addresses unless CRAWL_ALLOW_PRIVATE),
or texts given in the body. The body may be larger than other API bodies (2 MB,
starter/web/shield.py); the text and each source are bounded by the request model.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter

from starter.client.citations_check import CheckRefused, CheckRequest, check_request
from starter.web.deps import ApiError, App, User

router = APIRouter(tags=["check"])


@router.post("/check")
async def check_citations(body: CheckRequest, user: User, app: App) -> dict[str, Any]:
    """200 `{"sentences": [{text, source_ids, verdict, reason, evidence, checked_by}], supported,
    partial, unsupported, unverified, checked_by, calibration, sources}`; 422 in one line for a
    text with no cited sentence, or more than MAX_SENTENCES, no sources, a source that is a path
    or a `file:` URL."""
    try:  # aligning claims is CPU work: in a thread with a loop of its own, not the app's loop
        return await asyncio.to_thread(asyncio.run, check_request(body, app.cfg))
    except CheckRefused as err:
        raise ApiError(422, str(err)) from None
