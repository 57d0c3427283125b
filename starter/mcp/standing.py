"""The MCP server's standing research tools: the same calls as `schedule ...` and
`/api/standing`, owned by RESEARCH_USER like every research started over MCP."""

from __future__ import annotations

from typing import Any

from starter.client import standing
from starter.client.session import Session


def add_standing_tools(server: Any, session: Session, one_line_errors: Any) -> None:
    """Create, list and show; `_add_steering_tools` runs, pauses, resumes and deletes."""

    def owner() -> str:
        return session.user

    _add_creation_tool(server, session, one_line_errors, owner)
    _add_reading_tools(server, session, one_line_errors, owner)
    _add_steering_tools(server, session, one_line_errors, owner)


def _add_creation_tool(server: Any, session: Session, one_line_errors: Any, owner: Any) -> None:
    @server.tool()
    async def standing_create(
        question: str,
        every: str | None = None,
        cron: str | None = None,
        depth: str | None = None,
        mode: str | None = None,
        max_tokens: int | None = None,
        max_cost_usd: float | None = None,
        language: str | None = None,
        notify: list[str] | None = None,
        max_runs: int | None = None,
    ) -> dict[str, Any]:
        """Research QUESTION again on a schedule (`every` like 1d or 7d, or `cron`); each run after
        the first says what changed since the previous one. Returns the standing research's id."""
        async with one_line_errors():
            values = {
                "question": question,
                "depth": depth,
                "mode": mode,
                "max_tokens": max_tokens,
                "max_cost_usd": max_cost_usd,
                "language": language,
            }
            standing_id = await standing.create_standing(
                session,
                {k: v for k, v in values.items() if v is not None},
                owner=owner(),
                every=every,
                cron=cron,
                notify=notify or [],
                max_runs=max_runs,
            )
            return {"id": standing_id}


def _add_reading_tools(server: Any, session: Session, one_line_errors: Any, owner: Any) -> None:
    @server.tool()
    async def standing_list() -> list[dict[str, Any]]:
        """Your standing research: question, schedule, paused, next run, last run."""
        async with one_line_errors():
            client = await session.connect()
            views = await standing.list_standing(client, session.cfg, owner())
            return [v.model_dump(mode="json") for v in views]

    @server.tool()
    async def standing_show(id: str) -> dict[str, Any]:
        """A standing research with its runs (newest first; `changed`: the run found changes) and
        its own receivers with the secret each one's deliveries are signed with."""
        async with one_line_errors():
            return (await standing.show(session, id, owner())).model_dump(mode="json")


def _add_steering_tools(server: Any, session: Session, one_line_errors: Any, owner: Any) -> None:
    @server.tool()
    async def standing_run(id: str) -> dict[str, Any]:
        """Run a standing research now; the run's research id (follow it with research_status)."""
        async with one_line_errors():
            client = await session.connect()
            return {"research_id": await standing.run_now(client, session.cfg, id, owner())}

    @server.tool()
    async def standing_pause(id: str) -> dict[str, Any]:
        """Pause a standing research's schedule."""
        async with one_line_errors():
            client = await session.connect()
            return (await standing.pause(client, session.cfg, id, owner())).model_dump(mode="json")

    @server.tool()
    async def standing_resume(id: str) -> dict[str, Any]:
        """Resume a standing research's schedule."""
        async with one_line_errors():
            client = await session.connect()
            return (await standing.resume(client, session.cfg, id, owner())).model_dump(mode="json")

    @server.tool()
    async def standing_delete(id: str) -> dict[str, Any]:
        """Stop a standing research for good; its runs stay in the library."""
        async with one_line_errors():
            client = await session.connect()
            await standing.delete(client, session.cfg, id, owner())
            return {"id": id, "deleted": True}
