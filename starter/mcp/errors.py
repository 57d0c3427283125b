"""MCP's one mapping of failures: whatever goes wrong in a tool, a `ClientError` of any kind above
all (the client's only kind of failure: no Temporal exception reaches a tool), reaches the client
as an MCP tool error of one line, as the CLI maps kinds to exit
codes (starter/cli/exits.py) and the web app to statuses (starter/web/deps.HTTP_STATUS)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from starter.client.errors import ClientError
from starter.client.temporal import one_line


class one_line_errors:
    """Whatever goes wrong in a tool reaches the client as an MCP tool error of one line."""

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: Any
    ) -> None:
        if err is None or isinstance(err, (ToolError, asyncio.CancelledError)):
            return
        if isinstance(err, ClientError):
            raise ToolError(str(err)) from None
        if isinstance(err, Exception):
            raise ToolError(f"{type(err).__name__}: {one_line(str(err))}") from None
