"""Langfuse prompt management and the `prompts push` command, against the Langfuse stand-in
(tests/support/langfuse_server.py) over real sockets. Tracing of whole runs is in test_llm_research.py."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from activities import tracing
from activities.prompts.loader import FETCH_TIMEOUT_S, ROLES, WAIT_S, PromptBook, load_prompt
from settings import Settings
from tests.conftest import REPO
from tests.support.langfuse_server import FakeLangfuse, running_langfuse

SECRET = "sk-lf-test"
#: A wait no loaded machine outlasts, for tests of what is fetched rather than how fast: with the
#: default 0.5 s a busy CI machine's first fetch came too late and the file was used.
PATIENT_S = 30.0
VALUES = {
    "conversation_history": "User: hello",
    "clarification_count": 0,
    "max_clarifications": 2,
    "language": "English",
}


@pytest.fixture
def langfuse() -> Iterator[FakeLangfuse]:
    with running_langfuse(public_key=f"pk-lf-{uuid.uuid4().hex[:8]}", secret_key=SECRET) as server:
        yield server


def client_for(url: str, public_key: str) -> Any:
    return tracing.langfuse_for(
        Settings(
            _env_file=None,
            langfuse_host=url,
            langfuse_public_key=public_key,
            langfuse_secret_key=SECRET,
        )
    )


def public_key(langfuse: FakeLangfuse) -> str:
    import base64

    return base64.b64decode(langfuse.auth.split()[1]).decode().split(":")[0]


async def test_a_production_prompt_in_langfuse_replaces_the_file(langfuse: FakeLangfuse) -> None:
    local = load_prompt("agent_orchestrator").template
    langfuse.add_prompt("agent_orchestrator", "draft {{conversation_history}}", labels=["staging"])
    langfuse.add_prompt(
        "agent_orchestrator", "Managed. {{conversation_history}} JSON", labels=["production"]
    )
    book = PromptBook(client_for(langfuse.url, public_key(langfuse)), wait_s=PATIENT_S)

    prompt, text = await book.get("agent_orchestrator", VALUES)
    clarifier, _ = await book.get(
        "agent_clarification", {"conversation_history": "User: hello", "language": "English"}
    )

    assert text == "Managed. User: hello JSON\n" or text == "Managed. User: hello JSON"
    assert (prompt.source, prompt.version) == ("langfuse", 2)
    assert clarifier.source == "file"  # not managed in Langfuse: the repository's file
    assert local != prompt.template


async def test_a_langfuse_prompt_needing_unknown_values_falls_back_to_the_file(
    langfuse: FakeLangfuse, caplog: pytest.LogCaptureFixture
) -> None:
    langfuse.add_prompt("agent_orchestrator", "Uses {{something_else}}", labels=["production"])
    book = PromptBook(client_for(langfuse.url, public_key(langfuse)), wait_s=PATIENT_S)

    prompt, text = await book.get("agent_orchestrator", VALUES)

    assert prompt.source == "file" and "User: hello" in text
    assert "Langfuse prompt agent_orchestrator v1 is unusable" in caplog.text


async def test_an_unreachable_langfuse_costs_one_short_wait_then_none(unused_port: int) -> None:
    book = PromptBook(
        client_for(f"http://127.0.0.1:{unused_port}", f"pk-lf-{uuid.uuid4().hex[:8]}")
    )

    started = time.monotonic()
    for role in ("agent_orchestrator", "agent_orchestrator", "agent_clarification"):
        prompt, _ = await book.get(role, VALUES)
        assert prompt.source == "file"
    assert time.monotonic() - started < FETCH_TIMEOUT_S


async def test_a_hanging_langfuse_is_waited_for_once_at_most_half_a_second(
    hanging_port: int,
) -> None:
    book = PromptBook(
        client_for(f"http://127.0.0.1:{hanging_port}", f"pk-lf-{uuid.uuid4().hex[:8]}")
    )

    started = time.monotonic()
    first, _ = await book.get("agent_orchestrator", VALUES)
    first_s = time.monotonic() - started
    for _ in range(5):
        again, _ = await book.get("agent_orchestrator", VALUES)
    again_s = time.monotonic() - started - first_s

    assert first.source == again.source == "file"
    # One wait of WAIT_S, not the fetch's own timeout; then no wait at all while backing off
    # (five more waits would take five times as long as the first).
    assert WAIT_S * 0.8 <= first_s < FETCH_TIMEOUT_S
    assert again_s < first_s / 2


def test_no_langfuse_keys_means_no_client_at_all() -> None:
    assert tracing.langfuse_for(Settings(_env_file=None)) is None
    assert tracing.langfuse_for(Settings(_env_file=None, langfuse_public_key="pk-only")) is None


def test_the_trace_id_is_the_same_for_a_run_everywhere_and_differs_between_runs() -> None:
    first = tracing.trace_id("research-1", "run-a")
    assert first == tracing.trace_id("research-1", "run-a")
    assert len(first) == 32 and int(first, 16) >= 0
    assert first != tracing.trace_id("research-1", "run-b")


# --- prompts push -----------------------------------------------------------------------------------


def push(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starter", "prompts", "push"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def push_env(url: str, key: str, secret: str = SECRET) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    return {**env, "LANGFUSE_HOST": url, "LANGFUSE_PUBLIC_KEY": key, "LANGFUSE_SECRET_KEY": secret}


async def test_prompts_push_creates_then_leaves_alone_then_updates(langfuse: FakeLangfuse) -> None:
    env = push_env(langfuse.url, public_key(langfuse))

    first = await asyncio.to_thread(push, env)
    again = await asyncio.to_thread(push, env)
    langfuse.add_prompt("agent_planner", "edited in the Langfuse UI", labels=["production"])
    third = await asyncio.to_thread(push, env)

    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines() == [f"{role}: created version 1" for role in ROLES]
    assert again.stderr.splitlines() == [f"{role}: unchanged (version 1)" for role in ROLES]
    assert "agent_planner: updated to version 3" in third.stderr.splitlines()
    stored = langfuse.prompts["agent_orchestrator"][-1]
    assert stored["prompt"] == load_prompt("agent_orchestrator").template
    assert stored["labels"] == ["production"]
    assert stored["config"]["variables"] == list(load_prompt("agent_orchestrator").variables)


async def test_prompts_push_says_in_one_line_what_is_wrong(
    langfuse: FakeLangfuse, unused_port: int
) -> None:
    import os

    no_keys = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    runs = await asyncio.gather(
        asyncio.to_thread(push, no_keys),
        asyncio.to_thread(push, push_env(langfuse.url, public_key(langfuse), secret="sk-lf-wrong")),
        asyncio.to_thread(push, push_env(f"http://127.0.0.1:{unused_port}", "pk-lf-nowhere")),
    )

    messages = [run.stderr.strip() for run in runs]
    assert all(run.returncode == 2 for run in runs), messages
    assert all(m.count("\n") == 0 and "Traceback" not in m for m in messages), messages
    assert messages[0].startswith(
        "error: prompts push needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY"
    )
    assert (
        messages[1]
        == f"error: Langfuse at {langfuse.url} rejected the keys (check LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY)"
    )
    assert messages[2].startswith(f"error: cannot reach Langfuse at http://127.0.0.1:{unused_port}")
    assert "sk-lf-wrong" not in messages[1]


# --- ports ------------------------------------------------------------------------------------------


@pytest.fixture
def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def hanging_port() -> Iterator[int]:
    """A server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()
