"""Research over your own documents, end to end: the real worker process, offline engine and local
provider on a folder holding a PDF and a Word file (made here) whose facts appear nowhere else.

- questions about those facts cite those files (the PDF with its page);
- a file dropped into the folder while the worker runs is found by the next research, with no
  restart;
- hybrid: the same folder and a small web (a SearxNG-shaped API and the pages it finds, served
  here) in one research, with `SEARCH_PROVIDER=local SEARCH_STRATEGY=exploratory
  SEARCH_FALLBACK_PROVIDERS=searxng`; the report says which sources are local and which are web.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from tests.e2e.test_end_to_end import Workers
from tests.e2e.test_web_research import FakeSearxng
from tests.support.documents import make_docx, make_pdf
from tests.support.http_doubles import local_server, serving
from workflows.kit.citations import cited_ids
from workflows.models import Depth, ResearchRequest, ResearchResult, Stage
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

FILLER = {
    "gardening.md": "# Gardening\n\nTomatoes need full sun and regular watering. Mulch keeps the soil moist.\n",
    "cooking.md": "# Bread\n\nA sourdough starter is fed with flour and water every day before baking.\n",
    "travel.txt": "Trains between the two cities run every hour; the trip takes ninety minutes.\n",
}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "documents"
    (docs / "lab").mkdir(parents=True)
    for name, text in FILLER.items():
        (docs / name).write_text(text)
    (docs / "lab" / "veldmark-report.pdf").write_bytes(
        make_pdf(
            [
                ["Veldmark Institute annual report 2024.", "Prepared by the cryogenics group."],
                [
                    "The Veldmark cryostat reached a record temperature of 3.2 kelvin in March 2024.",
                    "The cryostat is cooled by a pulse tube refrigerator and a helium circuit.",
                ],
            ],
            title="Veldmark Institute Annual Report",
        )
    )
    (docs / "lab" / "quillfeather.docx").write_bytes(
        make_docx(
            [
                ("Title", "Quillfeather field notes"),
                ("heading 1", "Tern survey"),
                (
                    "p",
                    "The Quillfeather survey counted 1482 nesting terns on the island of Hallig Sudmoor.",
                ),
                ("p", "The terns nest on shell banks above the high tide line."),
            ],
            title="Quillfeather field notes",
        )
    )
    return docs


def _files(result: ResearchResult) -> list[str]:
    """The URLs (without the folder) of the sources the report cites."""
    by_id = {s.id: s.url for s in result.sources}
    return [by_id[n].rsplit("/", 1)[-1] for n in cited_ids(result.report_markdown) if n in by_id]


async def _research(client: Client, env: dict[str, str], question: str) -> ResearchResult:
    handle = await client.start_workflow(
        DeepResearchWorkflow.run,
        ResearchRequest(query=question, depth=Depth.LIGHT, max_clarifications=0),
        id=f"docs-{uuid.uuid4().hex[:8]}",
        task_queue=env["TEMPORAL_TASK_QUEUE"],
    )
    return await asyncio.wait_for(handle.result(), timeout=120)


async def test_questions_about_a_pdf_and_a_word_file_cite_them_and_a_new_file_is_found_without_restart(
    dev_client: Client, subprocess_env: dict[str, str], corpus: Path
) -> None:
    env = {**subprocess_env, "RESEARCH_CORPUS_DIR": str(corpus)}
    workers = Workers(env)
    workers.start()
    try:
        pdf = await _research(dev_client, env, "What temperature did the Veldmark cryostat reach?")
        docx = await _research(
            dev_client, env, "How many nesting terns did the Quillfeather survey count?"
        )

        assert pdf.outcome is Stage.COMPLETED and docx.outcome is Stage.COMPLETED
        assert "veldmark-report.pdf#page=2" in _files(pdf), pdf.report_markdown
        assert "3.2 kelvin" in pdf.report_markdown
        assert "Veldmark Institute Annual Report, page 2" in pdf.report_markdown
        assert "quillfeather.docx" in _files(docx), docx.report_markdown
        assert "1482 nesting terns" in docx.report_markdown
        assert "(local)" in docx.report_markdown

        # Dropped into the folder while the worker runs; the folder is looked at every 2 s at most.
        (corpus / "lab" / "lighthouse.md").write_text(
            "# Orrinford lighthouse\n\nThe Orrinford lighthouse keeper logged 97 storms in the winter of 1911.\n"
        )
        time.sleep(2.1)
        late = await _research(
            dev_client, env, "How many storms did the Orrinford lighthouse keeper log?"
        )

        assert "lighthouse.md" in _files(late), late.report_markdown
        assert "97 storms" in late.report_markdown
        assert workers.processes[0].poll() is None  # the same worker, never restarted
    finally:
        workers.stop_all()


class SmallWeb:
    """Two web pages about the cryostat, served on a loopback port."""

    PAGES = {
        "/cryostats": (
            "<html><head><title>How pulse tube cryostats work</title></head><body><h1>Pulse tubes</h1>"
            "<p>A pulse tube refrigerator cools a cryostat without moving parts at the cold end, "
            "which keeps vibration low for sensitive instruments.</p></body></html>"
        ),
        "/helium": (
            "<html><head><title>Helium circuits</title></head><body><h1>Helium</h1>"
            "<p>A closed helium circuit lets a cryostat run for years without topping up the gas.</p>"
            "</body></html>"
        ),
    }

    def __init__(self) -> None:
        pages = self.PAGES

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = pages.get(self.path.split("?")[0])
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write((body or "not found").encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = local_server(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def small_web() -> Iterator[tuple[SmallWeb, FakeSearxng]]:
    site = SmallWeb()
    with serving(site.server):
        results = [
            {
                "url": site.url + path,
                "title": title.split("<title>")[1].split("</title>")[0],
                "content": "cryostat pulse tube helium",
            }
            for path, title in SmallWeb.PAGES.items()
        ]
        searx = FakeSearxng(results)
        with serving(searx.server):
            yield site, searx


async def test_a_hybrid_research_cites_local_documents_and_web_pages_and_says_which_is_which(
    dev_client: Client,
    subprocess_env: dict[str, str],
    corpus: Path,
    small_web: tuple[SmallWeb, FakeSearxng],
) -> None:
    _, searx = small_web
    env = {
        **subprocess_env,
        "RESEARCH_CORPUS_DIR": str(corpus),
        "SEARCH_PROVIDER": "local",
        "SEARCH_STRATEGY": "exploratory",
        "SEARCH_FALLBACK_PROVIDERS": "searxng",
        "SEARXNG_URL": searx.url,
        "CRAWL_ALLOW_PRIVATE": "1",
        "CRAWL_HOST_GAP_S": "0",
    }
    workers = Workers(env)
    workers.start()
    try:
        result = await _research(
            dev_client, env, "How is the Veldmark cryostat cooled with a pulse tube and helium?"
        )
    finally:
        workers.stop_all()

    assert result.outcome is Stage.COMPLETED
    cited = {n for n in cited_ids(result.report_markdown)}
    providers = {s.provider for s in result.sources if s.id in cited}
    assert providers == {"local", "searxng"}, result.report_markdown
    assert searx.queries  # the web was asked alongside the documents
    sources = result.report_markdown.split("## Sources", 1)[1]
    local = [line for line in sources.splitlines() if "file://" in line]
    web = [line for line in sources.splitlines() if "http://127.0.0.1" in line]
    assert local and all(line.endswith("(local)") for line in local)
    assert web and all(line.endswith("(web, searxng)") for line in web)
