"""The JSON API under /api: one router per resource (research, its events, the library, health, standing research, documents, checking a text's citations).

Errors are `{"error": "one line"}` (the handlers are in starter/web/app.py): 401 no or a wrong
token, 403 a cross-site write, 404 unknown or someone else's, 409 nothing of that kind pending,
422 invalid input, 503 Temporal or a worker not answering.
"""

from fastapi import APIRouter

from starter.web.api import check, documents, health, library, research, revisions, standing
from starter.web.services import events

router = APIRouter()
router.include_router(research.router)
router.include_router(revisions.router)
router.include_router(events.router)
router.include_router(library.router)
router.include_router(health.router)
router.include_router(standing.router)
router.include_router(documents.router)
router.include_router(check.router)
