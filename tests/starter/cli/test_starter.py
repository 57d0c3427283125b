"""The starter CLI as users run it: a real `python -m starter` subprocess against the dev server.

Every case checks the exit code and the one-line message, and that no traceback ever reaches
stderr. Research that needs a worker gets either the real `worker.py` (offline engine) or an
in-process worker running the real workflow with the activity doubles of tests/support/doubles.py, so
questions, refusals and failures happen on cue.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from starter.cli.hints import program
from tests.support.processes import cli

REPO = Path(__file__).resolve().parents[3]
GATHER_QUESTION = "How does asyncio.gather run coroutines concurrently?"


@dataclass
class Run:
    code: int
    out: str
    err: str


async def starter(
    *args: str, env: dict[str, str], stdin: Any = asyncio.subprocess.DEVNULL, timeout: float = 60
) -> Run:
    async with cli(*args, env=env, stdin=stdin) as proc:
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            proc.kill()
            out, err = await proc.communicate()
            pytest.fail(f"starter {args} still running after {timeout}s; stderr:\n{err.decode()}")
    return checked(Run(proc.returncode or 0, out.decode(), err.decode()))


def checked(run: Run) -> Run:
    assert "Traceback" not in run.err, run.err
    return run


def error_line(run: Run) -> str:
    """The single `error: ...` line of stderr."""
    lines = [line for line in run.err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, run.err
    return lines[0]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def unique_id(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# --- bad input: nothing reaches a workflow ----------------------------------------------------


@pytest.fixture
def offline_env() -> dict[str, str]:
    """Pointed at a closed port: proves a check happens before any connection."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "OPENAI_", "LLM_"))
    }
    env.update(TEMPORAL_ADDRESS=f"127.0.0.1:{closed_port()}", LLM_PROVIDER="offline")
    return env


@pytest.mark.parametrize(
    "args",
    [
        ["research", GATHER_QUESTION, "--detach"],
        ["status", "anything"],
        ["list"],
    ],
)
async def test_unreachable_temporal_is_one_line_and_fast(
    offline_env: dict[str, str], args: list[str]
) -> None:
    run = await starter(*args, env=offline_env, timeout=20)
    assert run.code == 2
    address = offline_env["TEMPORAL_ADDRESS"]
    assert (
        error_line(run) == f"error: cannot reach Temporal at {address} (start one with `make dev`)"
    )


@pytest.mark.parametrize(
    "question, message",
    [
        ("", "error: the question is empty or too short (at least 3 characters)"),
        ("  ab \n", "error: the question is empty or too short (at least 3 characters)"),
        ("x" * 5001, "error: the question is too long (5001 characters, at most 5000)"),
    ],
)
async def test_bad_question_is_refused_before_connecting(
    offline_env: dict[str, str], question: str, message: str
) -> None:
    run = await starter("research", question, env=offline_env)
    assert run.code == 2
    assert error_line(run) == message
    assert run.out == ""


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--clarification-timeout", "inf"),
        ("--clarification-timeout", "nan"),
        ("--clarification-timeout", "1e300"),
        ("--clarification-timeout", "0"),
        ("--time-budget", "inf"),
        ("--time-budget", "-5"),
        ("--time-budget", "90000"),
        ("--max-clarifications", "11"),
        ("--max-tokens", "0"),
        ("--max-cost", "-1"),
        ("--max-cost", "nan"),
        ("--language", "Deutsch!"),
    ],
)
async def test_numbers_that_cannot_work_are_refused_in_one_line(
    offline_env: dict[str, str], flag: str, value: str
) -> None:
    run = await starter("research", GATHER_QUESTION, flag, value, env=offline_env)
    assert run.code == 2
    assert error_line(run).startswith(f"error: invalid {flag}")
    assert "Traceback" not in run.err


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            {"LLM_MODEL": "my-llama"},
            "error: --max-cost: no price is known for model my-llama; set LLM_PRICES, e.g. "
            """LLM_PRICES='{"my-llama": {"input": 0.5, "output": 1.5}}' (USD per 1M tokens)""",
        ),
        (
            {
                "LLM_MODEL_COMPLEX": "my-writer",
                "LLM_PRICES": '{"my-writer": {"input": 3, "output": 9}}',
            },
            None,
        ),
        (
            {"LLM_MODEL_COMPLEX": "my-writer"},
            "error: --max-cost: no price is known for model my-writer",
        ),
        ({"LLM_PRICES": "{oops"}, "error: LLM_PRICES is not valid JSON"),
    ],
)
async def test_a_cost_budget_on_a_model_without_a_price_is_refused_before_it_starts(
    offline_env: dict[str, str],
    extra: dict[str, str],
    message: str | None,
) -> None:
    env = {
        **offline_env,
        "LLM_PROVIDER": "openai",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        **extra,
    }
    run = await starter("research", GATHER_QUESTION, "--max-cost", "0.5", env=env)
    assert run.code == 2 and "Traceback" not in run.err
    if message is None:  # every tier model priced: it gets as far as connecting
        assert error_line(run).startswith("error: cannot reach Temporal")
    else:
        assert error_line(run).startswith(message)


async def test_negative_max_clarifications_is_refused(offline_env: dict[str, str]) -> None:
    run = await starter("research", GATHER_QUESTION, "--max-clarifications", "-1", env=offline_env)
    assert run.code == 2
    assert error_line(run).startswith("error: invalid --max-clarifications")


# --- against the dev server, no worker needed ---------------------------------------------------


@pytest.mark.parametrize(
    "command", [["status"], ["result"], ["cancel"], ["answer", "@", "blue"], ["watch"]]
)
async def test_unknown_id(subprocess_env: dict[str, str], command: list[str]) -> None:
    wid = unique_id("missing")
    args = [wid if a == "@" else a for a in command] if "@" in command else [*command, wid]
    run = await starter(*args, env=subprocess_env)
    assert run.code == 2
    assert error_line(run) == f"error: no research with id {wid}"


async def test_detach_then_duplicate_running_id_fails(subprocess_env: dict[str, str]) -> None:
    wid = unique_id("dup")
    first = await starter("research", GATHER_QUESTION, "--id", wid, "--detach", env=subprocess_env)
    assert first.code == 0 and first.out.strip() == wid
    assert "offline engine" in first.err  # the engine notice
    second = await starter("research", GATHER_QUESTION, "--id", wid, "--detach", env=subprocess_env)
    assert second.code == 2
    assert error_line(second).startswith(f"error: a research with id {wid} is already running")

    listed: list[dict[str, Any]] = []
    for _ in range(40):  # visibility is eventually consistent
        run = await starter("list", "--json", env=subprocess_env)
        listed = [row for row in json.loads(run.out) if row["id"] == wid]
        if listed:
            break
        await asyncio.sleep(0.25)
    assert listed and listed[0]["status"] == "running"
    assert listed[0]["summary"] == f"Research: {GATHER_QUESTION} (auto, deep)"

    cancelled = await starter("cancel", wid, env=subprocess_env)
    assert cancelled.code == 0 and wid in cancelled.out


# --- the real workflow with activity doubles, in this process -----------------------------------


@asynccontextmanager
async def doubles_worker(client: Client, task_queue: str, **behaviour: Any) -> AsyncIterator[None]:
    try:
        from temporalio.worker import Worker

        from tests.support.doubles import Script
        from workflows.research import DeepResearchWorkflow
    except ImportError as err:
        pytest.skip(f"the research workflow is not there yet: {err}")
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow],
        activities=Script(**behaviour).activities(),
    ):
        yield


def always_clarify(inp: Any) -> Any:
    from workflows.activity_models import RouteOutput
    from workflows.models import RoutingDecision

    return RouteOutput(decision=RoutingDecision.CLARIFICATION, reasoning="vague")


async def test_question_without_a_terminal_prints_the_commands_and_exits_3(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    wid = unique_id("ask")
    async with doubles_worker(
        dev_client, subprocess_env["TEMPORAL_TASK_QUEUE"], route=always_clarify
    ):
        run = await starter("research", "The best approach", "--id", wid, env=subprocess_env)
        assert run.code == 3, run.err
        assert "question: What exactly do you mean by 'The best approach'?" in run.err
        assert f'{program()} answer {wid} "<your answer>"' in run.err
        assert f"{program()} result {wid}" in run.err
        assert run.out == ""

        status = await starter("status", wid, env=subprocess_env)
        assert (
            status.code == 0
            and "awaiting_answer" in status.out
            and "waiting for an answer" in status.out
        )

        empty = await starter("answer", wid, "  ", env=subprocess_env)
        assert empty.code == 2
        assert error_line(empty) == "error: answer refused: the answer is empty"

        accepted = await starter("answer", wid, "the 2024 edition", env=subprocess_env)
        assert accepted.code == 0, accepted.err

        result = await starter("result", wid, "--json", env=subprocess_env)
        assert result.code == 0, result.err
        data = json.loads(result.out)
        assert data["outcome"] == "completed"
        assert data["clarifications"] == [
            {
                "question": "What exactly do you mean by 'The best approach'?",
                "answer": "the 2024 edition",
            }
        ]

        late = await starter("answer", wid, "too late", env=subprocess_env)
        assert late.code == 2
        assert error_line(late) == f"error: research {wid} is already completed: nothing to answer"


async def test_question_on_a_terminal_is_asked_and_a_refused_answer_asked_again(
    dev_client: Client, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    wid = unique_id("tty")
    primary, secondary = os.openpty()
    try:
        os.write(primary, b"\nthe 2024 edition\n")  # first an empty line (refused), then the answer
        async with doubles_worker(
            dev_client, subprocess_env["TEMPORAL_TASK_QUEUE"], route=always_clarify
        ):
            run = await starter(
                "research",
                "The best approach",
                "--id",
                wid,
                "--out",
                str(tmp_path / "report.md"),
                env=subprocess_env,
                stdin=secondary,
            )
    finally:
        os.close(primary)
        os.close(secondary)
    assert run.code == 0, run.err
    assert "question: What exactly do you mean by 'The best approach'?" in run.err
    assert "error: answer refused: the answer is empty" in run.err
    assert "answer accepted" in run.err
    assert "» awaiting_answer" in run.err and "» completed" in run.err
    assert run.out.startswith("# The best approach")
    assert (tmp_path / "report.md").read_text() == run.out


async def test_failed_research_prints_the_root_cause_and_exits_1(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    def explode(inp: Any) -> Any:
        raise ApplicationError("the planner exploded", non_retryable=True)

    wid = unique_id("fail")
    async with doubles_worker(dev_client, subprocess_env["TEMPORAL_TASK_QUEUE"], plan=explode):
        run = await starter("research", GATHER_QUESTION, "--id", wid, env=subprocess_env)
        again = await starter("result", wid, env=subprocess_env)
    assert run.code == 1 and again.code == 1
    assert error_line(run) == f"error: research {wid} failed: plan: the planner exploded"
    assert error_line(again) == error_line(run)


async def test_ctrl_c_leaves_the_research_running_and_says_how_to_reattach(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    from tests.support.doubles import default_plan, slow

    wid = unique_id("int")
    async with doubles_worker(
        dev_client, subprocess_env["TEMPORAL_TASK_QUEUE"], plan=slow(30, default_plan)
    ):
        async with cli("research", GATHER_QUESTION, "--id", wid, env=subprocess_env) as proc:
            assert proc.stderr is not None
            seen = b""
            while b"\xc2\xbb planning" not in seen:  # "» planning": attached and following
                line = await asyncio.wait_for(proc.stderr.readline(), 30)
                assert line, seen.decode()
                seen += line
            proc.send_signal(signal.SIGINT)
            # A bound, not a pace: on a busy 2-core machine the CLI's exit (its RPCs cancelled, the
            # connection closed) has taken longer than 20 s.
            out, err = await asyncio.wait_for(proc.communicate(), 90)
            run = checked(Run(proc.returncode or 0, out.decode(), seen.decode() + err.decode()))
            assert run.code == 130
            assert (
                f"research {wid} keeps running; reattach with `{program()} result {wid}`" in run.err
            )
            still = await starter("status", wid, "--json", env=subprocess_env)
            assert still.code == 0 and json.loads(still.out)["stage"] == "planning"
            assert (await starter("cancel", wid, env=subprocess_env)).code == 0
            cancelled = await starter("result", wid, env=subprocess_env)
            assert cancelled.code == 1
            assert error_line(cancelled).startswith("error: the research was cancelled")


# --- the real worker ----------------------------------------------------------------------------


@pytest.fixture
async def real_worker(subprocess_env: dict[str, str]) -> AsyncIterator[None]:
    if not (REPO / "worker.py").exists() or not (REPO / "workflows" / "research.py").exists():
        pytest.skip("worker.py or workflows/research.py does not exist yet")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "worker.py",
        cwd=REPO,
        env=subprocess_env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        seen = b""
        while b"worker: task queue" not in seen:
            line = await asyncio.wait_for(proc.stderr.readline(), 30)
            assert line, f"worker.py exited: {seen.decode()}"
            seen += line
        yield
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 25)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def test_answer_when_nothing_is_pending_is_refused(
    real_worker: None, subprocess_env: dict[str, str]
) -> None:
    wid = unique_id("np")
    started = await starter(
        "research",
        GATHER_QUESTION,
        "--depth",
        "extended",
        "--id",
        wid,
        "--detach",
        env=subprocess_env,
    )
    assert started.code == 0
    run = await starter("answer", wid, "blue", env=subprocess_env)
    assert run.code == 2
    assert error_line(run) == "error: answer refused: no clarification question is pending"
    # Clean-up: it may have finished meanwhile (a detached start never waits for a report review).
    cancelled = await starter("cancel", wid, env=subprocess_env)
    assert cancelled.code == 0 or "already completed" in cancelled.err


@pytest.mark.e2e
async def test_attached_research_completes_offline(
    real_worker: None, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    run = await starter(
        "research",
        GATHER_QUESTION,
        "--depth",
        "light",
        "--json",
        "--out",
        str(out),
        env=subprocess_env,
        timeout=240,
    )
    assert run.code == 0, run.err
    data = json.loads(run.out)
    assert data["outcome"] == "completed" and data["report_markdown"]
    assert json.loads(out.read_text()) == data
    assert "» researching" in run.err and "completed:" in run.err
    assert (
        "offline-engine calls" in run.err and "LLM calls" not in run.err
    )  # the offline engine is no LLM


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"TEMPORAL_ADDRESS": "127.0.0.1:1"},
            "error: cannot reach Temporal at 127.0.0.1:1 (start one with `make dev`)",
        ),
        (
            {"SEARCH_PROVIDER": "bing"},
            "error: search provider 'bing' does not exist; SEARCH_PROVIDER and "
            "SEARCH_FALLBACK_PROVIDERS take: duckduckgo, searxng, tavily, brave, local",
        ),
        (
            {"SEARCH_PROVIDER": "local", "RESEARCH_CORPUS_DIR": "/no/such/folder"},
            "error: RESEARCH_CORPUS_DIR '/no/such/folder' is not a folder",
        ),
        (
            {"SEARCH_PROVIDER": "tavily"},
            "error: the tavily provider needs an API key: set TAVILY_API_KEY",
        ),
        (
            {"SEARCH_STRATEGY": "wild"},
            "error: search strategy 'wild' does not exist; set SEARCH_STRATEGY to one of: "
            "conservative, fallback, exploratory",
        ),
    ],
)
def test_the_worker_refuses_a_bad_configuration_with_one_line(
    env: dict[str, str], message: str
) -> None:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TEMPORAL_", "SEARCH_", "RESEARCH_", "TAVILY_", "BRAVE_", "SEARXNG_"))
    }
    done = subprocess.run(
        [sys.executable, "worker.py"],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert message in done.stderr.strip().splitlines()[-1]
    assert "Traceback" not in done.stderr


# --- python -m starter index [DIR] --------------------------------------------------------------


async def test_index_builds_then_refreshes_and_lists_what_it_changed_and_could_not_read(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    from tests.support.documents import make_docx, make_pdf

    docs = tmp_path / "my documents"
    (docs / "reports").mkdir(parents=True)
    (docs / "notes.md").write_text("# Notes\n\nThe heron waits in the reeds.\n")
    (docs / "reports" / "annual.pdf").write_bytes(
        make_pdf([["Annual report"], ["Revenue rose."]], title="Annual")
    )
    (docs / "reports" / "plan.docx").write_bytes(
        make_docx([("heading 1", "Plan"), ("p", "Ship in May.")])
    )
    (docs / "reports" / "scan.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf")
    env = {**offline_env, "RESEARCH_INDEX_DIR": str(tmp_path / "index")}

    first = await starter("index", str(docs), env=env)

    assert first.code == 0, first.err
    lines = first.out.splitlines()
    # The broken PDF is counted once, as unreadable (not also as added), and pypdf's own log
    # lines about it stay out of the output: the skipped line says why.
    assert lines[0].startswith(
        f"{docs} (4 documents): 3 added, 0 updated, 0 removed, 1 unreadable, in "
    )
    assert "  added    reports/annual.pdf" in lines and "  added    notes.md" in lines
    assert "  added    reports/scan.pdf" not in lines
    assert any(line.startswith("  skipped  reports/scan.pdf: unreadable PDF") for line in lines)
    assert first.err == ""
    assert f"index: {tmp_path / 'index'}" in first.out

    (docs / "notes.md").write_text("# Notes\n\nThe heron and the egret wait in the reeds.\n")
    os.utime(docs / "notes.md", ns=(1, 10**18))
    (docs / "reports" / "plan.docx").unlink()
    second = await starter("index", str(docs), env=env)

    assert second.code == 0, second.err
    assert second.out.splitlines()[0].startswith(
        f"{docs} (3 documents): 0 added, 1 updated, 1 removed, 1 unreadable"
    )
    assert "  updated  notes.md" in second.out and "  removed  reports/plan.docx" in second.out


async def test_index_of_a_missing_folder_is_one_line_and_exit_2(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    run = await starter(
        "index", str(tmp_path / "nowhere"), env={**offline_env, "RESEARCH_INDEX_DIR": str(tmp_path)}
    )
    assert run.code == 2
    assert error_line(run) == f"error: {tmp_path / 'nowhere'} is not a folder of documents"
