"""Issue 39, item 4: the page says what each Sources choice searches and whether a model is
configured, from the settings the worker published (one source of truth): under `make dev` the
worker searches only the Python documentation, and the web app knew nothing of it, so Sources =
Web started and then failed."""

from __future__ import annotations

from pathlib import Path

from config import Settings, as_the_worker_runs, publish_worker_settings
from starter.web.services import documents
from starter.web.services.sources import model_words, sources_words
from tests.starter.web.conftest import WebWorker, running_app, web_config


def test_each_choice_says_what_it_searches_and_no_model_is_said() -> None:
    local = Settings(_env_file=None, search_provider="local", llm_provider="offline")
    words = dict(sources_words(local))
    assert words["configured"] == "Configured: the Python documentation (no web search configured)"
    assert words["web"].startswith("Web (not available")
    assert words["documents"] == "Your documents and the Python documentation"
    assert "No model is configured" in model_words(local)

    web = Settings(
        _env_file=None,
        search_provider="duckduckgo",
        search_fallback_providers="local",
        research_corpus_dir=Path("/papers/tides"),
        llm_provider="openai",
        llm_model="llama3.1",
    )
    words = dict(sources_words(web))
    assert words["configured"] == "Configured: DuckDuckGo, then the documents in tides"
    assert (
        words["web"] == "Web: DuckDuckGo" and words["both"] == "Web (DuckDuckGo) and your documents"
    )
    assert model_words(web) == "Model: llama3.1 (openai)."


def test_the_web_app_reads_what_the_worker_published(tmp_path: Path) -> None:
    worker = Settings(
        _env_file=None, search_provider="local", research_data_dir=tmp_path, llm_provider="offline"
    )
    app = Settings(_env_file=None, search_provider="duckduckgo", research_data_dir=tmp_path)
    assert as_the_worker_runs(app).web_search_providers == ["duckduckgo"]  # nothing published
    publish_worker_settings(worker)
    assert as_the_worker_runs(app).web_search_providers == []
    assert as_the_worker_runs(app).research_db_url == app.research_db_url  # its own, the rest


async def test_web_sources_are_refused_before_the_research_starts_when_the_worker_has_none(
    web_worker: WebWorker, tmp_path: Path
) -> None:
    config = web_config(web_worker, research_data_dir=tmp_path, search_provider="duckduckgo")
    publish_worker_settings(config.model_copy(update={"search_provider": "local"}))
    with running_app(config) as server:
        async with server.client(None) as http:
            refused = await http.post(
                "/api/research", json={"question": "Tides?", "sources": "web"}
            )
    assert refused.status_code == 422
    assert "no web search provider is configured" in refused.json()["error"]
    # what the home page is given for its Sources chooser (pages/home.py renders the words)
    shown = dict((await documents.home(config, "local"))["sources"])
    assert shown["configured"] == "Configured: the Python documentation (no web search configured)"


def test_a_stopped_workers_settings_are_not_taken(tmp_path: Path) -> None:
    """A worker that stopped (its process on this machine gone) says nothing of the next one: a
    `make demo` run earlier must not decide what the web app offers now."""
    import json
    import subprocess
    import sys

    from config import worker_file

    app = Settings(_env_file=None, search_provider="duckduckgo", research_data_dir=tmp_path)
    publish_worker_settings(app.model_copy(update={"search_provider": "local"}))
    assert as_the_worker_runs(app).web_search_providers == []  # this process published: alive
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True
    )
    published = json.loads(worker_file(app).read_text())
    published["worker"]["pid"] = int(ended.stdout)
    worker_file(app).write_text(json.dumps(published))
    assert as_the_worker_runs(app).web_search_providers == ["duckduckgo"]
