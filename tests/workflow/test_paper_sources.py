"""Papers in the research's record (pure, no server): one work is one source, its metadata the
richest the indexes gave; the report's Sources list names a paper's authors and year and marks
what it read of it and a retraction, in the line format readers parse; a claim resting only on
retracted work is unsupported, saying so, and the critic lists it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from starter.client.citations_check import listed_sources
from workflows import events
from workflows.accounting.parts import Material
from workflows.checks import retractions
from workflows.events import EventLog
from workflows.kit.citations import origin, reference
from workflows.models import Claim, Critique, Paper, Source, Verdict

PUBLISHED = Paper(
    doi="10.5555/ttp.2021.42",
    authors=["Grace Hopper", "Edsger Dijkstra"],
    year=2021,
    venue="Transactions on Tide Pools",
    kind="article",
    found_in=["crossref"],
)
PREPRINT = Paper(
    doi="10.48550/arxiv.2101.00001",
    arxiv_id="2101.00001",
    authors=["Grace Hopper", "Edsger Dijkstra", "Barbara Liskov"],
    year=2020,
    kind="preprint",
    found_in=["arxiv"],
)


@pytest.fixture(autouse=True)
def workflow_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sources are announced at the workflow's time: a fixed one outside a workflow."""
    monkeypatch.setattr(events.workflow, "now", lambda: datetime(2026, 12, 2, tzinfo=UTC))


def _material() -> tuple[Material, EventLog]:
    return Material(), EventLog()


def test_the_same_doi_from_two_indexes_is_one_source_with_the_richest_metadata() -> None:
    material, log = _material()
    first = material.add_source(
        "https://doi.org/10.5555/ttp.2021.42",
        "Sparse tide pool transformers",
        "crossref",
        log,
        paper=PUBLISHED.model_copy(update={"authors": ["Grace Hopper"], "venue": ""}),
        read="abstract",
    )
    again = material.add_source(
        "https://openalex.org/W42",  # another index's URL for the same DOI
        "Sparse Tide Pool Transformers",
        "openalex",
        log,
        paper=PUBLISHED.model_copy(update={"doi": "https://doi.org/10.5555/TTP.2021.42"}),
        read="full_text",
    )

    assert again == first and len(material.sources) == 1
    source = material.sources[0]
    assert source.doi == "10.5555/ttp.2021.42" and source.year == 2021
    assert source.authors == ["Grace Hopper", "Edsger Dijkstra"]  # the longer list
    assert source.venue == "Transactions on Tide Pools" and source.read == "full_text"
    assert len([e for e in log.after(0) if e.kind == "source"]) == 1


def test_a_preprint_and_its_published_version_are_one_source() -> None:
    material, log = _material()
    first = material.add_source(
        "https://arxiv.org/abs/2101.00001", "Sparse", "arxiv", log, paper=PREPRINT, read="full_text"
    )
    published = PUBLISHED.model_copy(update={"arxiv_id": "2101.00001"})  # arXiv names both
    again = material.add_source(
        "https://doi.org/10.5555/ttp.2021.42", "Sparse", "crossref", log, paper=published
    )

    assert again == first and len(material.sources) == 1
    source = material.sources[0]
    assert source.doi == "10.5555/ttp.2021.42" and source.arxiv_id == "2101.00001"
    assert source.year == 2021 and source.kind == "article"  # the published version's
    assert source.read == "full_text"  # a full text read once stays read


def test_two_works_stay_two_sources_and_pages_dedup_by_url_as_before() -> None:
    material, log = _material()
    a = material.add_source(
        "https://doi.org/10.1/a", "A", "openalex", log, paper=Paper(doi="10.1/a")
    )
    b = material.add_source(
        "https://doi.org/10.1/b", "B", "openalex", log, paper=Paper(doi="10.1/b")
    )
    page = material.add_source("https://example.org/p", "Page", "searxng", log)
    same_page = material.add_source("https://example.org/p", "Page again", "searxng", log)

    assert [a, b, page] == [1, 2, 3] and same_page == page
    assert material.sources[0].read == "abstract"  # a paper not read in full: its abstract
    assert not material.sources[2].is_paper and material.sources[2].read == ""


def test_a_retraction_from_any_index_sticks() -> None:
    material, log = _material()
    material.add_source("https://doi.org/10.1/r", "R", "openalex", log, paper=Paper(doi="10.1/r"))
    material.add_source(
        "https://doi.org/10.1/r", "R", "crossref", log, paper=Paper(doi="10.1/r", retracted=True)
    )
    material.add_source("https://doi.org/10.1/r", "R", "arxiv", log, paper=Paper(doi="10.1/r"))

    assert material.sources[0].retracted


def _paper_source(**fields: object) -> Source:
    values: dict[str, object] = {
        "id": 3,
        "url": "https://doi.org/10.5555/ttp.2021.42",
        "title": "Sparse tide pool transformers",
        "provider": "openalex",
        "doi": "10.5555/ttp.2021.42",
        "authors": ["Grace Hopper", "Edsger W. Dijkstra", "Ludwig van Beethoven"],
        "year": 2021,
        "venue": "Transactions on Tide Pools",
        "read": "full_text",
    }
    return Source.model_validate({**values, **fields})


def test_a_paper_is_listed_with_its_authors_and_year() -> None:
    source = _paper_source()

    assert reference(source) == (
        "Hopper, G., Dijkstra, E. W., & van Beethoven, L. (2021). "
        "Sparse tide pool transformers. Transactions on Tide Pools."
    )
    assert origin(source) == "paper, openalex"


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"read": "abstract"}, "paper, openalex; abstract only"),
        ({"retracted": True}, "retracted; paper, openalex"),
        ({"retracted": True, "read": "abstract"}, "retracted; paper, openalex; abstract only"),
    ],
)
def test_the_entry_says_abstract_only_and_retracted(fields: dict[str, object], said: str) -> None:
    assert origin(_paper_source(**fields)) == said


def test_a_paper_s_line_stays_parseable_as_a_reference_line() -> None:
    source = _paper_source(title="Tide pools [7] - a review", retracted=True, read="abstract")
    line = f"- [{source.id}] {reference(source)} — {source.url} ({origin(source)})"

    (found,) = listed_sources(f"# Report\n\n## Sources\n\n{line}\n")

    assert found.id == 3 and found.where == source.url
    assert "Tide pools [7] - a review" in found.title and "(2021)" in found.title


def test_a_paper_without_authors_or_year_is_listed_by_title() -> None:
    source = _paper_source(authors=[], year=None, venue="")

    assert reference(source) == "Sparse tide pool transformers. (n.d.)."


def test_a_page_is_listed_as_before() -> None:
    page = Source(id=1, url="https://example.org", title="A page [2]", provider="searxng")

    assert reference(page) == "A page \\[2\\]" and origin(page) == "web, searxng"


def test_a_claim_resting_only_on_retracted_work_is_unsupported_and_the_critic_lists_it() -> None:
    sources = [
        _paper_source(id=1, retracted=True),
        Source(id=2, url="https://example.org", title="Page", provider="searxng"),
    ]
    only = Claim(text="Tide pools cure everything.", source_ids=[1], verdict=Verdict.SUPPORTED)
    mixed = Claim(text="Tide pools hold life.", source_ids=[1, 2], verdict=Verdict.SUPPORTED)
    critique = Critique(
        quality=0.8, quality_reason="ok", hallucination_risk=0.1, hallucination_reason="ok"
    )

    retractions.discount([only, mixed], sources)
    retractions.flag(critique, [only, mixed], sources)

    assert (
        only.verdict is Verdict.UNSUPPORTED and "retracted" in only.reason and "[1]" in only.reason
    )
    assert mixed.verdict is Verdict.SUPPORTED  # judged on its other source as usual
    (issue,) = critique.issues
    assert "retracted" in issue.text and "Tide pools cure everything." in issue.text
