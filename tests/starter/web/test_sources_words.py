"""The page says what each Sources choice searches and whether a model is
configured, from the same settings the worker runs with: under `make dev` the worker searched only
the Python documentation while the web app knew nothing of it, so Sources = Web started and then
failed. Now the stack gives every process it starts one environment (as Kubernetes gives one
ConfigMap), and the web app reads in its own settings what the worker has; no settings file passes
between them."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from settings import Settings
from starter.cli import stack
from starter.web.pages.request_form import controls
from starter.web.presentation.templating import templates
from starter.web.services import documents
from starter.web.services.sources import model_words, sources_words, unavailable_sources
from tests.starter.web.conftest import WebWorker, running_app, web_config

#: What `make dev` sets in its one environment: restored after each test.
STACK_VARIABLES = (
    "SEARCH_PROVIDER",
    "TEMPORAL_ADDRESS",
    "TEMPORAL_CONFIG_FILE",
    "PYTHONUNBUFFERED",
    "RESEARCH_USER",
)


def test_each_choice_says_what_it_searches_and_no_model_is_said() -> None:
    local = Settings(_env_file=None, search_provider="local", llm_provider="offline")
    words = dict(sources_words(local))
    assert words["configured"] == "Configured: the Python documentation (no web search configured)"
    assert words["web"] == "Web (not configured)"
    assert set(unavailable_sources(local)) == {"web", "both"}
    assert "SEARCH_PROVIDER" in unavailable_sources(local)["web"]
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
    assert "web" not in unavailable_sources(web)


def test_a_choice_the_worker_cannot_search_is_offered_disabled_saying_why_under_it() -> None:
    """A whole sentence in an option was cut off on a phone and could still be chosen."""
    local = Settings(_env_file=None, search_provider="local", scholarly_providers="")
    offered = controls(
        {"sources": dict(sources_words(local))}, {"sources": unavailable_sources(local)}
    )
    html = templates.env.from_string(
        '{% from "request_fields.html" import request_fields %}{{ request_fields(controls) }}'
    ).render(controls=offered)
    options = dict(re.findall(r'<option value="(\w+)"([^>]*)>', html))
    assert {v for v, attrs in options.items() if "disabled" in attrs} == {"web", "both", "papers"}
    assert "disabled" not in options["configured"] + options["documents"]
    help_line = re.search(r'<p id="sources-help" class="help">([^<]*)</p>', html)
    assert help_line is not None
    assert "SEARCH_PROVIDER" in help_line.group(1) and "SCHOLARLY_PROVIDERS" in help_line.group(1)


def _unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in STACK_VARIABLES:
        monkeypatch.setenv(name, "")  # so the test's end puts back what was there, or nothing
        monkeypatch.delenv(name)
    monkeypatch.setattr(stack, "Settings", lambda: Settings(_env_file=None))


def test_make_devs_web_app_offers_what_its_worker_searches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no SEARCH_PROVIDER chosen, the stack's worker searches the bundled corpus, and so does
    the web app beside it: both read the one environment the stack sets up before it starts them."""
    _unset(monkeypatch)
    stack.one_environment(7399)
    web_app = Settings(_env_file=None)  # what `serve` reads, started by the stack
    assert web_app.search.provider == "local" and web_app.search.web_providers == []
    words = dict(sources_words(web_app))
    assert words["configured"] == "Configured: the Python documentation (no web search configured)"
    assert words["web"] == "Web (not configured)"
    assert web_app.temporal.connect_config()["target_host"] == "127.0.0.1:7399"
    assert os.environ["TEMPORAL_CONFIG_FILE"] == os.devnull  # no person's profile: its own server


def test_a_search_provider_chosen_for_make_dev_reaches_the_web_app_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _unset(monkeypatch)
    monkeypatch.setenv("SEARCH_PROVIDER", "duckduckgo")
    stack.one_environment(7399, owner="alice")
    web_app = Settings(_env_file=None)
    assert web_app.search.web_providers == ["duckduckgo"]
    assert dict(sources_words(web_app))["web"] == "Web: DuckDuckGo"
    assert web_app.access.user == "alice"  # the demo's research and its worker agree on the owner


async def test_web_sources_are_refused_before_the_research_starts_when_the_worker_has_none(
    web_worker: WebWorker, tmp_path: Path
) -> None:
    config = web_config(web_worker, research_data_dir=tmp_path, search_provider="local")
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
    assert not (tmp_path / "workers").exists()  # nothing published for another process to read
