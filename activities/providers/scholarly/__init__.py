"""The scholarly indexes, one module each, and the published rate limit of each.

`--sources papers` searches the indexes of SCHOLARLY_PROVIDERS, each through the `search_papers`
activity on the index's own task queue (activities/papers_search.py, worker.py); SEARCH_PROVIDER
and SEARCH_FALLBACK_PROVIDERS may name them too, as ordinary providers the strategies combine
with the web (activities/providers/strategies.py). Plain HTTP on the shared client of
activities/providers/http.py, no vendor SDK: docs/papers.md says why.

**The rates** (`RATES`): what each index publishes, kept twice. The worker that polls an index's
task queue sets the queue's dispatch rate (`max_task_queue_activities_per_second`), which the
Temporal server keeps across every worker; and every request waits its turn in the process
(`base.Pace`), because the server spreads that rate over the queue's partitions and may hand out
a small burst. A 429's Retry-After becomes Temporal's next retry delay and holds the process's
pace as long.
"""

from __future__ import annotations

from dataclasses import dataclass

from activities.providers.http import permanent
from activities.providers.scholarly.arxiv import Arxiv
from activities.providers.scholarly.base import ScholarlyIndex
from activities.providers.scholarly.crossref import Crossref
from activities.providers.scholarly.openalex import OpenAlex
from activities.providers.scholarly.pubmed import PubMed
from activities.providers.scholarly.semanticscholar import SemanticScholar
from settings import Settings

__all__ = [
    "INDEXES",
    "ONE_PARTITION",
    "RATES",
    "Rate",
    "ScholarlyIndex",
    "build_index",
    "configured_index",
    "configured_indexes",
]


@dataclass(frozen=True)
class Rate:
    """An index's published limit: requests a second, and how many requests one search makes."""

    requests_per_second: float
    source: str
    requests_per_search: int = 1
    #: Searches of this index one worker process runs at once.
    concurrency: int = 4

    @property
    def interval_s(self) -> float:
        """The least time between two requests of one process."""
        return 1 / self.requests_per_second

    @property
    def searches_per_second(self) -> float:
        """The task queue's dispatch rate: one search is `requests_per_search` requests."""
        return self.requests_per_second / self.requests_per_search


RATES: dict[str, Rate] = {
    "openalex": Rate(
        10,
        "docs.openalex.org, Rate limits and authentication: 10 requests a second and 100,000 a "
        "day per user",
    ),
    "arxiv": Rate(
        1 / 3,
        "info.arxiv.org/help/api/tou.html, Terms of Use for arXiv APIs: no more than one request "
        "every three seconds, on a single connection at a time",
        concurrency=1,
    ),
    "crossref": Rate(
        10,
        "crossref.org, REST API access and authentication: the polite pool (a mailto) 10 "
        "requests a second and 3 at once (the public pool 5 and 1)",
        concurrency=3,
    ),
    "semanticscholar": Rate(
        1,
        "semanticscholar.org/product/api: 1 request a second (an API key's introductory rate; "
        "keyless requests share one pool with every other caller)",
        concurrency=1,
    ),
    "pubmed": Rate(
        3,
        "NCBI, A General Introduction to the E-utilities (NBK25497): at most 3 requests a second "
        "without an API key; a search is esearch then efetch",
        requests_per_search=2,
        concurrency=2,
    ),
}

#: Temporal's dynamic config for the indexes' task queues: one partition each. The server divides
#: a queue's rate by its partitions (four by default, each with a burst of one), so arXiv's one
#: search every 3 s would be one every 12 s on each partition: a search may wait 12 s for its
#: partition while the others idle, and four may go at once. One partition keeps the rate as
#: published. dynamicconfig/deep-research.yaml sets it for the default queues (docs/papers.md).
ONE_PARTITION = {
    "matching.numTaskqueueReadPartitions": 1,
    "matching.numTaskqueueWritePartitions": 1,
}

INDEXES: dict[str, type[ScholarlyIndex]] = {
    "openalex": OpenAlex,
    "arxiv": Arxiv,
    "crossref": Crossref,
    "semanticscholar": SemanticScholar,
    "pubmed": PubMed,
}


def _url(name: str, config: Settings) -> str:
    return {
        "openalex": config.papers.openalex_url,
        "arxiv": config.papers.arxiv_url,
        "crossref": config.papers.crossref_url,
        "semanticscholar": config.papers.semantic_scholar_url,
        "pubmed": config.papers.pubmed_url,
    }[name]


def rate_of(name: str, config: Settings) -> Rate:
    """The index's rate for this deployment (Crossref's public pool without a contact)."""
    rate = RATES[name]
    if name == "crossref" and not config.papers.contact_email.strip():
        return Rate(5, rate.source, concurrency=1)
    return rate


def configured_indexes(config: Settings) -> list[str]:
    """SCHOLARLY_PROVIDERS, checked: a non-retryable one-line error for a name that is none."""
    names = config.papers.indexes
    for name in names:
        if name not in INDEXES:
            raise permanent(
                f"scholarly index {name!r} does not exist; SCHOLARLY_PROVIDERS takes: "
                f"{', '.join(INDEXES)}"
            )
    return names


def build_index(name: str, config: Settings) -> ScholarlyIndex:
    """The named index at its configured URL, paced at its rate (as an ordinary provider, too)."""
    if name not in INDEXES:
        raise permanent(
            f"scholarly index {name!r} does not exist; SCHOLARLY_PROVIDERS takes: {', '.join(INDEXES)}"
        )
    return INDEXES[name](
        _url(name, config),
        contact=config.papers.contact_email,
        interval_s=rate_of(name, config).interval_s,
    )


def configured_index(name: str, config: Settings) -> ScholarlyIndex:
    """An index a `papers` research may search: one of SCHOLARLY_PROVIDERS."""
    if name.strip().lower() not in configured_indexes(config):
        raise permanent(
            f"scholarly index {name!r} is not in SCHOLARLY_PROVIDERS "
            f"({config.papers.providers or 'empty'}): add it there to search it"
        )
    return build_index(name.strip().lower(), config)
