"""Papers on the web app: the Sources select offers **Papers** with the worker's indexes (or why
not), and a report's numbered sources show a paper's authors and year and mark "retracted" and
"abstract only" (what a reader must know before trusting the citation)."""

from __future__ import annotations

import re

from settings import Settings
from starter.web.pages.request_form import controls
from starter.web.presentation.render import render_report
from starter.web.presentation.templating import templates
from starter.web.services.sources import sources_words, unavailable_sources
from tests.starter.web.reports import showcase_result
from workflows.models import Source


def test_the_sources_select_offers_papers_with_the_worker_s_indexes() -> None:
    words = dict(sources_words(Settings(_env_file=None, scholarly_providers="openalex,arxiv")))
    none = dict(sources_words(Settings(_env_file=None, scholarly_providers="")))
    (sources,) = [c for c in controls() if c.name == "sources"]

    assert words["papers"] == "Papers: OpenAlex, arXiv"
    assert none["papers"] == "Papers (not configured)"
    assert ("papers", "Papers") in sources.choices
    assert "SCHOLARLY_PROVIDERS" in unavailable_sources(
        Settings(_env_file=None, scholarly_providers="")
    ).get("papers", "")


def test_the_report_s_sources_mark_a_retracted_and_an_abstract_only_paper() -> None:
    result = showcase_result()
    paper = Source(
        id=len(result.sources) + 1,
        url="https://doi.org/10.5555/jdr.2018.13",
        title="Tide pool water cures disease",
        provider="openalex",
        doi="10.5555/jdr.2018.13",
        authors=["John Fabricator"],
        year=2018,
        read="abstract",
        retracted=True,
    )
    full = paper.model_copy(
        update={"id": paper.id + 1, "doi": "10.1/ok", "retracted": False, "read": "full_text"}
    )
    result.sources += [paper, full]

    page = templates.env.get_template("report.html").render(
        report=render_report(result), outcome="completed", id="r1", downloads=[]
    )

    item = re.search(rf'<li id="source-{paper.id}".*?</li>', page, re.S)
    assert item is not None
    assert "mark-retracted" in item.group(0) and "abstract only" in item.group(0)
    assert "John Fabricator (2018)" in item.group(0) and "mark-paper" in item.group(0)
    other = re.search(rf'<li id="source-{full.id}".*?</li>', page, re.S)
    assert other is not None and "retracted" not in other.group(0)
    assert "abstract only" not in other.group(0)
