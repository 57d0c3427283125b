"""A red team's findings in the starter, each with its hostile input made here: names that forge
lines, empty and enormous ids, control characters and bidi overrides in what is sent and in the
report files written, and the MCP `research` tool taking what `POST /api/research` takes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from settings import Settings
from starter.cli import commands, reviews
from starter.client import research_client
from starter.client import temporal as starter_temporal
from starter.client.requests import OPTIONS, QUESTION, RequestError, build_request, research_id
from starter.client.session import Session
from starter.client.terminal import clean, escape
from starter.mcp import server as mcp_server
from storage import store
from tests.activities.test_library import T0, record
from tests.starter.cli.test_starter import REPO, error_line, offline_env, starter  # noqa: F401 - fixture

#: ESC sequences (window title, colour), BEL, a C1 control and the bidi override and isolate.
HOSTILE = "\x1b]0;pwned\x07red \x1b[31mtext\x9b and \u202eevil\u2066 isolate"
UNSAFE = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066")


def no_unsafe(text: str) -> bool:
    return not any(ch in text for ch in UNSAFE)


# --- names that forge lines ---------------------------------------------------------------------


async def test_index_shows_each_name_on_one_line_with_its_control_characters_escaped(
    offline_env: dict[str, str],
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    forged = "notes\n  added    forged.md"
    (docs / f"{forged}.md").write_text("# Notes\n\nThe heron waits in the reeds.\n")
    (docs / "scan\n  removed  gone.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf")
    (docs / "title\x1b]0;pwned\x07\u202efdp.md").write_text("# Title\n\nA page about egrets.\n")

    run = await starter(
        "index", str(docs), env={**offline_env, "RESEARCH_INDEX_DIR": str(tmp_path / "index")}
    )

    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert "  added    forged.md" not in lines and "  removed  gone.pdf" not in lines
    assert "  added    notes\\n  added    forged.md.md" in lines
    assert "  added    title\\x1b]0;pwned\\x07\\u202efdp.md" in lines
    [skipped] = [line for line in lines if line.startswith("  skipped  ")]
    assert skipped.startswith("  skipped  scan\\n  removed  gone.pdf: ")
    assert all(
        line.startswith(("  added ", "  skipped ", "index: ", "note: ")) for line in lines[1:]
    )


def test_escape_shows_controls_and_bidi_overrides_as_python_does() -> None:
    assert escape("a\nb\tc\x1bd\u202ee\u2069f\x9bg") == "a\\nb\\tc\\x1bd\\u202ee\\u2069f\\x9bg"
    assert escape("plain – naïve 名前") == "plain – naïve 名前"


# --- ids: empty, enormous, with control characters ----------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["status", "@"],
        ["result", "@"],
        ["cancel", "@"],
        ["watch", "@"],
        ["answer", "@", "blue"],
        ["review", "@", "--approve"],
        ["show", "@"],
        ["export", "@", "--format", "md"],
    ],
)
@pytest.mark.parametrize("given", ["", "   "])
async def test_an_empty_id_is_one_line_and_exit_2_before_anything_connects(
    offline_env: dict[str, str],
    command: list[str],
    given: str,
) -> None:
    run = await starter(*[given if a == "@" else a for a in command], env=offline_env)
    assert run.code == 2
    assert error_line(run) == "error: the research id is empty: give a research id"


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["research", "How do herons fish?", "--follow-up", ""],
            "error: --follow-up is empty: give a research id",
        ),
        (
            ["research", "How do herons fish?", "--follow-up", "  "],
            "error: --follow-up is empty: give a research id",
        ),
        (
            ["research", "How do herons fish?", "--id", ""],
            "error: --id is empty: give a research id",
        ),
        (
            ["status", "x" * 5000],
            f"error: the research id is too long (5000 characters, at most 200): {'x' * 99}…",
        ),
        (
            ["status", "a\nb"],
            "error: the research id a\\nb has control characters: not a research id",
        ),
    ],
)
async def test_a_bad_id_or_follow_up_is_refused_in_one_line(
    offline_env: dict[str, str],
    args: list[str],
    message: str,
) -> None:
    run = await starter(*args, env=offline_env)
    assert run.code == 2 and error_line(run) == message


def test_a_follow_up_given_empty_is_refused_by_every_client_not_ignored() -> None:
    with pytest.raises(RequestError, match="^follow_up_of is empty: give a research id$"):
        build_request({QUESTION: "How do herons fish?", "follow_up_of": ""})
    assert (
        build_request({QUESTION: "How do herons fish?", "follow_up_of": None}).follow_up_of is None
    )
    assert research_id("  research-1\n") == "research-1"


def test_input_shown_back_in_a_message_is_cut() -> None:
    with pytest.raises(RequestError) as refused:
        build_request({QUESTION: "How do herons fish?", "language": "x" * 100_000})
    assert len(str(refused.value)) < 250 and "…" in str(refused.value)
    with pytest.raises(RequestError) as unknown:
        build_request({QUESTION: "How do herons fish?", "y" * 100_000: 1})
    assert len(str(unknown.value)) < 500


async def test_the_mcp_server_refuses_an_enormous_id_and_never_echoes_it_whole(
    offline_env: dict[str, str],
    tmp_path: Path,
) -> None:
    env = {**offline_env, "RESEARCH_DB_URL": f"sqlite:///{tmp_path / 'library.sqlite'}"}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=env
    )
    huge = "r" * 100_000
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        for tool, arguments in (
            ("research_status", {"id": huge}),
            ("get_report", {"id": huge}),
            ("answer_clarification", {"id": huge, "answer": "blue"}),
            ("review", {"id": huge, "decision": "approve"}),
            ("research_status", {"id": ""}),
            ("research", {"question": "How do herons fish?", "follow_up_of": ""}),
        ):
            result = await mcp.call_tool(tool, arguments)
            [content] = result.content
            assert result.is_error and len(content.text) < 250, (tool, content.text[:300])
        long_id = "s" * 150  # a valid id, shown back cut
        with pytest.raises(MCPError) as missing:
            await mcp.read_resource(f"research://{long_id}/report")
        assert str(missing.value) == f"no stored research with id {'s' * 99}…"


# --- control characters and bidi overrides: sent, and written ------------------------------------


def test_a_question_is_taken_without_control_characters() -> None:
    request = build_request({QUESTION: f"How do herons fish? {HOSTILE}"})
    assert no_unsafe(request.query) and "evil" in request.query


class Handle:
    """Records what an update was sent, as a workflow handle would take it."""

    id = "research-x"

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def execute_update(self, update: Any, arg: Any, result_type: Any = None) -> str:
        # the client names the update by method reference (DeepResearchWorkflow.review)
        self.sent.append((getattr(update, "__name__", update), arg))
        return "accepted"

    async def describe(self, **_: Any) -> Any:
        """A running research of RESEARCH_USER's (every front end finds it first)."""

        async def memo_value(key: str, default: Any = None) -> Any:
            return "local" if key == "owner" else default

        return SimpleNamespace(memo_value=memo_value, status=WorkflowExecutionStatus.RUNNING)


@pytest.fixture
def handle(monkeypatch: pytest.MonkeyPatch) -> Handle:
    """Every client's handle is this one, always running, with no events yet."""
    recorder = Handle()

    async def running(handle: Any, what: str) -> None:
        return None

    async def connect(self: Session) -> Any:
        return SimpleNamespace(get_workflow_handle=lambda *args, **kw: recorder)

    async def status(handle: Any, cfg: Any = None) -> Any:
        return SimpleNamespace(last_event_seq=0)

    monkeypatch.setattr(starter_temporal, "require_running", running)
    monkeypatch.setattr(Session, "connect", connect)
    monkeypatch.setattr(research_client, "status", status)
    return recorder


async def test_answers_and_reviews_are_sent_without_control_characters(handle: Handle) -> None:
    session = Session(Settings(llm_provider="offline"))
    await commands.answer(argparse.Namespace(id="research-x", text=f" {HOSTILE} "), session)
    await reviews.review(
        argparse.Namespace(
            id="research-x", approve=False, cancel=False, steps=None, feedback=HOSTILE
        ),
        session,
    )
    server = mcp_server.build_server(session)
    await server.call_tool("answer_clarification", {"id": "research-x", "answer": HOSTILE})
    await server.call_tool(
        "review",
        {
            "id": "research-x",
            "decision": "approve",
            "feedback": HOSTILE,
            "steps": [{"title": HOSTILE, "description": HOSTILE}],
        },
    )

    names = [name for name, _ in handle.sent]
    assert names == ["answer_clarification", "review", "answer_clarification", "review"]
    for _, sent in handle.sent:
        texts = (
            [sent]
            if isinstance(sent, str)
            else [
                sent.get("feedback", ""),
                *(text for step in sent.get("steps") or [] for text in step.values()),
            ]
        )
        assert all(no_unsafe(text) and "evil" in text for text in texts), texts


@pytest.fixture
def hostile_library(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    hostile = record("research-esc", "run-1", T0, query=f"Herons {HOSTILE}")
    hostile.result.report_markdown = f"# Herons\n\nThey wait {HOSTILE} [1].\n"
    store.write(hostile, url)
    return url


async def test_report_files_are_written_without_control_characters(
    offline_env: dict[str, str],
    hostile_library: str,
    tmp_path: Path,
) -> None:
    env = {**offline_env, "RESEARCH_DB_URL": hostile_library}
    shown, exported = tmp_path / "shown.md", tmp_path / "exported.md"
    assert (await starter("show", "research-esc", "--out", str(shown), env=env)).code == 0
    assert (
        await starter("export", "research-esc", "--format", "md", "--out", str(exported), env=env)
    ).code == 0
    for path in (shown, exported):
        text = path.read_text()
        assert no_unsafe(text) and "They wait" in text and "evil" in text, path

    stored = store.load_research(hostile_library, "research-esc")
    assert stored is not None
    result_out = tmp_path / "result.md"
    commands.emit_result(stored.result, argparse.Namespace(json=False, out=str(result_out)))
    assert no_unsafe(result_out.read_text()) and "evil" in result_out.read_text()


async def test_the_mcp_report_resource_has_no_control_characters(
    offline_env: dict[str, str],
    hostile_library: str,
) -> None:
    env = {**offline_env, "RESEARCH_DB_URL": hostile_library}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        [content] = (await mcp.read_resource("research://research-esc/report")).contents
        report = (await mcp.call_tool("get_report", {"id": "research-esc"})).structured_content
    assert no_unsafe(content.text) and "They wait" in content.text
    assert report is not None and no_unsafe(report["report_markdown"])


def test_clean_removes_bidi_overrides_and_lone_surrogates_but_keeps_lines() -> None:
    assert clean("a\u202eb\u2066c\u2069d\ud800e\n\tf\x1b[2Jg") == "abcde\n\tfg"


# --- the MCP research tool takes what the web API takes, and research belongs to RESEARCH_USER -----


def test_the_mcp_research_tool_offers_the_web_apis_fields() -> None:
    offered = {option.field for option in OPTIONS if option.mcp}
    assert offered == {
        "depth",
        "mode",
        "max_clarifications",
        "review_plan",
        "review_replans",
        "review_report",
        "review_timeout_s",
        "max_tokens",
        "max_cost_usd",
        "language",
        "sources",
        "follow_up_of",
    }


@pytest.mark.parametrize("user, owner", [(None, "local"), ("alice", "alice"), ("  ", "local")])
async def test_research_started_here_belongs_to_research_user(user: str | None, owner: str) -> None:
    started: dict[str, Any] = {}

    class Client:
        async def start_workflow(self, *args: Any, **kw: Any) -> Any:
            started.update(kw, positional=args)
            return SimpleNamespace(id=kw["id"])

        async def list_workflows(
            self, *args: Any, **kw: Any
        ) -> Any:  # the owner's limits: none yet
            for listed in ():
                yield listed

        def get_workflow_handle(self, workflow_id: str) -> Any:  # the id is nobody's yet
            async def describe() -> Any:
                raise RPCError("not found", RPCStatusCode.NOT_FOUND, b"")

            return SimpleNamespace(id=workflow_id, describe=describe)

    cfg = Settings(llm_provider="offline", **({} if user is None else {"research_user": user}))
    request = build_request({QUESTION: "How do herons fish?"})
    run = research_client.StartResearch(
        request=request, owner=research_client.local_owner(cfg), id="research-owned"
    )
    await research_client.start(Client(), cfg, run)  # type: ignore[arg-type]
    assert started["memo"] == {"owner": owner, "question": "How do herons fish?"}
    assert started["args"][0].owner == owner


# --- serve --------------------------------------------------------------------------------------


async def test_serve_is_a_command_and_refuses_a_public_address_without_tokens(
    offline_env: dict[str, str],
) -> None:
    helped = await starter("serve", "--help", env=offline_env)
    assert helped.code == 0 and "--host" in helped.out and "--port" in helped.out
    env = {k: v for k, v in offline_env.items() if k != "RESEARCH_API_TOKENS"}
    refused = await starter("serve", "--host", "0.0.0.0", "--port", "0", env=env)
    assert refused.code == 2 and error_line(refused).startswith(
        "error: refusing to serve on 0.0.0.0"
    )
