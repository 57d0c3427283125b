"""`research --sources papers` end to end: the CLI, the real worker process (offline engine) and
its scholarly indexes' workers, against the loopback stand-in of OpenAlex, arXiv and Crossref
(tests/support/scholarly_server.py), whose open-access texts the crawler reads
(CRAWL_ALLOW_PRIVATE=1).

What a researcher checks: each source that is a paper carries its DOI, authors and year; one work
found by two indexes, or as a preprint and its published version, is one source; a retracted work
is flagged, and no claim rests on it alone as supported; a paper whose full text could not be read
says it was read from its abstract. And a papers research with no index configured, or no index
answering, says so in one line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_end_to_end import Workers
from tests.starter.cli.test_starter import error_line, starter
from tests.support.scholarly_server import ScholarlyServer, Traps, Work

pytestmark = pytest.mark.e2e

QUESTION = "Does tide pool water cure disease, and what do tide pool surveys find?"

WORKS = [
    Work(
        key="survey",
        title="Tide pool surveys with attention",
        authors=["Ada Lovelace", "Alan Turing"],
        year=2019,
        venue="Journal of Marine Computation",
        abstract="Tide pool surveys find anemones, crabs and snails in every tide pool studied.",
        doi="10.5555/JMC.2019.001",
        full_text="html",
        indexes=("openalex", "crossref"),
    ),
    Work(
        key="preprint",
        title="Sparse tide pool transformers",
        authors=["Grace Hopper", "Edsger Dijkstra"],
        year=2021,
        venue="Transactions on Tide Pools",
        abstract="Sparse transformers count tide pool species in surveys of tide pool water.",
        doi="10.5555/ttp.2021.42",
        arxiv_id="2101.00001",
        full_text="pdf",
        preprint_separately=True,
        indexes=("openalex", "arxiv", "crossref"),
    ),
    Work(
        key="retracted",
        title="Tide pool water cures disease",
        authors=["John Fabricator"],
        year=2018,
        venue="Journal of Doubtful Results",
        abstract="Tide pool water cures every disease, the authors claimed in tide pool trials.",
        doi="10.5555/jdr.2018.13",
        retracted=True,
        indexes=("openalex", "crossref"),
    ),
]


@pytest.fixture
def scholarly() -> Iterator[ScholarlyServer]:
    with ScholarlyServer(WORKS) as server:
        yield server


def _env(subprocess_env: dict[str, str], server: ScholarlyServer, **extra: str) -> dict[str, str]:
    return {
        **subprocess_env,
        **server.settings_env(),
        "SCHOLARLY_PROVIDERS": "openalex,arxiv,crossref",
        "CRAWL_HOST_GAP_S": "0",
        **extra,
    }


async def _research(env: dict[str, str], timeout: float = 180) -> Any:
    workers = Workers(env)
    workers.start()
    try:
        return await starter(
            "research", QUESTION, "--sources", "papers", "--depth", "light",
            "--max-clarifications", "0", "--review-report", "never", "--json",
            env=env, timeout=timeout,
        )  # fmt: skip
    finally:
        workers.stop_all()


def _by_doi(sources: list[dict[str, Any]], doi: str) -> list[dict[str, Any]]:
    return [s for s in sources if s.get("doi") == doi]


async def test_a_papers_research_cites_works_as_papers_one_source_per_work(
    subprocess_env: dict[str, str], scholarly: ScholarlyServer
) -> None:
    run = await _research(_env(subprocess_env, scholarly))

    assert run.code == 0, run.err
    result = json.loads(run.out)
    sources = result["sources"]
    papers = [s for s in sources if s.get("doi") or s.get("arxiv_id")]
    assert papers and len(papers) == len(sources), sources  # papers only: nothing from the web
    for paper in papers:
        assert paper["authors"] and paper["year"] and paper["read"] in ("full_text", "abstract")

    # one work, one source: OpenAlex and Crossref both list each; the preprint and its journal
    # version (OpenAlex lists them apart, arXiv names both) are one
    (survey,) = _by_doi(sources, "10.5555/jmc.2019.001")
    (preprint,) = [s for s in sources if s.get("arxiv_id") == "2101.00001"] or [None]
    assert preprint is not None and preprint["doi"] == "10.5555/ttp.2021.42", sources
    assert not [s for s in sources if s.get("doi", "").startswith("10.48550/")]
    assert survey["authors"] == ["Ada Lovelace", "Alan Turing"] and survey["year"] == 2019
    assert survey["read"] == "full_text"  # its open-access HTML was read through the crawler
    assert preprint["read"] == "full_text"  # its open-access PDF, extracted
    assert any(r.index == "oa" for r in scholarly.requests)

    # the retracted work: flagged, read from its abstract (it has no open-access copy), and never
    # the only support of a claim that stands
    (retracted,) = _by_doi(sources, "10.5555/jdr.2018.13")
    assert retracted["retracted"] is True and retracted["read"] == "abstract"
    alone = [c for c in result["claims"] if c["source_ids"] == [retracted["id"]]]
    assert alone, result["claims"]  # the question asks what it claimed
    for claim in alone:
        assert claim["verdict"] == "unsupported" and "retracted" in claim["reason"]
    issues = " ".join(i["text"] for i in result["critique"]["issues"])
    assert "retracted" in issues

    # the report's own list names authors and year; a retracted entry says so
    listing = result["report_markdown"].split("## Sources", 1)[-1]
    line = next(x for x in listing.splitlines() if f"[{survey['id']}]" in x)
    assert "Lovelace, A., & Turing, A. (2019)." in line and "https://doi.org/" in line
    for entry in re.findall(rf"^- \[{retracted['id']}\].*$", listing, re.M):
        assert "retracted" in entry and "abstract only" in entry


async def test_a_papers_research_with_no_index_configured_is_refused_in_one_line(
    subprocess_env: dict[str, str], scholarly: ScholarlyServer
) -> None:
    env = _env(subprocess_env, scholarly, SCHOLARLY_PROVIDERS="")

    run = await starter("research", QUESTION, "--sources", "papers", "--detach", env=env)

    assert run.code == 2 and run.out == ""
    [line] = run.err.strip().splitlines()
    assert "--sources papers: no scholarly index is configured" in line


async def test_a_papers_research_no_index_answers_ends_in_one_line(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    traps = Traps(status={"openalex": 503, "crossref": 503})
    with ScholarlyServer(WORKS, traps) as server:
        run = await _research(_env(subprocess_env, server, SCHOLARLY_PROVIDERS="openalex,crossref"))

    assert run.code != 0 and run.out.strip() in ("", "null")
    line = error_line(run)
    assert "no scholarly index answered" in line and "OpenAlex" in line and "Crossref" in line
