"""One section revised, not the whole research, as a person does it from the
terminal and an agent over MCP: a real dev server, `worker.py` on the offline engine, the CLI and
the MCP server as processes, a real SQLite library.

What a person notices: the section they named is rewritten (and says it was revised and what
re-checking it found), every other byte of the report is as it was, `show`, `result` and `export`
give the new version, `show --version 1` the old one, and every refusal is one line, exit 2.
"""

from __future__ import annotations

import sys

from mcp import ClientSession, StdioServerParameters, stdio_client

from storage import store
from tests.starter.cli.test_starter import (  # noqa: F401 - fixtures
    REPO,
    error_line,
    real_worker,
    starter,
    unique_id,
)
from workflows.kit.sections import sections

QUESTION = "How does asyncio.gather run coroutines concurrently and how are exceptions handled?"


def stored(env: dict[str, str], research_id: str, version: int | None = None) -> str:
    found = store.load_research(env["RESEARCH_DB_URL"], research_id, version)
    assert found is not None
    return found.result.report_markdown


async def test_a_revised_section_changes_alone_and_every_version_stays_readable(
    subprocess_env: dict[str, str], real_worker: None
) -> None:
    env = subprocess_env
    rid = unique_id("revise")
    run = await starter(
        "research", QUESTION, "--depth", "medium", "--id", rid, env=env, timeout=120
    )
    assert run.code == 0, run.err
    before = stored(env, rid)
    numbered = sections(before)
    assert [s.heading for s in numbered][0] == "Summary" and len(numbered) >= 3
    target = numbered[2]  # the third `## ` heading (the Summary is the first)

    revised = await starter(
        "revise", rid, "--section", "3", "shorter please, only about exceptions", env=env
    )
    assert revised.code == 0, revised.err
    assert revised.out.startswith(f"## {target.heading}\n")
    assert "*Revised (version 2) at the reader's request: " in revised.out
    assert f"show {rid} --version 1" in revised.err

    after = stored(env, rid)
    now = sections(after)
    assert [s.heading for s in now] == [s.heading for s in numbered]
    changed = now[2]
    # the rest of the report, byte for byte: everything before the section's body and after it
    assert after[: changed.body_start] == before[: target.body_start]
    assert after[changed.end :] == before[target.end :]
    assert changed.text(after) != target.text(before)
    assert changed.revised_in(after) == 2
    body = changed.body(after)
    assert body and len(body) <= len(target.body(before)) and "[" in body  # still cited

    # show and result give the latest; show --version 1 the report as the research wrote it
    show = await starter("show", rid, env=env)
    assert show.code == 0 and "*Revised (version 2)" in show.out
    assert "version 2 of 2 of this report" in show.err
    first = await starter("show", rid, "--version", "1", env=env)
    assert first.code == 0 and "Revised (version" not in first.out
    assert first.out.startswith(before.split("\n## Sources")[0].rstrip())
    result = await starter("result", rid, env=env)
    assert result.code == 0 and changed.text(after).strip() in result.out  # sources by name
    assert result.out.startswith(after[: changed.end])
    exported = await starter("export", rid, "--format", "md", "--out", "-", env=env)
    assert exported.code == 0 and "*Revised (version 2) at the reader's request" in exported.out

    # a second revision of another section keeps the first one's
    again = await starter("revise", rid, "--section", "1", "more about gather", env=env)
    assert again.code == 0, again.err
    latest = stored(env, rid)
    assert sections(latest)[2].text(latest) == changed.text(after)
    assert stored(env, rid, 2) == after and stored(env, rid, 1) == before

    # refusals: one line, exit 2
    for args, said in (
        (("--section", "9", "anything"), f"the report of {rid} has no section 9: it has"),
        (("--section", "0", "anything"), "invalid section 0"),
        (("--section", "2", "   "), "the feedback is empty"),
    ):
        refused = await starter("revise", rid, *args, env=env)
        assert refused.code == 2 and said in error_line(refused), refused.err
    unknown = await starter("revise", "no-such-research", "--section", "1", "x", env=env)
    assert unknown.code == 2
    assert error_line(unknown) == "error: no research with id no-such-research"
    other = await starter("revise", rid, "--section", "1", "x", env={**env, "RESEARCH_USER": "bob"})
    assert other.code == 2 and error_line(other) == f"error: no research with id {rid}"
    missing = await starter("show", rid, "--version", "7", env=env)
    assert missing.code == 2
    assert error_line(missing) == f"error: research {rid} has no version 7: it has versions 1 to 3"


async def test_a_research_still_running_is_refused_in_one_line(
    subprocess_env: dict[str, str], real_worker: None
) -> None:
    env = subprocess_env
    rid = unique_id("running")
    started = await starter("research", QUESTION, "--review-plan", "--detach", "--id", rid, env=env)
    assert started.code == 0, started.err
    try:
        refused = await starter("revise", rid, "--section", "1", "shorter", env=env)
        assert refused.code == 2
        assert error_line(refused) == (
            f"error: research {rid} is still running: a section can be revised once its "
            "report is finished"
        )
    finally:
        await starter("cancel", rid, env=env)


async def test_mcp_revise_section_rewrites_one_section_and_get_report_gives_it(
    subprocess_env: dict[str, str], real_worker: None
) -> None:
    env = subprocess_env
    rid = unique_id("mcp-revise")
    run = await starter(
        "research", QUESTION, "--depth", "medium", "--id", rid, env=env, timeout=120
    )
    assert run.code == 0, run.err
    before = stored(env, rid)
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        done = await mcp.call_tool(
            "revise_section", {"id": rid, "section": 2, "feedback": "shorter"}
        )
        assert not done.is_error, done
        outcome = done.structured_content
        assert outcome is not None
        assert outcome["version"] == 2 and outcome["section"] == 2
        assert outcome["section_markdown"].endswith("*")
        assert outcome["report_markdown"] == stored(env, rid)
        report = await mcp.call_tool("get_report", {"id": rid})
        assert "Revised (version 2)" in str(report.structured_content)
        wrong = await mcp.call_tool("revise_section", {"id": rid, "section": 42, "feedback": "x"})
        assert wrong.is_error
        [content] = wrong.content
        assert "has no section 42" in content.text and "\n" not in content.text
    after = stored(env, rid)
    s_before, s_after = sections(before)[1], sections(after)[1]
    assert after[: s_after.body_start] == before[: s_before.body_start]
    assert after[s_after.end :] == before[s_before.end :]
