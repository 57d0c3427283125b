"""The MCP server's tools over what a person has: their research, running and stored, in one
list (`list_research`, the CLI's `list` and `GET /api/research` alike), the library's search
(`search_library`), a finished research's report (`get_report`, and the resource
`research://ID/report`), and renaming a stored one (`rename_research`, as `library rename` and
`PATCH /api/library/{id}`). All RESEARCH_USER's only, read through the client.
"""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any

from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError

from starter.client import library, mine, research_client
from starter.client.errors import ClientError, Kind
from starter.client.requests import research_id
from starter.client.session import Session
from starter.client.temporal import one_line, shown
from starter.client.terminal import clean
from starter.exports import FORMATS, export
from starter.exports.markup import to_markdown
from starter.mcp.shapes import report_shape
from workflows.models import ResearchResult

#: `get_report`'s formats: the text ones (a Word or PDF file is no tool result).
TEXT_FORMATS = tuple(name for name, f in FORMATS.items() if not f.binary)


def add_library_tools(server: Any, session: Session, one_line_errors: Any) -> None:
    _add_listing_tools(server, session, one_line_errors)
    _add_report_tools(server, session, one_line_errors)

    @server.tool()
    async def rename_research(id: str, title: str) -> dict[str, Any]:  # noqa: A002
        """Give a stored research a title of your own (1 to 200 characters): search_library
        finds it by it and its report is titled with it. Returns its library entry."""
        async with one_line_errors():
            wanted = research_id(id)
            entry = await library.rename(session, session.user, wanted, title)
            if entry is None:  # another user's research is unknown here, as everywhere
                raise ToolError(f"no stored research with id {shown(wanted)}")
            return entry.model_dump(mode="json")


def _add_listing_tools(server: Any, session: Session, one_line_errors: Any) -> None:
    @server.tool()
    async def list_research(limit: int = 20) -> list[dict[str, Any]]:
        """Your research, running and finished, newest started first: id, question, title,
        stage, status, started_at, closed_at (the same list as the web app's and the CLI's)."""
        async with one_line_errors():
            rows = await mine.my_research(session, limit=max(1, min(limit, 100)))
            return [row.model_dump(mode="json") for row in rows]

    @server.tool()
    async def search_library(text: str = "", limit: int = 10) -> list[dict[str, Any]]:
        """Finished research in the library that TEXT finds (all when empty) in its question,
        title, clarifications or report, newest first; each report is research://ID/report."""
        async with one_line_errors():
            found = await library.entries(session, contains=text, limit=max(1, min(limit, 100)))
            return [
                {**e.model_dump(mode="json"), "report": f"research://{e.workflow_id}/report"}
                for e in found
            ]


def _add_report_tools(server: Any, session: Session, one_line_errors: Any) -> None:
    @server.tool()
    async def get_report(id: str, format: str = "md") -> dict[str, Any]:  # noqa: A002 - the CLI's name
        """The report of a finished research, with its sources: from the research library (kept
        after Temporal forgot the workflow), else from Temporal. `format` bib, ris or csl gives
        its references as that file's text (BibTeX, RIS, CSL-JSON), html the standalone page:
        `{id, format, content_type, name, text}`."""
        async with one_line_errors():
            wanted = research_id(id)
            if format not in TEXT_FORMATS:
                raise ToolError(
                    f"unknown format {shown(format)}: choose one of {', '.join(TEXT_FORMATS)}"
                )
            try:
                closed = await research_client.finished_research(session, wanted)
            except ClientError as err:
                if err.kind is not Kind.CONFLICT:
                    raise
                raise ToolError(f"{err}; wait with research_status, or research's wait") from None
            assert closed.result is not None  # finished_research says why there is none
            if format == "md":
                return report_shape(wanted, closed.result)
            finished = closed.stored.finished_at.date() if closed.stored else None
            return await _file(wanted, closed.result, format, finished)

    @server.resource(
        "research://{id}/report",
        mime_type="text/markdown",
        description="The stored report of a finished research, with its sources",
    )
    async def stored_report(id: str) -> str:
        try:
            wanted = research_id(id)
            stored = await library.load(session, wanted)
        except Exception as err:  # noqa: BLE001 - one line for the client, whatever the library says
            raise ResourceError(one_line(str(err))) from None
        if stored is None or library.stored_owner(stored, session) != session.user:
            raise ResourceNotFoundError(f"no stored research with id {shown(wanted)}")
        return clean(to_markdown(stored.result))


async def _file(
    workflow_id: str, result: ResearchResult, fmt: str, accessed: date | None
) -> dict[str, Any]:
    """RESULT (as the client hands it: local sources by name) as a FMT file's text."""
    body, content_type, name = await asyncio.to_thread(export, result, fmt, accessed)
    return {
        "id": workflow_id,
        "format": fmt,
        "content_type": content_type,
        "name": name,
        "text": body.decode("utf-8"),
    }
