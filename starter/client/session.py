"""One command's session: the settings it runs with, its Temporal client (connected on first use,
then shared by everything the command or the MCP server does), and the research it is attached to."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from temporalio.client import Client

from settings import Settings
from starter.client.temporal import connect


def local_owner(cfg: Settings) -> str:
    """Who research started from this machine (the CLI, the MCP server) belongs to, and whom they
    read research as: RESEARCH_USER."""
    return cfg.access.user.strip() or "local"


@dataclass
class Session:
    cfg: Settings
    #: The research this command is attached to, for the Ctrl-C message, and the command that
    #: reattaches (default: `result ID`).
    workflow_id: str | None = None
    reattach: str | None = None
    #: The id of a research being started: a Ctrl-C before the start returned still names it
    #: (it may have started).
    starting: str | None = None
    client: Client | None = field(default=None, repr=False)
    _connecting: asyncio.Lock | None = field(default=None, repr=False)

    @property
    def user(self) -> str:
        """Whom this command acts as (RESEARCH_USER): its research, its library, its schedules."""
        return local_owner(self.cfg)

    async def connect(self) -> Client:
        """The session's client; the first call connects, once however many ask at the same time
        (a failure is retried by the next call)."""
        if self.client is None:
            self._connecting = self._connecting or asyncio.Lock()
            async with self._connecting:
                if self.client is None:
                    self.client = await connect(self.cfg)
        return self.client
