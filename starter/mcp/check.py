"""The MCP server's `check_claims` tool: a text's citations checked against its
sources, with the same fields and the same answer as `POST /api/check`.

Like the API, and unlike the `check` command, it never reads a path of the machine it runs on: an
agent's text decides what it asks for, so only http(s) URLs (through the crawler's network guard)
and texts given are sources.
"""

from __future__ import annotations

from typing import Any

from starter.client.citations_check import CheckRequest, SourceGiven, check_request
from starter.client.session import Session


def add_check_tool(server: Any, session: Session, one_line_errors: Any) -> None:
    @server.tool()
    async def check_claims(
        markdown: str, sources: list[SourceGiven] | None = None
    ) -> dict[str, Any]:
        """Check a text's citations: each sentence citing [n] is judged against source n
        (`sources`: {"id", "url"} with an http(s) URL, or {"id", "title", "text"}; default: the
        text's own `[n] Title - URL` lines). Returns each sentence's verdict (supported, partial,
        unsupported, unverified), why, the evidence quoted, and the totals."""
        async with one_line_errors():
            return await check_request(
                CheckRequest.model_construct(markdown=markdown, sources=sources), session.cfg
            )
