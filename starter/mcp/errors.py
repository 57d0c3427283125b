"""MCP's one mapping of failures (issue 37): whatever goes wrong in a tool, a `ClientError` of any
kind above all, reaches the client as an MCP tool error of one line, as the CLI maps kinds to exit
codes (starter/cli/exits.py) and the web app to statuses (starter/web/deps.HTTP_STATUS)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from temporalio.service import RPCError

from starter.client.errors import ClientError
from starter.client.temporal import is_not_found, one_line


class one_line_errors:
    """Whatever goes wrong in a tool reaches the client as an MCP tool error of one line."""

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: Any
    ) -> bool:
        if err is None or isinstance(err, (ToolError, asyncio.CancelledError)):
            return False
        if isinstance(err, ClientError):
            raise ToolError(str(err)) from None
        if is_not_found(err):
            raise ToolError("no research with that id") from None
        if isinstance(err, RPCError):
            raise ToolError(f"Temporal: {one_line(err.message)}") from None
        if isinstance(err, Exception):
            raise ToolError(f"{type(err).__name__}: {one_line(str(err))}") from None
        return False
