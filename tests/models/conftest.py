"""Fixtures for `make test-models`: llama.cpp's server with the model MODEL names, a worker on it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_end_to_end import Workers
from tests.models.llama import MODEL_NAME, LlamaServer, missing, running_llama


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    why = missing()
    if why:
        pytest.fail(why)  # `make test-models` installs both: a missing one is a broken install
    with running_llama(tmp_path_factory.mktemp("llama") / "server.log") as server:
        yield server


@pytest.fixture
def model_env(
    subprocess_env: dict[str, str], rust_notes: Path, llama: LlamaServer
) -> dict[str, str]:
    """A worker and starter on the real model, searching the project's own notes."""
    return {
        **subprocess_env,
        "TEMPORAL_TASK_QUEUE": f"tq-model-{uuid.uuid4().hex[:8]}",
        "LLM_PROVIDER": "openai",
        "OPENAI_BASE_URL": llama.base_url,
        "LLM_MODEL": MODEL_NAME,
        "RESEARCH_CORPUS_DIR": str(rust_notes),
        # Replies stream: the defaults let a slow model write for as long as it keeps writing.
    }


@pytest.fixture
def model_workers(model_env: dict[str, str]) -> Iterator[Workers]:
    started = Workers(model_env)
    yield started
    started.stop_all()
