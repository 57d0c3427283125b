"""The MCP server's tool that changes the library (issue 31): `rename_research`, as `library
rename` and `PATCH /api/library/{id}`, for RESEARCH_USER's stored research."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from starter.client import library
from starter.client.requests import research_id
from starter.client.session import Session
from starter.client.temporal import shown


def add_library_tools(server: Any, session: Session, one_line_errors: Any) -> None:
    @server.tool()
    async def rename_research(id: str, title: str) -> dict[str, Any]:  # noqa: A002
        """Give a stored research a title of your own (1 to 200 characters): search_library
        finds it by it and its report is titled with it. Returns its library entry."""
        async with one_line_errors():
            wanted = research_id(id)
            entry = await library.rename(session.cfg.research_db_url, session.user, wanted, title)
            if entry is None:  # another user's research is unknown here, as everywhere
                raise ToolError(f"no stored research with id {shown(wanted)}")
            return entry.model_dump(mode="json")
