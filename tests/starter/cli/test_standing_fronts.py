"""A red team's schedule findings through the three front ends: an `every` too large for a date and a
cron that runs every few seconds are one line each (CLI exit 2, API 422, an MCP tool error), never
an OverflowError or a schedule that floods receivers; the API's answers are in tests/starter/web/test_standing_api.py."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.starter.cli.test_starter import REPO, error_line, offline_env, starter  # noqa: F401 - fixture
from tests.starter.web.conftest import QUESTION

HUGE_EVERY = "88888888888d"


async def test_the_cli_refuses_a_huge_every_before_connecting(offline_env: dict[str, str]) -> None:
    run = await starter("schedule", "add", QUESTION, "--every", HUGE_EVERY, env=offline_env)
    assert run.code == 2
    assert error_line(run) == f"error: invalid every {HUGE_EVERY}: use 1m to 366d"


async def test_the_cli_refuses_a_cron_every_few_seconds(subprocess_env: dict[str, str]) -> None:
    run = await starter("schedule", "add", QUESTION, "--cron", "@every 4s", env=subprocess_env)
    assert run.code == 2
    assert error_line(run) == (
        "error: invalid schedule @every 4s: it would run 4s apart; "
        "runs must be at least a minute apart"
    )


async def test_mcp_refuses_a_huge_every_and_a_seconds_cron_in_one_line(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**subprocess_env, "RESEARCH_DB_URL": f"sqlite:///{tmp_path / 'library.sqlite'}"}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        for spec, expected in (
            ({"every": HUGE_EVERY}, "use 1m to 366d"),
            ({"cron": "*/6 * * * * * *"}, "runs must be at least a minute apart"),
        ):
            result = await mcp.call_tool("standing_create", {"question": QUESTION, **spec})
            [content] = result.content
            assert result.is_error and "\n" not in content.text, content.text
            assert content.text.endswith(expected), content.text
