"""The MCP server and the CLI read research as RESEARCH_USER, and only that user's:
another user's stored research is unknown to them, exactly like an id that does not exist; and
no client (the CLI, MCP, the web app's research and standing research) follows up someone else's
research (the research client's `ready` reads the earlier research as its owner)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from temporalio.client import WorkflowExecutionStatus

from settings import Settings
from starter.client import research_client
from starter.client.errors import ClientError
from starter.client.requests import build_request
from starter.client.session import Session
from tests.starter.cli.test_starter import REPO, offline_env, starter  # noqa: F401 - fixture
from tests.starter.web.reports import _result, store_research
from workflows.models import ResearchResult


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
        assert refused.is_error and refused.content[0].text.endswith(  # as for an unknown id
            f"no research with id {theirs} in the library or in Temporal"
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


async def test_the_cli_follows_up_only_research_users_research(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    url, mine, theirs = _library(tmp_path)
    env = {**offline_env, "RESEARCH_DB_URL": url, "RESEARCH_USER": "carol"}
    question = "Tell me more about the second point"
    refused = await starter("research", question, "--follow-up", theirs, env=env, timeout=60)
    assert refused.code == 2, refused
    assert f"no research with id {theirs}" in refused.err and "secret" not in refused.err
    # carol's own research is read, and the command goes on (to the closed Temporal port)
    own = await starter("research", question, "--follow-up", mine, env=env, timeout=60)
    assert own.code != 0 and "no research with id" not in own.err, own


async def test_mcp_follows_up_only_research_users_research(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    url, _, theirs = _library(tmp_path)
    env = {**offline_env, "RESEARCH_DB_URL": url, "RESEARCH_USER": "carol"}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        refused = await mcp.call_tool(
            "research", {"question": "Tell me more about the second point", "follow_up_of": theirs}
        )
    assert refused.is_error
    assert f"no research with id {theirs}" in refused.content[0].text
    assert "secret" not in refused.content[0].text


class _Described:
    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.status = WorkflowExecutionStatus.COMPLETED

    async def memo_value(self, key: str, default: Any = None) -> Any:
        return self.owner if key == "owner" else default


class _Client:
    """Temporal as the research client sees it: one completed research of OWNER's."""

    def __init__(self, owner: str, result: ResearchResult) -> None:
        self.owner, self.done = owner, result

    def get_workflow_handle(self, research_id: str, **_: Any) -> Any:
        async def describe(**_: Any) -> _Described:
            return _Described(self.owner)

        async def result(**_: Any) -> ResearchResult:
            return self.done

        return SimpleNamespace(id=research_id, describe=describe, result=result)


async def test_a_follow_up_of_another_users_research_in_temporal_only_is_unknown(
    tmp_path: Path,
) -> None:
    earlier = _result("Whose research is theirs?", "# Theirs\n\nsecret", [], [], [], owner="dave")
    cfg = Settings(_env_file=None, research_db_url=f"sqlite:///{tmp_path / 'empty.sqlite'}")
    request = build_request({"question": "Tell me more about the second point"})
    request = request.model_copy(update={"follow_up_of": "research-in-temporal"})
    session = Session(cfg, client=_Client("dave", earlier))  # type: ignore[arg-type]
    with pytest.raises(
        ClientError, match="^no research with id research-in-temporal in the library"
    ):
        await research_client.ready(request, session, owner="carol")
    readied = await research_client.ready(request, session, owner="dave")
    assert "secret" in readied.history[-1].content  # its owner follows it up as before


async def test_the_cli_reads_and_steers_only_research_users_running_research(
    subprocess_env: dict[str, str], dev_client: Any
) -> None:
    """A research of dave's is unknown to carol's CLI in every command that reads or steers it
    (the words of an id that does not exist, exit 2) and missing from her list; dave's own CLI
    still reads it."""
    from tests.starter.cli.test_starter import GATHER_QUESTION, doubles_worker, unique_id
    from tests.support.doubles import default_plan, slow

    wid = unique_id("owner")
    dave = {**subprocess_env, "RESEARCH_USER": "dave"}
    carol = {**subprocess_env, "RESEARCH_USER": "carol"}
    async with doubles_worker(
        dev_client, subprocess_env["TEMPORAL_TASK_QUEUE"], plan=slow(30, default_plan)
    ):
        started = await starter("research", GATHER_QUESTION, "--id", wid, "--detach", env=dave)
        assert started.code == 0, started
        try:
            for command in (
                ["status", wid],
                ["result", wid],
                ["watch", wid],
                ["answer", wid, "an answer"],
                ["review", wid, "--approve"],
                ["cancel", wid],
            ):
                refused = await starter(*command, env=carol, timeout=60)
                assert refused.code == 2, (command, refused)
                assert refused.err.strip().endswith(f"no research with id {wid}"), (
                    command,
                    refused,
                )
            listed = await starter("list", "--json", env=carol, timeout=60)
            assert wid not in [row["id"] for row in json.loads(listed.out)]
            own = await starter("status", wid, "--json", env=dave, timeout=60)
            assert own.code == 0 and json.loads(own.out)["owner"] == "dave"
            theirs = await starter("list", "--json", env=dave, timeout=60)
            assert wid in [row["id"] for row in json.loads(theirs.out)]
        finally:
            await starter("cancel", wid, env=dave)
