"""Whose research a CLI or MCP client reads: the user RESEARCH_USER names (default `local`), as the
web app reads a signed-in user's. Another user's research is unknown to it, exactly like an id
that does not exist.

- `reader(cfg)`: the user.
- `owner_of(handle, cfg)`: the owner of a research Temporal knows (the `owner` memo the web app
  and `research` set; research from before owners belongs to RESEARCH_USER's default).
- `stored_owner(stored)`: the owner of a library entry or stored research.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import WorkflowHandle

from config import Settings


def reader(cfg: Settings) -> str:
    return cfg.research_user.strip() or "local"


async def owner_of(handle: WorkflowHandle[Any, Any], cfg: Settings) -> str:
    described = await handle.describe()
    return str(await described.memo_value("owner", reader(cfg)))


def stored_owner(stored: Any) -> str:
    owner = getattr(stored, "owner", None) or getattr(
        getattr(stored, "result", None), "owner", None
    )
    return str(owner or "local")
