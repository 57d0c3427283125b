"""A paper read as a paper (`read_page` with `paper`): its open-access full text through the
crawler when it can be read, else its abstract, saying which; with neither, an error as for an
unreadable page. Against the scholarly stand-in's full texts on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from temporalio.testing import ActivityEnvironment

from activities.pages import read_page
from activities.web import crawler
from settings import Settings
from tests.support.scholarly_server import CATALOGUE, ScholarlyServer, Work
from workflows.activity_models import ReadPageInput, ReadPageOutput
from workflows.models import Paper

DOI_URL = "https://doi.org/10.5555/jmc.2019.001"


@pytest.fixture
def server() -> Iterator[ScholarlyServer]:
    with ScholarlyServer() as running:
        yield running


@pytest.fixture
async def allow_private(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """The process-wide crawler, allowed to read 127.0.0.1 (where the stand-in lives)."""
    config = Settings(
        _env_file=None, crawl_allow_private=True, crawl_page_timeout_s=5.0, crawl_host_gap_s=0.0
    )
    monkeypatch.setattr(crawler, "settings", lambda: config)
    await crawler.reset()
    yield
    await crawler.reset()


def _work(key: str) -> Work:
    return next(w for w in CATALOGUE if w.key == key)


async def _read(paper: Paper, url: str = DOI_URL) -> ReadPageOutput:
    return await ActivityEnvironment().run(
        read_page, ReadPageInput(url=url, focus="tide pool attention", paper=paper)
    )


async def test_an_open_access_html_full_text_is_read_and_said_so(
    server: ScholarlyServer, allow_private: None
) -> None:
    work = _work("attention")
    page = await _read(
        Paper(doi=work.doi, full_text_url=server.full_text_url(work), abstract=work.abstract)
    )

    assert page.error is None and page.read == "full_text"
    assert work.full_text_body() in page.text  # only the full text has it
    assert page.url == DOI_URL  # the source is the work, not the copy read
    assert page.digest


async def test_a_pdf_full_text_is_extracted(server: ScholarlyServer, allow_private: None) -> None:
    work = _work("preprint")
    page = await _read(Paper(arxiv_id=work.arxiv_id, full_text_url=server.full_text_url(work)))

    assert page.read == "full_text" and work.full_text_body() in page.text


async def test_a_full_text_that_is_gone_gives_way_to_the_abstract(
    server: ScholarlyServer, allow_private: None
) -> None:
    work = _work("nowhere")  # its open-access link answers 404
    page = await _read(
        Paper(doi=work.doi, full_text_url=server.full_text_url(work), abstract=work.abstract)
    )

    assert page.error is None and page.read == "abstract"
    assert page.text == work.abstract


async def test_the_crawler_s_rules_hold_for_a_full_text(server: ScholarlyServer) -> None:
    """Without CRAWL_ALLOW_PRIVATE a loopback full text is refused: the abstract is read."""
    await crawler.reset()
    work = _work("attention")
    page = await _read(
        Paper(doi=work.doi, full_text_url=server.full_text_url(work), abstract=work.abstract)
    )

    assert page.read == "abstract" and work.full_text_body() not in page.text


async def test_no_full_text_and_no_abstract_is_an_unreadable_source() -> None:
    page = await _read(Paper(doi="10.5555/empty"))

    assert page.error and not page.text and page.read == ""
