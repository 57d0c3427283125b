"""Choosing where a research searches: `web` never answers from the local corpus,
`documents` never asks the web and finds the person's own uploads (and only theirs), `both` merges
the two. Real SearxNG-like HTTP doubles on loopback, real files, real SQLite FTS5 indexes."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.corpus import uploads
from activities.pages import read_document
from activities.providers.strategies import run_search
from settings import Settings
from tests.activities.test_web_search import Web, failure, serve, web  # noqa: F401 - fixtures
from workflows.activity_models import SearchInput
from workflows.models import Sources

SEARX_HITS = [("https://searx.example/one", "searxng"), ("https://searx.example/two", "searxng")]


def _config(web: Web, tmp_path: Path, provider: str, fallbacks: str = "", **more) -> Settings:
    docs = tmp_path / "docs"
    if not docs.exists():
        docs.mkdir()
        (docs / "moon.md").write_text(
            "# Tidal locking\n\nThe Moon is tidally locked: one face always points at us.\n"
        )
    return web.config(
        provider,
        fallbacks,
        research_corpus_dir=docs,
        research_index_dir=tmp_path / "index",
        research_data_dir=tmp_path / "data",
        **more,
    )


def _upload(config: Settings, owner: str, name: str, text: str) -> str:
    saved = uploads.save(uploads.uploads_root(config.library.data_dir), owner, name, text.encode())
    folder = uploads.owner_folder(uploads.uploads_root(config.library.data_dir), owner)
    return (folder / saved.id / saved.name).as_uri()


@pytest.mark.parametrize(
    ("provider", "fallbacks", "strategy"),
    [
        ("local", "searxng", "fallback"),  # the documents would answer first
        ("local", "searxng", "exploratory"),  # the documents would be merged in
        ("local", "searxng", "conservative"),  # the first web provider, not local
        ("searxng", "local", "fallback"),
    ],
)
async def test_web_sources_never_answer_from_the_local_corpus(
    web: Web, tmp_path: Path, provider: str, fallbacks: str, strategy: str
) -> None:
    config = _config(web, tmp_path, provider, fallbacks, search_strategy=strategy)

    hits = await run_search("tidally locked moon", 5, config, Sources.WEB)

    assert [(h.url, h.provider) for h in hits] == SEARX_HITS


async def test_web_sources_with_only_local_configured_are_refused_in_one_line(
    web: Web, tmp_path: Path
) -> None:
    config = _config(web, tmp_path, "local")

    error = await failure(run_search("tidally locked moon", 5, config, Sources.WEB))

    assert error.non_retryable
    assert error.message.startswith("no web search provider is configured")
    assert "\n" not in error.message


async def test_documents_sources_never_ask_the_web_and_find_the_persons_uploads(
    web: Web, tmp_path: Path
) -> None:
    config = _config(web, tmp_path, "searxng")
    mine = _upload(config, "ada", "quokka.md", "# Quokka census\n\nRottnest quokkas number 12,000.")

    hits = await run_search("quokka census rottnest", 5, config, Sources.DOCUMENTS, "ada")
    moon = await run_search("tidally locked moon", 5, config, Sources.DOCUMENTS, "ada")

    assert [(h.url, h.title, h.provider) for h in hits] == [(mine, "Quokka census", "local")]
    assert [h.url for h in moon] == [(tmp_path / "docs" / "moon.md").as_uri()]
    assert web.searxng.requests == []


async def test_another_persons_uploads_are_never_searched(web: Web, tmp_path: Path) -> None:
    config = _config(web, tmp_path, "local")
    _upload(config, "ada", "quokka.md", "# Quokka census\n\nRottnest quokkas number 12,000.")

    assert await run_search("quokka census rottnest", 5, config, Sources.DOCUMENTS, "bob") == []
    assert await run_search("quokka census rottnest", 5, config) == []  # configured: corpus only


async def test_both_sources_merge_the_documents_and_the_web(web: Web, tmp_path: Path) -> None:
    config = _config(web, tmp_path, "searxng")
    mine = _upload(config, "ada", "quokka.md", "# Quokka census\n\nRottnest quokkas number 12,000.")

    hits = await run_search("quokka census rottnest", 5, config, Sources.BOTH, "ada")

    assert [(h.url, h.provider) for h in hits] == [(mine, "local"), *SEARX_HITS]


async def test_an_uploaded_document_found_by_a_search_can_be_read(
    web: Web, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(web, tmp_path, "local")
    url = _upload(config, "ada", "quokka.md", "# Quokka census\n\nRottnest quokkas number 12,000.")
    monkeypatch.setattr("activities.pages.settings", lambda: config)

    page = read_document(url, "quokka", 2000)

    assert page is not None and page.title == "Quokka census" and "12,000" in page.text
    assert read_document(url.replace("quokka.md", "../../../x.md"), "quokka", 2000) is None


def test_a_research_that_does_not_choose_records_the_same_search_input_as_before() -> None:
    from settings import data_converter

    payload = data_converter().payload_converter.to_payloads([SearchInput(query="q")])[0]

    assert payload.data == b'{"query":"q","max_results":5}'
