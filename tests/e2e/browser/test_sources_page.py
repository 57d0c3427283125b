"""The home page's sources chooser and document upload in a real browser: a person
uploads a document, sees it listed, chooses "Your documents" and starts a research that searches
their documents; with JavaScript and without (the forms post)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.support import Seen, in_browser, shoot
from tests.starter.web.conftest import WebServer, WebWorker, running_app, web_config
from workflows.models import Sources

DOCUMENT = "# The Marrowick carillon\n\nThe Marrowick clocktower carillon has 41 bells.\n"


@pytest.fixture
def server(web_worker: WebWorker, tmp_path: Path) -> Iterator[WebServer]:
    with running_app(web_config(web_worker, research_data_dir=tmp_path / "data")) as running:
        yield running


def upload_and_ask(server: WebServer, document: Path, question: str, folder: Path, shots: bool):
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(f"{server.url}/")
        page.get_by_label("Document", exact=True).set_input_files(str(document))
        page.get_by_role("button", name="Upload document").click()
        page.wait_for_url(re.compile(r"/#documents$"))
        listed = page.locator(".document-list li").all_inner_texts()
        chooser = page.get_by_role("combobox", name="Sources")
        options = chooser.locator("option").all_inner_texts()
        chooser.select_option(value=Sources.DOCUMENTS.value)
        page.get_by_role("textbox", name="Question").fill(question)
        if shots:
            for width in (1300, 400):
                page.set_viewport_size({"width": width, "height": 900})
                shoot(page, f"home-sources-{width}", folder, full_page=True)
            page.set_viewport_size({"width": 1280, "height": 860})
        page.get_by_role("button", name="Start research").click()
        page.wait_for_url(re.compile(r"/research/research-"))
        return {
            "listed": listed,
            "options": options,
            "id": page.url.rsplit("/", 1)[-1],
            "problems": seen.problems(),
        }

    return scenario


@pytest.mark.parametrize("javascript", [True, False])
async def test_a_person_uploads_a_document_and_researches_only_their_documents(
    server: WebServer, web_worker: WebWorker, tmp_path: Path, javascript: bool
) -> None:
    document = tmp_path / "marrowick carillon.md"
    document.write_text(DOCUMENT)
    place = "Marrowick" if javascript else "Quillmoor"  # each research's own word
    question = f"How many bells does the {place} carillon have?"

    got = await in_browser(
        upload_and_ask(server, document, question, tmp_path, shots=javascript),
        java_script_enabled=javascript,
    )

    # each choice may say what it searches
    starts = ("Configured", "Web", "Your documents", "Web", "Papers")
    assert [o.startswith(w) for o, w in zip(got["options"], starts, strict=True)] == [True] * 5
    assert len(got["listed"]) == 1 and "marrowick carillon.md" in got["listed"][0]
    assert got["problems"] == []
    searches = await _searches_of(web_worker, place)
    assert searches and all(s.sources is Sources.DOCUMENTS for s in searches)
    assert all(s.owner == "local" for s in searches)


async def _searches_of(worker: WebWorker, word: str, timeout: float = 30) -> list[Any]:
    """The search activity's inputs for the research about WORD (the doubles record them)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [c for c in worker.script.calls["search"] if word.lower() in c.query.lower()]
        if found:
            return found
        await asyncio.sleep(0.2)
    return []
