"""Issue 30, W6: the MCP server and the CLI read research as RESEARCH_USER, and only that user's:
another user's stored research is unknown to them, exactly like an id that does not exist."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

from tests.starter.test_starter import REPO, offline_env, starter  # noqa: F401 - fixture
from tests.web.reports import _result, store_research


def _library(tmp_path: Path) -> tuple[str, str, str]:
    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    mine = store_research(
        url, _result("Whose research is mine?", "# Mine\n\nmine", [], [], [], owner="carol"), "mine"
    )
    theirs = store_research(
        url,
        _result("Whose research is theirs?", "# Theirs\n\nsecret", [], [], [], owner="dave"),
        "theirs",
    )
    return url, mine, theirs


async def test_mcp_reads_only_research_users_research(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    url, mine, theirs = _library(tmp_path)
    env = {**offline_env, "RESEARCH_DB_URL": url, "RESEARCH_USER": "carol"}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        found = (await mcp.call_tool("search_library", {"text": "Whose"})).structured_content
        assert [e["workflow_id"] for e in found["result"]] == [mine]
        report = await mcp.call_tool("get_report", {"id": mine})
        assert not report.is_error
        refused = await mcp.call_tool("get_report", {"id": theirs})
        assert refused.is_error and refused.content[0].text.endswith(
            f"no research with id {theirs}"
        )
        assert "secret" not in refused.content[0].text
        assert "mine" in str((await mcp.read_resource(f"research://{mine}/report")).contents)
        with pytest.raises(MCPError, match="^no stored research with id"):
            await mcp.read_resource(f"research://{theirs}/report")
        listed = [str(r.uri) for r in (await mcp.list_resources()).resources]
        assert f"research://{mine}/report" in listed
        assert f"research://{theirs}/report" not in listed


async def test_the_cli_library_lists_and_exports_only_research_users_research(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    url, mine, theirs = _library(tmp_path)
    env = {**offline_env, "RESEARCH_DB_URL": url, "RESEARCH_USER": "carol"}
    listed = await starter("history", "--json", env=env, timeout=60)
    assert listed.code == 0, listed
    assert [e["workflow_id"] for e in json.loads(listed.out)] == [mine]
    refused = await starter("export", theirs, "--out", "-", env=env, timeout=60)
    assert refused.code != 0 and "secret" not in refused.out
