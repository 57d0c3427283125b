"""The research page's **Revise this section** form, without JavaScript as with it: a plain post
of the section's Feedback, which revises the section (starter/web/services/revisions.py, the call the API
makes) and then shows the research's page at the revised section. A refusal (someone else's
research, one still running, empty feedback) is the error page's one line, with a way back.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response

from starter.web.deps import ApiError, Backend, owned_research
from starter.web.pages.forms import act, read_form
from starter.web.services import revisions as revising

router = APIRouter(include_in_schema=False)


@router.post("/research/{research_id}/sections/{number}/revise")
async def revise(request: Request, research_id: str, number: str) -> Response:
    form = await read_form(request)

    async def work(user: str, app: Backend) -> str:
        if not number.isdigit():
            raise ApiError(422, f"invalid section {number[:40]!r}: a section's number, from 1")
        research = await owned_research(research_id, user, app)
        await revising.revise_section(research, app, int(number), form.get("feedback", ""))
        return f"/research/{quote(research_id, safe='')}#section-{int(number)}-revise"

    return await act(request, form, research_id, work)
