"""Web search: the strategy that combines the providers the researcher can ask (seed 004).

- **Strategies switch providers; Temporal retries the search.** `fallback` asks the next provider
  at once rather than after Temporal's backoff; only when every provider has failed does the
  search fail, and then it is retryable unless every failure was permanent.
- **Endpoints are settings.** TAVILY_BASE_URL and BRAVE_BASE_URL (Settings) let a proxy or an
  end-to-end test's double stand in; production leaves them unset.

- **The research may choose its sources** (`SearchInput.sources`): `configured` is all of the above;
  `web` the configured providers but `local` (refused in one line when that leaves none); `documents`
  the local corpus plus the person's uploaded documents; `both` the two, merged like `exploratory`.

The providers are one module each (searxng, tavily, brave, duckduckgo, local, and the scholarly
indexes of activities/providers/scholarly/) on the HTTP client and error classification of
activities/providers/http.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from enum import Enum
from typing import Protocol

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.providers.brave import BRAVE_URL, Brave
from activities.providers.duckduckgo import DuckDuckGo
from activities.providers.http import api_key, canonical_url, permanent, unique_hits
from activities.providers.local import Documents, Local, open_corpus_of, open_uploads_of
from activities.providers.scholarly import INDEXES, build_index
from activities.providers.searxng import Searxng
from activities.providers.tavily import TAVILY_URL, Tavily
from settings import Settings
from workflows.activity_models import SearchHit
from workflows.kit.papers import merge_hits
from workflows.models import Sources
from workflows.text.redaction import redact

__all__ = [
    "PROVIDERS",
    "Brave",
    "DuckDuckGo",
    "Local",
    "Searxng",
    "SearchProvider",
    "Strategy",
    "Tavily",
    "build_provider",
    "canonical_url",
    "check_search_config",
    "configured_providers",
    "documents_provider",
    "run_search",
]


class Strategy(str, Enum):
    """How the providers are combined (seed 004's strategy profiles)."""

    CONSERVATIVE = "conservative"  # SEARCH_PROVIDER only
    FALLBACK = "fallback"  # the next provider when one fails or finds nothing
    EXPLORATORY = "exploratory"  # every provider at once, merged by rank


class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, max_results: int) -> list[SearchHit]: ...


# --- the strategy ---------------------------------------------------------------------------------


async def run_search(
    query: str,
    max_results: int,
    config: Settings,
    sources: Sources = Sources.CONFIGURED,
    owner: str | None = None,
) -> list[SearchHit]:
    """Hits for `query` from the providers SOURCES names: the configured ones combined as
    SEARCH_STRATEGY says (`configured`), only the web ones among them (`web`), the local corpus
    and OWNER's uploaded documents (`documents`), or the web and the documents merged (`both`)."""
    max_results = max(1, max_results)
    if sources is Sources.CONFIGURED:
        return await Chain(*configured_providers(config)).search(query, max_results)
    chosen: list[SearchProvider] = []
    if sources.documents:
        chosen.append(documents_provider(config, owner))
    if sources.web:
        chosen.append(Chain(*web_providers(config)))
    if len(chosen) == 1:
        return await chosen[0].search(query, max_results)
    return await _explore(chosen, query, max_results)


class Chain:
    """Providers combined by a strategy, searched as one provider."""

    name = "web"

    def __init__(self, strategy: Strategy, providers: list[SearchProvider]) -> None:
        self.strategy, self.providers = strategy, providers

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        if self.strategy is Strategy.EXPLORATORY:
            return await _explore(self.providers, query, max_results)
        return await _first_with_hits(self.providers, query, max_results)  # conservative: one


def check_search_config(config: Settings) -> None:
    """Fail at worker start, in one line, rather than at a research's first search."""
    configured_providers(config)


def configured_providers(config: Settings) -> tuple[Strategy, list[SearchProvider]]:
    """The strategy and the providers it uses, in order (a missing key fails even a fallback
    provider: a chain that cannot work as configured should be fixed, not silently shortened)."""
    strategy = _strategy(config)
    names = config.search.provider_names(strategy is Strategy.CONSERVATIVE)
    return strategy, [build_provider(name, config) for name in names]


def web_providers(config: Settings) -> tuple[Strategy, list[SearchProvider]]:
    """The configured providers but `local`, for a research that asked for the web only."""
    names = config.search.web_providers
    if not names:
        raise permanent(
            "no web search provider is configured (SEARCH_PROVIDER and SEARCH_FALLBACK_PROVIDERS "
            "name only local): add one, such as duckduckgo, or search your documents instead"
        )
    return _strategy(config), [build_provider(name, config) for name in names]


def documents_provider(config: Settings, owner: str | None) -> SearchProvider:
    """The local corpus and OWNER's uploaded documents (activities/corpus/uploads.py)."""
    _corpus_folder_checked(config)
    corpora = [lambda: open_uploads_of(config, owner)] if owner else []
    return Documents([*corpora, lambda: open_corpus_of(config)])


def _strategy(config: Settings) -> Strategy:
    try:
        return Strategy(config.search.strategy.strip().lower())
    except ValueError:
        raise permanent(
            f"search strategy {config.search.strategy!r} does not exist; "
            f"set SEARCH_STRATEGY to one of: {', '.join(s.value for s in Strategy)}"
        ) from None


def _corpus_folder_checked(config: Settings) -> None:
    folder = config.corpus.folder
    if folder is not None and not folder.is_dir():
        raise permanent(
            f"RESEARCH_CORPUS_DIR {str(folder)!r} is not a folder; point it at your documents or unset it"
        )


async def _first_with_hits(
    providers: list[SearchProvider], query: str, max_results: int
) -> list[SearchHit]:
    """Providers in order until one finds something. Nothing found by a provider that answered is
    an honest answer: it is returned (empty) rather than retried when the others failed."""
    errors: list[BaseException] = []
    answered = False
    for i, provider in enumerate(providers):
        try:
            hits = await provider.search(query, max_results)
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, the next provider may still answer
            errors.append(exc)
            if i + 1 < len(providers):
                activity.logger.warning(
                    "search: %s failed (%s); trying %s",
                    provider.name,
                    redact(str(exc)),
                    providers[i + 1].name,
                )
            continue
        if hits:
            return hits
        answered = True
    if answered or not errors:
        return []
    raise _all_failed(errors)


async def _explore(
    providers: list[SearchProvider], query: str, max_results: int
) -> list[SearchHit]:
    """Every provider at once; their hits interleaved by rank (each provider's best first), one per
    page, at most `max_results` (what the workflow's history budget assumes). Partial failures are
    logged and tolerated: the others' hits are still a good answer."""
    answers = await asyncio.gather(
        *(p.search(query, max_results) for p in providers), return_exceptions=True
    )
    found = [a for a in answers if isinstance(a, list)]
    errors = [a for a in answers if isinstance(a, BaseException)]
    if not found:
        raise _all_failed(errors)
    for provider, answer in zip(providers, answers, strict=False):
        if isinstance(answer, BaseException):
            activity.logger.warning(
                "search: %s failed (%s); using the other providers",
                provider.name,
                redact(str(answer)),
            )
    by_rank = (hits[rank] for rank in range(max_results) for hits in found if rank < len(hits))
    return unique_hits(merge_hits(by_rank), max_results)  # one work found by two indexes: one hit


def _all_failed(errors: list[BaseException]) -> BaseException:
    """Retryable unless every provider failed for good: one that may recover is worth a retry."""
    if len(errors) == 1:
        return errors[0]
    failures = [
        e
        if isinstance(e, ApplicationError)
        else ApplicationError(redact(f"{type(e).__name__}: {e}"))
        for e in errors
    ]
    for_good = all(f.non_retryable for f in failures)
    delays = [f.next_retry_delay for f in failures if f.next_retry_delay]
    types = {f.type for f in failures}
    return ApplicationError(
        "every search provider failed: " + "; ".join(f.message for f in failures),
        type=types.pop() if len(types) == 1 else "SearchFailed",
        non_retryable=for_good,
        next_retry_delay=None if for_good or not delays else max(delays),
    )


def _searxng(config: Settings) -> SearchProvider:
    if not config.search.searxng_url:
        raise permanent(
            "the searxng provider needs SEARXNG_URL, the address of your SearxNG instance"
        )
    return Searxng(config.search.searxng_url)


def _tavily(config: Settings) -> SearchProvider:
    key = api_key(config.search.tavily_api_key, "tavily", "TAVILY_API_KEY")
    return Tavily(key, base_url=config.search.tavily_base_url or TAVILY_URL)


def _brave(config: Settings) -> SearchProvider:
    key = api_key(config.search.brave_api_key, "brave", "BRAVE_API_KEY")
    return Brave(key, base_url=config.search.brave_base_url or BRAVE_URL)


def _local(config: Settings) -> SearchProvider:
    _corpus_folder_checked(config)
    return Local(lambda: open_corpus_of(config))


def _index(name: str) -> Callable[[Settings], SearchProvider]:
    return lambda config: build_index(name, config)


#: Every provider by the name SEARCH_PROVIDER and SEARCH_FALLBACK_PROVIDERS use, built from the
#: settings (a new provider: its module in activities/providers/ and its row here).
BUILDERS: dict[str, Callable[[Settings], SearchProvider]] = {
    "duckduckgo": lambda config: DuckDuckGo(),
    "searxng": _searxng,
    "tavily": _tavily,
    "brave": _brave,
    "local": _local,
    # The scholarly indexes (activities/providers/scholarly/), paced in the process at their
    # published rates; `--sources papers` searches them on their own task queues instead.
    **{name: _index(name) for name in INDEXES},
}
PROVIDERS = tuple(BUILDERS)


def build_provider(name: str, config: Settings) -> SearchProvider:
    """The named provider as configured, or a non-retryable error naming the variable to set."""
    builder = BUILDERS.get(name)
    if builder is None:
        raise permanent(
            f"search provider {name!r} does not exist; SEARCH_PROVIDER and SEARCH_FALLBACK_PROVIDERS "
            f"take: {', '.join(PROVIDERS)}"
        )
    return builder(config)
