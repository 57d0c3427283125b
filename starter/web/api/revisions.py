"""`POST /api/research/{id}/sections/{n}/revise`: one section of a finished report rewritten with
the person's feedback (`{"feedback": "..."}`), its claims checked again; 200 with the new version
(`version`, `section`, `heading`, `section_markdown`, `verification`, `report_markdown`).

Refusals as everywhere: another user's research or an unknown id 404; a research still running,
a section that does not exist or empty feedback 422; a revision of the same research already
under way 409; the report changed meanwhile 409. `GET /api/research/{id}?version=N` reads an
earlier version (starter/web/api/research.py).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict

from starter.web.deps import App, Owned
from starter.web.services import revisions as revising
from workflows.revising_messages import RevisionOutcome

router = APIRouter(tags=["research"])


class SectionRevise(BaseModel):
    model_config = ConfigDict(extra="forbid")
    feedback: str


@router.post("/research/{id}/sections/{n}/revise", response_model=RevisionOutcome)
async def revise(
    body: SectionRevise, n: Annotated[int, Path()], research: Owned, app: App
) -> RevisionOutcome:
    return await revising.revise_section(research, app, n, body.feedback)
