"""The command line as a newcomer meets it: the `deep-research` console script, `--version`, help
for every option, and every printed hint pasted into the shell that ran the starter (a shell
where the virtualenv is not active has no `python` with temporalio, so `python -m starter ...`
there fails). Also the small edges: a Word file extracted as text, `... | head`, language codes,
cancelling twice, the worker's start line and the offline-engine notice.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
from datetime import UTC
from importlib import metadata
from pathlib import Path

import pytest
from temporalio.client import Client

from starter.cli import hints, progress
from starter.cli.main import build_parser
from starter.client.requests import RequestError, build_request
from tests.starter.cli.test_starter import (
    GATHER_QUESTION,
    REPO,
    doubles_worker,
    error_line,
    starter,
    unique_id,
)
from workflows.models import (
    Depth,
    Plan,
    PlanStep,
    QueryMode,
    Reflection,
    ReflectionDecision,
    ResearchStatus,
    ReviewTarget,
    Stage,
)

VENV_BIN = Path(sys.executable).parent
SCRIPT = VENV_BIN / "deep-research"
#: The backquoted command in a line the starter printed.
HINT = re.compile(r"`([^`]+)`")


def shell_env(env: dict[str, str], active: bool) -> dict[str, str]:
    """ENV as a shell has it with the virtualenv activated (ACTIVE) or not: PATH without the
    virtualenv's bin folder, no VIRTUAL_ENV."""
    rest = [
        part
        for part in env.get("PATH", os.defpath).split(os.pathsep)
        if part and Path(part).resolve() != VENV_BIN.resolve()
    ]
    out = {k: v for k, v in env.items() if k != "VIRTUAL_ENV"}
    out["PATH"] = os.pathsep.join([str(VENV_BIN), *rest] if active else rest)
    if active:
        out["VIRTUAL_ENV"] = str(VENV_BIN.parent)
    return out


def pasted(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """COMMAND as a person pastes it into a shell with ENV (from the repository, as `make` runs)."""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def the_hint(text: str, marker: str) -> str:
    lines = [line for line in text.splitlines() if marker in line]
    assert lines, text
    found = HINT.search(lines[0])
    assert found, lines[0]
    return found.group(1)


@pytest.fixture
def clean_env() -> dict[str, str]:
    return {
        k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "OPENAI_", "LLM_"))
    }


# --- the console script, --version and help ------------------------------------------------------


def test_the_console_script_is_installed_with_the_starters_commands(
    clean_env: dict[str, str],
) -> None:
    assert SCRIPT.is_file(), "make setup installs the deep-research console script"
    done = pasted(f"{SCRIPT} --help", shell_env(clean_env, active=False))
    assert done.returncode == 0, done.stderr
    for command in (
        "research",
        "answer",
        "review",
        "status",
        "result",
        "list",
        "cancel",
        "export",
        "serve",
    ):
        assert command in done.stdout


def test_version_is_the_installed_packages(clean_env: dict[str, str]) -> None:
    done = pasted("deep-research --version", shell_env(clean_env, active=True))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"deep-research {metadata.version('deep-research')}"


def walk(parser: argparse.ArgumentParser, path: str = "deep-research"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                assert helps.get(name), f"{path} {name} has no help"
                yield from walk(sub, f"{path} {name}")
        else:
            yield path, action


def test_every_option_and_argument_of_every_command_has_help() -> None:
    seen = list(walk(build_parser()))
    missing = [
        f"{path} {'/'.join(action.option_strings) or action.dest}"
        for path, action in seen
        if not action.help or action.help == argparse.SUPPRESS
    ]
    assert not missing, f"without help: {missing}"
    flags = {(path, flag) for path, action in seen for flag in action.option_strings}
    assert {
        ("deep-research research", "--depth"),
        ("deep-research research", "--mode"),
        ("deep-research list", "--limit"),
    } <= flags


def test_depth_help_states_the_step_limits(clean_env: dict[str, str]) -> None:
    done = pasted("deep-research research --help", shell_env(clean_env, active=True))
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert (
        "light (1 to 3 plan steps), medium (3 to 6 plan steps), extended (5 to 10 plan steps)"
        in text
    )


# --- every printed hint runs in the shell that ran the starter ------------------------------------


@pytest.mark.parametrize(
    "active", [False, True], ids=["virtualenv-not-active", "virtualenv-active"]
)
async def test_a_usage_error_hint_runs_when_pasted(clean_env: dict[str, str], active: bool) -> None:
    env = shell_env(clean_env, active)
    run = await starter("research", "--depth", "deepest", GATHER_QUESTION, env=env)
    assert run.code == 2
    hint = the_hint(error_line(run), "--help")
    assert hint == ("deep-research research --help" if active else f"{SCRIPT} research --help")
    done = pasted(hint, env)
    assert done.returncode == 0, done.stderr
    assert "--depth" in done.stdout


def test_without_a_console_script_the_hint_is_this_interpreter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    python = tmp_path / "my env" / "bin" / "python"
    monkeypatch.setattr(sys, "executable", str(python))
    assert hints.program() == f"'{python}' -m starter"
    assert progress.result_command("r-1") == f"'{python}' -m starter result r-1"


async def test_the_follow_hint_of_a_detached_research_runs_when_pasted(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    env = shell_env(subprocess_env, active=False)
    wid = unique_id("hint")
    async with doubles_worker(dev_client, subprocess_env["TEMPORAL_TASK_QUEUE"]):
        run = await starter("research", GATHER_QUESTION, "--id", wid, "--detach", env=env)
        assert run.code == 0, run.err
        hint = the_hint(run.err, "follow it with")
        assert hint == f"{SCRIPT} result {wid}"
        done = await asyncio.to_thread(pasted, hint, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# "), done.stdout[:200]


# --- what `status` prints fits 80 columns ---------------------------------------------------------


def test_the_status_summary_fits_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "program", lambda: "deep-research")  # the virtualenv active
    long = (
        "How do asyncio tasks, gather and wait run coroutines concurrently, and how are they cancelled "
        "when one of them fails or the caller times out?"
    )
    status = ResearchStatus(
        query=long,
        stage=Stage.AWAITING_PLAN_REVIEW,
        stage_history=[Stage.PLANNING],
        pending_question=None,
        clarification_count=0,
        plan=Plan(
            title="Concurrency in asyncio: tasks, gather, wait and cancellation, step by step",
            steps=[
                PlanStep(
                    title="How gather and wait schedule coroutines on the event loop and collect "
                    "their results"
                )
            ],
        ),
        current_step_index=0,
        plan_iterations=1,
        reflections=[Reflection(decision=ReflectionDecision.CONTINUE, reasoning=long)],
        sources_count=3,
        depth=Depth.MEDIUM,
        mode=QueryMode.DEEP,
        notes=[long],
        pending_review=ReviewTarget.PLAN,
        review_rounds=1,
    )
    text = progress.status_summary("research-1a2b3c4d", status)
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert "review with: deep-research review research-1a2b3c4d --approve" in text
    assert " ".join(text.split()).count("or the caller times out?") == 3  # wrapped, not cut


def test_status_during_a_plan_review_shows_every_step() -> None:
    """Edges: `status` during a plan review showed only the first step."""
    status = ResearchStatus(
        query="How do tides form?",
        stage=Stage.AWAITING_PLAN_REVIEW,
        stage_history=[Stage.PLANNING],
        pending_question=None,
        depth=Depth.MEDIUM,
        mode=QueryMode.DEEP,
        clarification_count=0,
        plan=Plan(title="Tides", steps=[PlanStep(title=f"Step about {w}") for w in "ABC"]),
        current_step_index=0,
        plan_iterations=1,
        reflections=[],
        sources_count=0,
        pending_review=ReviewTarget.PLAN,
        review_rounds=1,
    )
    text = progress.status_summary("research-1", status)
    assert all(f"{n}. [pending] Step about {w}" in text for n, w in zip("123", "ABC", strict=True))


def test_the_progress_lines_of_a_research_fit_80_columns() -> None:
    """What an attached `research` or `watch` prints as the research goes (seen in `make demo`:
    a reflection's reasoning ran to 200 columns)."""
    import io
    from datetime import datetime

    from starter.cli.stream import EventPrinter
    from workflows.events import Event, EventKind

    long = (
        'COMPLETE: coverage 0.75 (6/8 query terms), novelty 0.00 (0/12 words new in "Definition and '
        'purpose of asyncio tasks"); 3 of minimum 3 steps done, 0 pending: no steps left'
    )
    at = datetime(2026, 11, 24, tzinfo=UTC)
    events = [
        Event(seq=1, at=at, kind=EventKind.STAGE, text="routing: " + long),
        Event(seq=2, at=at, kind=EventKind.REFLECTION, text="reflection: " + long),
        Event(seq=3, at=at, kind=EventKind.DONE, text="completed", data={"notes": [long]}),
    ]
    for times in (False, True):
        out = io.StringIO()
        EventPrinter(out, times=times).show(events)
        lines = out.getvalue().splitlines()
        assert max(len(line) for line in lines) <= 80, lines
        assert " ".join(out.getvalue().split()).count("no steps left") == 3  # wrapped, not cut


# --- small edges -----------------------------------------------------------------------------------


async def test_extract_prints_a_word_files_text_not_its_zip_bytes(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    from tests.support.documents import make_docx

    notes = tmp_path / "notes.docx"
    notes.write_bytes(
        make_docx([("heading 1", "Plan"), ("p", "Ship in May."), ("p", "Then rest.")])
    )
    run = await starter("extract", str(notes), env=clean_env)
    assert run.code == 0, run.err
    assert run.out.startswith(f"# Plan\n{notes.as_uri()}\n")
    assert "Ship in May." in run.out and "Then rest." in run.out and "PK" not in run.out


def test_output_into_a_pipe_that_closes_early_ends_quietly(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    big = tmp_path / "big.txt"
    big.write_text("".join(f"line {n}\n" for n in range(200_000)))
    done = subprocess.run(
        [
            "/bin/bash",
            "-c",
            f"{sys.executable} -m starter extract {big} {big} | head -n 1; "
            "echo status ${PIPESTATUS[0]}",
        ],
        cwd=REPO,
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stderr == ""  # no BrokenPipeError
    assert done.stdout == "# line 0\nstatus 141\n"  # the status `cat` has in its place


@pytest.mark.parametrize("code", ["de", "vi", "pt-BR", "zh-Hant", "fil", "auto", "EN"])
def test_real_language_codes_are_taken(code: str) -> None:
    assert build_request({"question": GATHER_QUESTION, "language": code}).language == code.lower()


@pytest.mark.parametrize("code", ["zz", "xx-YY", "qaa", "und"])
def test_a_code_that_names_no_language_is_refused_in_one_line(code: str) -> None:
    with pytest.raises(RequestError) as refused:
        build_request({"question": GATHER_QUESTION, "language": code}, {"language": "--language"})
    assert (
        str(refused.value)
        == f"invalid --language '{code}': use auto or a language code such as en, de or vi"
    )


def test_a_running_research_with_such_a_code_still_decodes() -> None:
    """The check is where research is started; the model a running research decodes again on
    every replay keeps taking what it took when it began (a code of the right shape)."""
    from workflows.models import ResearchRequest

    assert ResearchRequest(query=GATHER_QUESTION, language="zz").language == "zz"


async def test_cancelling_twice_says_it_was_already_cancelled(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    from tests.support.doubles import default_plan, slow

    wid = unique_id("twice")
    async with doubles_worker(
        dev_client, subprocess_env["TEMPORAL_TASK_QUEUE"], plan=slow(30, default_plan)
    ):
        started = await starter(
            "research", GATHER_QUESTION, "--id", wid, "--detach", env=subprocess_env
        )
        assert started.code == 0, started.err
        first = await starter("cancel", wid, env=subprocess_env)
        assert first.code == 0, first.err
        await dev_client.get_workflow_handle(wid).result()
        second = await starter("cancel", wid, env=subprocess_env)
    assert second.code == 2
    assert error_line(second) == f"error: research {wid} was already cancelled: nothing to cancel"


def test_the_worker_says_which_folder_it_searches(tmp_path: Path) -> None:
    from settings import Settings
    from worker import start_line

    line = start_line(Settings(search_provider="local", research_corpus_dir=tmp_path))
    assert line.startswith("worker: task queue") and line.endswith(f", corpus {tmp_path.resolve()}")
    unset = start_line(Settings(search_provider="local", research_corpus_dir=None))
    assert unset.endswith(", corpus the Python documentation (RESEARCH_CORPUS_DIR unset)")
    assert "corpus" not in start_line(
        Settings(search_provider="duckduckgo", search_fallback_providers="")
    )


@pytest.mark.parametrize("flags, notices", [([], 1), (["--no-engine-notice"], 0)])
def test_the_demos_worker_leaves_the_offline_notice_to_the_starter(
    clean_env: dict[str, str], flags: list[str], notices: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {**clean_env, "LLM_PROVIDER": "offline", "TEMPORAL_ADDRESS": "127.0.0.1:1"}
    done = subprocess.run(
        [sys.executable, "worker.py", *flags],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.count("offline engine") == notices, done.stderr

    from starter.cli import stack

    started: list[list[str]] = []
    monkeypatch.setattr(stack.subprocess, "Popen", lambda args, **kw: started.append(args))
    stack.start_worker(engine_notice=False)
    assert started[0][-1] == "--no-engine-notice"


def test_no_printed_hint_is_python_dash_m_starter() -> None:
    """Edges: `python -m starter ...` fails in a shell without the virtualenv; every hint
    names the program as `starter.cli.hints.program()` does (docstrings may say it)."""
    import ast
    from pathlib import Path

    import starter

    found = []
    for path in Path(starter.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        found += [
            f"{path.name}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and "python -m starter " in node.value
        ]
    assert found == []
