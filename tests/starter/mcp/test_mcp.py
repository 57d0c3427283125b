"""The MCP server's refusals, through the `mcp` SDK's stdio client: one line each, nothing
reaches Temporal that the CLI would refuse (the end-to-end run is in tests/e2e/test_follow_e2e.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

from tests.starter.cli.test_starter import REPO, offline_env  # noqa: F401 - fixture


async def test_refusals_are_one_line_tool_errors_and_a_missing_report_a_protocol_error(
    offline_env: dict[str, str],
    tmp_path: Path,
) -> None:
    env = {**offline_env, "RESEARCH_DB_URL": f"sqlite:///{tmp_path / 'library.sqlite'}"}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()

        async def error(tool: str, arguments: dict[str, object]) -> str:
            result = await mcp.call_tool(tool, arguments)
            assert result.is_error, result
            [content] = result.content
            assert "\n" not in content.text and "Traceback" not in content.text
            return content.text

        assert (await error("research", {"question": " ab "})).endswith(
            "the question is empty or too short (at least 3 characters)"
        )
        assert (
            await error("research", {"question": "How do lifetimes work?", "depth": "deepest"})
        ).endswith(
            "invalid depth: Input should be 'auto', 'light', 'medium' or 'extended'"
        )  # the schema's enum
        assert (
            await error("research", {"question": "How do lifetimes work?", "language": "elvish!"})
        ).endswith("use auto or a language code such as en, de or vi")
        # An argument the tool does not take is refused by name (the API's 422), not dropped.
        assert (
            await error("research", {"question": "How do lifetimes work?", "dept": "extended"})
        ).endswith("invalid dept: unknown argument (did you mean depth?)")
        assert "invalid colour: unknown argument" in await error(
            "search_library", {"text": "x", "colour": "red"}
        )
        address = offline_env["TEMPORAL_ADDRESS"]
        assert (await error("research_status", {"id": "research-x"})).endswith(
            f"cannot reach Temporal at {address} (start one with `make dev`)"
        )
        assert (await error("get_report", {"id": "research-x"})).endswith(
            f"cannot reach Temporal at {address} (start one with `make dev`)"
        )  # not in the library either
        assert (await mcp.call_tool("search_library", {"text": "anything"})).structured_content == {
            "result": []
        }
        with pytest.raises(MCPError, match="^no stored research with id research-x$"):
            await mcp.read_resource("research://research-x/report")


async def test_rename_research_titles_a_stored_research_and_refuses_an_unknown_one(
    offline_env: dict[str, str],
    tmp_path: Path,
) -> None:
    from storage import store
    from tests.activities.test_library import T0, record

    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    store.write(record("research-old", "run-1", T0), url)
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "starter", "mcp"],
        cwd=str(REPO),
        env={**offline_env, "RESEARCH_DB_URL": url},
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        renamed = await mcp.call_tool(
            "rename_research", {"id": "research-old", "title": " Water\u200b in Rome "}
        )
        unknown = await mcp.call_tool("rename_research", {"id": "nope", "title": "A title"})
        empty = await mcp.call_tool("rename_research", {"id": "research-old", "title": "\t"})
        found = await mcp.call_tool("search_library", {"text": "in rome"})
        report = await mcp.read_resource("research://research-old/report")
    assert renamed.structured_content["title"] == "Water in Rome"
    assert unknown.is_error and unknown.content[0].text.endswith(
        ": no stored research with id nope"
    )
    assert empty.is_error and empty.content[0].text.endswith(
        ": the title is empty: use text of 1 to 200 characters"
    )
    assert [e["workflow_id"] for e in found.structured_content["result"]] == ["research-old"]
    assert report.contents[0].text.startswith("# Water in Rome\n")
