"""The MCP server's `revise_section` tool: one section of a finished report rewritten
with feedback, its claims checked again, the rest of the report as it was; the same call as
`revise ID --section N` and `POST /api/research/{id}/sections/{n}/revise`, owned by
RESEARCH_USER like every research over MCP."""

from __future__ import annotations

from typing import Any

from starter.client import revisions
from starter.client.session import Session


def add_revision_tool(server: Any, session: Session, one_line_errors: Any) -> None:
    @server.tool()
    async def revise_section(id: str, section: int, feedback: str) -> dict[str, Any]:  # noqa: A002 - the tool's argument
        """Rewrite one section of a finished research's report with FEEDBACK (sections are
        numbered from 1 in the order of the report's `## ` headings; the Summary counts, the
        Sources list does not). Only that section changes; its claims are checked again. Returns
        the new version's number, the revised section and the whole report; get_report(id) gives
        the latest version from then on."""
        async with one_line_errors():
            outcome = await revisions.revise(session, id, section, feedback)
            return outcome.model_dump(mode="json")
