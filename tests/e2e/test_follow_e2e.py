"""Following a research from outside, end to end with the real worker (offline engine, the Rust
book): `watch --json` across a clarification and a reconnect, and the MCP server driven by the
`mcp` SDK's own stdio client."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from temporalio.client import Client

from starter.cli.hints import program
from tests.conftest import REPO
from tests.e2e.test_end_to_end import Workers, start, worker_env, workers  # noqa: F401 - fixtures
from tests.starter.cli.test_starter import starter
from tests.support.processes import cli
from workflows.models import Depth, ResearchRequest, ResearchResult, Stage

pytestmark = pytest.mark.e2e
VAGUE = "Tell me more about it"
ANSWER = "Rust ownership and borrowing"


async def read_events_until(
    stream: asyncio.StreamReader, kind: str, seen: list[dict[str, Any]]
) -> None:
    while not seen or seen[-1]["kind"] != kind:
        line = await asyncio.wait_for(stream.readline(), 60)
        assert line, f"watch ended before a {kind} event: {seen}"
        seen.append(json.loads(line))


async def test_watch_json_across_an_answered_clarification_and_a_reconnect(
    dev_client: Client,
    worker_env: dict[str, str],
    workers: Workers,
) -> None:
    workers.start()
    handle = await start(dev_client, worker_env, ResearchRequest(query=VAGUE, depth=Depth.LIGHT))
    async with cli("watch", handle.id, "--json", env=worker_env) as watch:
        assert watch.stdout is not None
        first: list[dict[str, Any]] = []
        await read_events_until(watch.stdout, "question", first)

        watch.send_signal(signal.SIGINT)  # Ctrl-C: the research keeps waiting for its answer
        rest, err = await asyncio.wait_for(
            watch.communicate(), 90
        )  # a bound: busy machines are slow
        first += [json.loads(line) for line in rest.decode().splitlines()]
        assert watch.returncode == 130, err.decode()
        resume = re.search(
            rf"reattach with `{re.escape(program())} watch {handle.id} --since (\d+)`", err.decode()
        )
        assert resume and int(resume.group(1)) == first[-1]["seq"], err.decode()
        assert "Traceback" not in err.decode()

    answered = await starter("answer", handle.id, ANSWER, env=worker_env)
    assert answered.code == 0, answered.err
    second = await starter(
        "watch", handle.id, "--since", resume.group(1), "--json", env=worker_env, timeout=120
    )
    assert second.code == 0, second.err
    events = first + [json.loads(line) for line in second.out.splitlines()]

    result: ResearchResult = await handle.result()
    assert result.outcome is Stage.COMPLETED
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["data"]["stage"] for e in events if e["kind"] == "stage"] == [
        s.value for s in result.stage_history
    ]
    answer = next(e for e in events if e["kind"] == "answer")
    assert (
        answer["data"] == {"answer": ANSWER, "by": "person"}
        and answer["seq"] == int(resume.group(1)) + 1
    )
    assert events[-1]["kind"] == "done" and events[-1]["data"]["outcome"] == "completed"
    assert {"plan", "step_started", "step_done", "source", "reflection", "verification"} <= {
        e["kind"] for e in events
    }

    # A person's view of the same stream, from the start; and an id that does not exist.
    again = await starter("watch", handle.id, env=worker_env)
    assert again.code == 0 and "» awaiting_answer" in again.out and f"answer: {ANSWER}" in again.out
    last = [line for line in again.out.rstrip().splitlines() if line[:1] != " "][
        -1
    ]  # a long one wraps
    assert last.split(" ", 1)[1].startswith("  completed: ")
    missing = await starter("watch", "research-nope", env=worker_env)
    assert missing.code == 2 and missing.err.strip() == "error: no research with id research-nope"


async def test_the_mcp_server_researches_asks_back_and_serves_stored_reports(
    worker_env: dict[str, str],
    workers: Workers,
) -> None:
    workers.start()
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=worker_env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        tools = {t.name for t in (await mcp.list_tools()).tools}
        assert tools == {
            "research",
            "research_status",
            "answer_clarification",
            "review",
            "get_report",
            "search_library",
            "list_research",  # running and finished, the same list as the web's and the CLI's
            # standing research
            "standing_create",
            "standing_list",
            "standing_show",
            "standing_run",
            "standing_pause",
            "standing_resume",
            "standing_delete",
            "rename_research",  # renaming in the library
            "check_claims",  # any text's citations, checked
            "revise_section",  # one section of a finished report revised
        }

        asked = await mcp.call_tool(
            "research",
            {"question": VAGUE, "depth": "light", "wait": True},
            progress_callback=on_progress,
        )
        assert not asked.is_error, asked.content
        pending = asked.structured_content
        assert pending["status"] == "awaiting_answer" and pending[
            "clarification_question"
        ].endswith("?")
        assert "answer_clarification" in pending["next"]
        assert [m for _, m in progress][-1] == f"question: {pending['clarification_question']}"
        asked_at = progress[-1][0]

        done = await mcp.call_tool(
            "answer_clarification",
            {"id": pending["id"], "answer": ANSWER, "wait": True},
            progress_callback=on_progress,
        )
        assert not done.is_error, done.content
        report = done.structured_content
        assert (
            report["status"] == "completed"
            and report["sources"]
            and "[1]" in report["report_markdown"]
        )
        later = [value for value, _ in progress if value > asked_at]
        assert later == list(
            range(int(asked_at) + 1, int(later[-1]) + 1)
        )  # every event once, in order
        assert progress[-1][1].startswith("completed: ")

        late = await mcp.call_tool(
            "answer_clarification", {"id": pending["id"], "answer": "too late"}
        )
        assert late.is_error and late.content[0].text.endswith(
            f"research {pending['id']} is already completed: nothing to answer"
        )

        uri = f"research://{pending['id']}/report"
        listed = await mcp.list_resources()
        assert uri in {str(r.uri) for r in listed.resources}
        stored = await mcp.read_resource(uri)
        assert stored.contents[0].text.startswith(report["report_markdown"].rstrip()[:200])
        fetched = await mcp.call_tool("get_report", {"id": pending["id"]})
        assert fetched.structured_content["report_markdown"] == report["report_markdown"]
        found = await mcp.call_tool("search_library", {"text": "more about"})
        assert [e["workflow_id"] for e in found.structured_content["result"]] == [pending["id"]]
        missing = await mcp.call_tool("get_report", {"id": "research-nope"})
        assert (
            missing.is_error
            and "no research with id research-nope in the library or in Temporal"
            in missing.content[0].text
        )
