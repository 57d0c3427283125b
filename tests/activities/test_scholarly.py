"""The scholarly indexes as search providers, against the loopback stand-in that answers in each
index's documented format (tests/support/scholarly_server.py): what each format gives a paper,
the traps (one work in several indexes, a preprint and its published DOI, retractions, hostile
titles, names in several scripts, 429s, malformed replies), one work one hit, and the pace an
index asks for, kept by a real Temporal dev server's task queue and the worker's own limiter."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import pytest
import pytest_asyncio
from pydantic import BaseModel
from temporalio import workflow
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment, WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

import worker as worker_module
from activities.papers_search import search_papers
from activities.providers.scholarly import ONE_PARTITION, RATES
from activities.providers.scholarly.arxiv import Arxiv, search_terms
from activities.providers.scholarly.base import Pace, ScholarlyIndex
from activities.providers.scholarly.crossref import Crossref
from activities.providers.scholarly.openalex import OpenAlex
from activities.providers.scholarly.pubmed import PubMed
from activities.providers.scholarly.semanticscholar import SemanticScholar
from activities.providers.strategies import run_search
from settings import data_converter, settings
from starter.cli.stack import DEV_SERVER_DYNAMIC_CONFIG, dynamic_config_args
from tests.support.scholarly_server import (
    CATALOGUE,
    CONTACT,
    ScholarlyServer,
    Work,
    paced,
)
from workflows import roles
from workflows.activity_models import SearchHit, SearchOutput, SearchPapersInput, papers_task_queue
from workflows.kit.papers import merge_hits, merged, same_work
from workflows.record import Paper

Index = TypeVar("Index", bound=ScholarlyIndex)
HOSTILE = next(w for w in CATALOGUE if w.key == "hostile")
PREPRINT_ONLY = Work(
    key="fresh",
    title="Tide pool preprint without a journal",
    authors=["Solo Author"],
    year=2024,
    abstract="A tide pool preprint that no journal has published yet.",
    arxiv_id="2403.12345",
)
MEDICINE = Work(
    key="medicine",
    title="Tide pool medicine",
    authors=["Ann Lee", "WHO Tide Pool Consortium"],
    year=2017,
    venue="The Lancet",
    abstract="Tide pool medicine works, we thought.",
    doi="10.1016/S0140-6736(17)00001-X",
    pmid="28000001",
    retracted=True,
    full_text="html",
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScholarlyServer]:
    """The stand-in, and the worker's settings pointed at it (settings() is cached per process:
    cleared here, and again when the test's variables are gone)."""
    with ScholarlyServer([*CATALOGUE, PREPRINT_ONLY, MEDICINE]) as running:
        setenv(monkeypatch, **running.settings_env())
        yield running
    settings.cache_clear()


def setenv(monkeypatch: pytest.MonkeyPatch, **variables: str) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    settings.cache_clear()


def unpaced(server: ScholarlyServer, kind: type[Index], contact: str = CONTACT) -> Index:
    """An index at the stand-in without the published pace (tests of formats, not of pace)."""
    return kind(server.index_url(kind.name), contact=contact, interval_s=0)


def by_doi(hits: list[SearchHit]) -> dict[str, SearchHit]:
    return {hit.paper.doi: hit for hit in hits if hit.paper is not None}


# --- each format ------------------------------------------------------------------------------------


async def test_openalex_gives_the_works_metadata_abstract_in_order_and_open_access_copy(
    server: ScholarlyServer,
) -> None:
    hits = by_doi(await unpaced(server, OpenAlex).search("attention tide pools", 10))

    hit = hits["10.5555/jmc.2019.001"]  # registered as 10.5555/JMC.2019.001
    assert hit.url == "https://doi.org/10.5555/jmc.2019.001"
    assert hit.title == "Attention over tide pools" and hit.provider == "openalex"
    assert hit.paper is not None
    assert hit.paper.authors == ["Ada Lovelace", "Alan Turing"]
    assert (hit.paper.year, hit.paper.venue, hit.paper.kind) == (
        2019,
        "Journal of Marine Computation",
        "article",
    )
    assert hit.paper.abstract == "We study attention mechanisms in tide pool ecology surveys."
    assert hit.snippet == hit.paper.abstract
    assert hit.paper.full_text_url == f"{server.url}/oa/attention.html"
    assert hit.paper.found_in == ["openalex"] and not hit.paper.retracted
    assert hits["10.5555/jdr.2018.13"].paper.retracted  # type: ignore[union-attr]


async def test_openalex_and_crossref_are_sent_the_contact_and_every_index_a_user_agent_naming_it(
    server: ScholarlyServer,
) -> None:
    await unpaced(server, OpenAlex).search("tide", 5)
    await unpaced(server, Crossref).search("tide", 5)
    await unpaced(server, Arxiv).search("tide", 5)

    assert server.requests_to("openalex")[0].query["mailto"] == CONTACT
    assert server.requests_to("crossref")[0].query["mailto"] == CONTACT
    for request in server.requests:
        assert "DeepResearch" in request.headers["User-Agent"]
        assert f"mailto:{CONTACT}" in request.headers["User-Agent"]


async def test_without_a_contact_no_mailto_is_sent(server: ScholarlyServer) -> None:
    await unpaced(server, OpenAlex, contact="").search("tide", 5)
    assert "mailto" not in server.requests_to("openalex")[0].query
    assert "mailto" not in server.requests[0].headers["User-Agent"]


async def test_an_arxiv_entry_with_a_published_doi_is_cited_by_it_and_keeps_its_arxiv_id(
    server: ScholarlyServer,
) -> None:
    hits = await unpaced(server, Arxiv).search("sparse tide pool transformers", 10)

    published = by_doi(hits)["10.5555/ttp.2021.42"]
    assert published.url == "https://doi.org/10.5555/ttp.2021.42"
    assert published.paper is not None
    assert published.paper.arxiv_id == "2101.00001"  # the entry's id is .../abs/2101.00001v2
    assert published.paper.authors == ["Grace Hopper", "Edsger Dijkstra", "Barbara Liskov"]
    assert published.paper.venue == "Transactions on Tide Pools (2021)"  # arxiv:journal_ref
    assert published.paper.full_text_url == f"{server.url}/oa/preprint.pdf"
    assert published.paper.abstract.startswith("A preprint later published")  # no padding


async def test_an_arxiv_preprint_alone_is_its_abstract_page_and_its_arxiv_doi(
    server: ScholarlyServer,
) -> None:
    hits = await unpaced(server, Arxiv).search("preprint without a journal", 10)

    hit = next(h for h in hits if h.paper and h.paper.arxiv_id == "2403.12345")
    assert hit.url == "https://arxiv.org/abs/2403.12345"
    assert hit.paper is not None
    assert hit.paper.doi == "10.48550/arxiv.2403.12345" and hit.paper.kind == "preprint"
    assert hit.paper.full_text_url == "https://arxiv.org/pdf/2403.12345v2"
    query = server.requests_to("arxiv")[0].query
    assert query["search_query"] == "all:preprint AND all:without AND all:journal"


def test_arxiv_queries_drop_the_search_grammars_own_words_and_signs() -> None:
    assert search_terms('tide AND (pools) OR "ti:x"') == "all:tide AND all:pools"
    assert search_terms("") == ""


async def test_crossref_reads_jats_abstracts_names_and_the_issued_year(
    server: ScholarlyServer,
) -> None:
    hits = by_doi(await unpaced(server, Crossref).search("attention tide pools", 10))

    hit = hits["10.5555/jmc.2019.001"]
    assert hit.paper is not None
    assert hit.paper.abstract == "We study attention mechanisms in tide pool ecology surveys."
    assert hit.paper.authors == ["Ada Lovelace", "Alan Turing"] and hit.paper.year == 2019
    assert hit.paper.venue == "Journal of Marine Computation"
    assert not hit.paper.full_text_url  # Crossref holds no open-access copies


async def test_a_retracted_work_is_flagged_and_its_retraction_notice_is_no_source(
    server: ScholarlyServer,
) -> None:
    crossref = await unpaced(server, Crossref).search("tide pools cure everything", 10)
    openalex = await unpaced(server, OpenAlex).search("tide pools cure everything", 10)

    dois = [h.paper.doi for h in crossref if h.paper]
    assert "10.5555/jdr.2018.13.retraction" not in dois  # the notice (update-to) is dropped
    assert by_doi(crossref)["10.5555/jdr.2018.13"].paper.retracted  # type: ignore[union-attr]
    assert by_doi(openalex)["10.5555/jdr.2018.13"].paper.retracted  # type: ignore[union-attr]


def test_a_crossref_notice_flags_the_work_it_retracts_when_the_work_does_not_say_so() -> None:
    from activities.providers.scholarly.crossref import work_hits

    work = {"DOI": "10.5555/A", "title": ["A work"], "URL": "https://doi.org/10.5555/a"}
    notice = {
        "DOI": "10.5555/notice",
        "title": ["Retraction notice"],
        "update-to": [{"DOI": "10.5555/a", "type": "retraction"}],
    }
    corrected = {**work, "DOI": "10.5555/b", "updated-by": [{"DOI": "x", "type": "correction"}]}

    hits = work_hits([work, notice, corrected])

    assert [(h.paper.doi, h.paper.retracted) for h in hits if h.paper] == [
        ("10.5555/a", True),
        ("10.5555/b", False),  # a correction is no retraction
    ]


async def test_semantic_scholar_and_pubmed_answer_too(server: ScholarlyServer) -> None:
    s2 = await unpaced(server, SemanticScholar).search("tide pool medicine", 10)
    pubmed = await unpaced(server, PubMed).search("tide pool medicine", 10)

    doi = "10.1016/s0140-6736(17)00001-x"
    assert by_doi(s2)[doi].paper.full_text_url == f"{server.url}/oa/medicine.html"  # type: ignore[union-attr]
    hit = by_doi(pubmed)[doi]
    assert hit.paper is not None
    assert hit.paper.retracted  # publication type "Retracted Publication"
    assert hit.paper.authors == ["Ann Lee", "WHO Tide Pool Consortium"]
    assert (hit.paper.year, hit.paper.venue) == (2017, "The Lancet")
    assert [r.path for r in server.requests_to("pubmed")] == [
        "/pubmed/esearch.fcgi",
        "/pubmed/efetch.fcgi",
    ]


async def test_hostile_titles_and_names_in_any_script_come_through_as_written(
    server: ScholarlyServer,
) -> None:
    for kind in (OpenAlex, Crossref):
        hit = by_doi(await unpaced(server, kind).search("braces under_score", 10))[
            "10.5555/hostile_2020"
        ]
        assert hit.paper is not None
        assert hit.title == "Tide pools & 100% {braces} under_score }, note = {x} @comment{ bold"
        assert hit.paper.authors == HOSTILE.authors  # 李小龍, Мария Иванова, Zoë Ångström
        assert hit.paper.venue == "Proceedings of {Hostile} & Co"


async def test_nothing_found_is_an_empty_answer(server: ScholarlyServer) -> None:
    server.traps.empty = {"openalex", "arxiv", "crossref"}
    for kind in (OpenAlex, Arxiv, Crossref):
        assert await unpaced(server, kind).search("tide pools", 10) == []


# --- errors ---------------------------------------------------------------------------------------


async def test_a_429_asks_temporal_to_wait_as_long_as_retry_after_says(
    server: ScholarlyServer,
) -> None:
    server.traps.rate_limited = {"crossref"}
    server.traps.retry_after_s = 7
    index = unpaced(server, Crossref)

    with pytest.raises(ApplicationError) as raised:
        await index.search("tide", 5)

    assert raised.value.next_retry_delay == timedelta(seconds=7)
    assert not raised.value.non_retryable and raised.value.type == "SearchRateLimited"
    assert "crossref is rate limiting (429)" == raised.value.message
    assert index.pace._next - time.monotonic() > 6  # this process waits as long, too
    index.pace.hold(None)
    index.pace._next = 0
    assert await index.search("tide", 5)  # the next attempt is answered


async def test_malformed_xml_is_a_one_line_retryable_error_not_a_crash(
    server: ScholarlyServer,
) -> None:
    server.traps.malformed = {"arxiv", "openalex"}

    with pytest.raises(ApplicationError) as xml:
        await unpaced(server, Arxiv).search("tide", 5)
    with pytest.raises(ApplicationError) as json:
        await unpaced(server, OpenAlex).search("tide", 5)

    assert xml.value.message.startswith("arxiv answered with XML that does not parse (")
    assert "\n" not in xml.value.message and not xml.value.non_retryable
    assert json.value.message == "openalex answered with something that is not a JSON object"


async def test_xml_that_declares_entities_is_refused_unparsed(server: ScholarlyServer) -> None:
    index = unpaced(server, Arxiv)
    bomb = '<?xml version="1.0"?><!DOCTYPE f [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><f>&b;</f>'

    with pytest.raises(ApplicationError, match="declares entities"):
        index.xml(bomb)


async def test_an_unavailable_index_may_be_retried_and_a_rejected_query_may_not(
    server: ScholarlyServer,
) -> None:
    server.traps.status = {"openalex": 503, "crossref": 400}

    with pytest.raises(ApplicationError) as down:
        await unpaced(server, OpenAlex).search("tide", 5)
    with pytest.raises(ApplicationError) as rejected:
        await unpaced(server, Crossref).search("tide", 5)

    assert not down.value.non_retryable and "(503)" in down.value.message
    assert rejected.value.non_retryable and "(400)" in rejected.value.message


# --- the activity -----------------------------------------------------------------------------------


async def test_search_papers_asks_the_index_named_at_most_max_results(
    server: ScholarlyServer,
) -> None:
    out = await ActivityEnvironment().run(
        search_papers, SearchPapersInput(query="tide pools", max_results=3, index="crossref")
    )

    assert len(out.hits) == 3 and {h.provider for h in out.hits} == {"crossref"}
    assert [r.index for r in server.requests] == ["crossref"]
    assert server.requests[0].query["rows"] == "3"


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (
            "pubmed",
            "scholarly index 'pubmed' is not in SCHOLARLY_PROVIDERS (openalex,arxiv,crossref): "
            "add it there to search it",
        ),
        (
            "scopus",
            "scholarly index 'scopus' is not in SCHOLARLY_PROVIDERS (openalex,arxiv,crossref): "
            "add it there to search it",
        ),
    ],
)
async def test_an_index_not_configured_is_a_one_line_error_naming_the_variable(
    server: ScholarlyServer, monkeypatch: pytest.MonkeyPatch, index: str, message: str
) -> None:
    setenv(monkeypatch, SCHOLARLY_PROVIDERS="openalex,arxiv,crossref")
    with pytest.raises(ApplicationError) as raised:
        await ActivityEnvironment().run(
            search_papers, SearchPapersInput(query="tide", max_results=5, index=index)
        )
    assert raised.value.non_retryable and raised.value.message == message
    assert server.requests == []


async def test_an_unknown_name_in_scholarly_providers_names_the_ones_there_are(
    server: ScholarlyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    setenv(monkeypatch, SCHOLARLY_PROVIDERS="openalex,scopus")
    with pytest.raises(ApplicationError) as raised:
        await ActivityEnvironment().run(
            search_papers, SearchPapersInput(query="tide", max_results=5, index="openalex")
        )
    assert raised.value.message == (
        "scholarly index 'scopus' does not exist; SCHOLARLY_PROVIDERS takes: "
        "openalex, arxiv, crossref, semanticscholar, pubmed"
    )


async def test_an_index_is_an_ordinary_provider_the_strategies_merge_with_the_others(
    server: ScholarlyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    setenv(
        monkeypatch,
        SEARCH_PROVIDER="openalex",
        SEARCH_FALLBACK_PROVIDERS="crossref",
        SEARCH_STRATEGY="exploratory",
    )

    hits = await run_search("attention tide pools", 10, settings())

    attention = [h for h in hits if h.paper and h.paper.doi == "10.5555/jmc.2019.001"]
    assert len(attention) == 1
    assert attention[0].paper is not None
    assert attention[0].paper.found_in == ["openalex", "crossref"]


# --- one work, one source ---------------------------------------------------------------------------


def paper(**fields: object) -> Paper:
    return Paper.model_validate(fields)


def test_the_same_doi_or_arxiv_id_is_one_work_two_published_dois_are_two() -> None:
    journal = paper(doi="10.5555/X", found_in=["crossref"])
    assert same_work(journal, paper(doi="https://doi.org/10.5555/x"))
    assert same_work(paper(doi="10.48550/arXiv.2101.00001"), paper(arxiv_id="2101.00001v3"))
    assert same_work(paper(doi="10.5555/x", arxiv_id="2101.00001"), paper(arxiv_id="2101.00001"))
    conference = paper(doi="10.5555/conf", arxiv_id="2101.00001")
    assert not same_work(conference, paper(doi="10.5555/journal", arxiv_id="2101.00001"))
    assert not same_work(paper(), paper())


def test_merged_keeps_the_richest_metadata_and_the_published_doi() -> None:
    preprint = paper(
        doi="10.48550/arxiv.2101.00001",
        arxiv_id="2101.00001",
        authors=["G. Hopper", "E. Dijkstra", "B. Liskov"],
        year=2020,
        venue="arXiv",
        abstract="A longer abstract of the preprint, as arXiv has it.",
        full_text_url="https://arxiv.org/pdf/2101.00001",
        kind="preprint",
        found_in=["arxiv"],
    )
    journal = paper(
        doi="10.5555/ttp.2021.42",
        authors=["Grace Hopper"],
        year=2021,
        venue="Transactions on Tide Pools",
        retracted=True,
        abstract="Short.",
        kind="article",
        found_in=["crossref"],
    )

    both = merged(preprint, journal)

    assert both == merged(journal, preprint).model_copy(update={"found_in": both.found_in})
    assert both.doi == "10.5555/ttp.2021.42" and both.arxiv_id == "2101.00001"
    assert (both.year, both.venue, both.kind) == (2021, "Transactions on Tide Pools", "article")
    assert both.authors == ["G. Hopper", "E. Dijkstra", "B. Liskov"]
    assert both.abstract.startswith("A longer") and both.retracted
    assert both.full_text_url == "https://arxiv.org/pdf/2101.00001"
    assert both.found_in == ["arxiv", "crossref"]


def test_merge_hits_joins_a_preprint_listed_apart_through_the_entry_that_names_both() -> None:
    def hit(url: str, provider: str, **fields: object) -> SearchHit:
        return SearchHit(
            url=url,
            title="Sparse",
            snippet="",
            provider=provider,
            paper=paper(found_in=[provider], **fields),
        )

    web = SearchHit(url="https://example.org/", title="A page", snippet="", provider="brave")
    hits = [
        hit("https://doi.org/10.5555/ttp", "openalex", doi="10.5555/TTP", year=2021),
        web,
        hit("https://arxiv.org/abs/2101.00001", "openalex", doi="10.48550/arXiv.2101.00001"),
        hit("https://doi.org/10.5555/ttp", "arxiv", doi="10.5555/ttp", arxiv_id="2101.00001v2"),
        hit("https://doi.org/10.5555/other", "crossref", doi="10.5555/other"),
    ]

    out = merge_hits(hits)

    assert [h.url for h in out] == [
        "https://doi.org/10.5555/ttp",
        "https://example.org/",
        "https://doi.org/10.5555/other",
    ]
    first = out[0].paper
    assert first is not None
    assert (first.doi, first.arxiv_id, first.year) == ("10.5555/ttp", "2101.00001", 2021)
    assert first.found_in == ["openalex", "arxiv"]


async def test_the_catalogue_across_indexes_is_one_source_per_work(server: ScholarlyServer) -> None:
    found = []
    for kind in (OpenAlex, Arxiv, Crossref):
        found += await unpaced(server, kind).search("tide pools", 20)

    works = merge_hits(found)

    sparse = [h for h in works if h.paper and h.paper.arxiv_id == "2101.00001"]
    assert len(sparse) == 1
    assert sparse[0].paper is not None
    assert sparse[0].paper.found_in == ["openalex", "arxiv", "crossref"]
    retracted = [h for h in works if h.paper and h.paper.doi == "10.5555/jdr.2018.13"]
    assert len(retracted) == 1 and retracted[0].paper.retracted  # type: ignore[union-attr]
    assert len({h.url for h in works}) == len(works)


# --- the pace ---------------------------------------------------------------------------------------


async def test_the_process_pace_spaces_concurrent_requests() -> None:
    pace = Pace(0.3)
    started = time.monotonic()
    times: list[float] = []

    async def one() -> None:
        await pace.wait()
        times.append(time.monotonic() - started)

    await asyncio.gather(*(one() for _ in range(3)))

    gaps = [b - a for a, b in zip(sorted(times), sorted(times)[1:], strict=False)]
    assert all(gap >= 0.29 for gap in gaps), gaps


class Asks(BaseModel):
    queue: str
    index: str
    count: int


@workflow.defn(sandboxed=False)
class SearchAnIndex:
    """COUNT searches of one index at once, as the steps of several researches would ask."""

    @workflow.run
    async def run(self, asks: Asks) -> list[int]:
        searches = [
            roles.SEARCH_PAPERS.run(
                SearchPapersInput(query=f"tide pools {n}", max_results=3, index=asks.index),
                task_queue=asks.queue,
            )
            for n in range(asks.count)
        ]
        answers: list[SearchOutput] = list(await asyncio.gather(*searches))
        return [len(a.hits) for a in answers]


@pytest_asyncio.fixture(scope="module")
async def one_partition() -> AsyncIterator[Client]:
    """A dev server configured as docs/papers.md asks of a cluster: one partition per task queue
    (the server splits a queue's rate over its partitions, four by default, so arXiv's 1/3 a
    second would be 1/12 a second on each, and a search could wait 12 s for its partition)."""
    env = await WorkflowEnvironment.start_local(
        data_converter=data_converter(),
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        dev_server_log_level="error",
        dev_server_extra_args=dynamic_config_args({**DEV_SERVER_DYNAMIC_CONFIG, **ONE_PARTITION}),
    )
    try:
        yield env.client
    finally:
        await env.shutdown()


async def search_on_a_dev_server(
    client: Client, monkeypatch: pytest.MonkeyPatch, index: str, count: int
) -> tuple[list[int], list[Worker]]:
    """COUNT searches of INDEX through its task queue, served by worker.py's paper worker."""
    queue = f"tq-papers-{uuid.uuid4().hex[:8]}"
    setenv(monkeypatch, TEMPORAL_TASK_QUEUE=queue, SCHOLARLY_PROVIDERS=index)
    papers = worker_module.build_paper_workers(client, settings())
    async with (
        Worker(
            client,
            task_queue=queue,
            workflows=[SearchAnIndex],
            workflow_runner=UnsandboxedWorkflowRunner(),
        ),
        papers[0],
    ):
        found = await client.execute_workflow(
            SearchAnIndex.run,
            Asks(queue=papers_task_queue(queue, index), index=index, count=count),
            id=f"papers-{uuid.uuid4().hex[:8]}",
            task_queue=queue,
            execution_timeout=timedelta(seconds=60),
        )
    return found, papers


async def test_concurrent_arxiv_searches_reach_arxiv_three_seconds_apart(
    one_partition: Client, server: ScholarlyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    found, papers = await search_on_a_dev_server(one_partition, monkeypatch, "arxiv", 3)

    assert found == [2, 2, 2]  # the preprint with its journal version, and the fresh one
    config = papers[0].config()
    assert config["task_queue"].endswith("-papers-arxiv")
    assert config["max_task_queue_activities_per_second"] == pytest.approx(1 / 3)
    gaps = list(paced(server.requests_to("arxiv")))
    assert len(gaps) == 2
    assert all(gap >= RATES["arxiv"].interval_s - 0.1 for gap in gaps), gaps


async def test_a_rate_limited_search_is_retried_after_the_wait_the_index_asked_for(
    one_partition: Client, server: ScholarlyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Temporal's next attempt comes after Retry-After (2 s), not the policy's 1 s backoff."""
    server.traps.rate_limited = {"crossref"}
    server.traps.retry_after_s = 2

    found, _ = await search_on_a_dev_server(one_partition, monkeypatch, "crossref", 1)

    assert found == [3]
    first, second = server.requests_to("crossref")
    assert second.at - first.at >= 1.9
