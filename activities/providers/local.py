"""The local corpus as a search provider (a folder of documents indexed with SQLite FTS5)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from activities.providers.http import unique_hits
from config import Settings
from workflows.activity_models import SearchHit


class Local:
    """The local corpus (activities/corpus/), opened on first search: building its index is slow."""

    name = "local"

    def __init__(self, corpus: Callable[[], Any]) -> None:
        self._corpus = corpus

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        hits = await asyncio.to_thread(lambda: self._corpus().search(query, max_results))
        return unique_hits(hits, max_results)


def open_corpus_of(config: Settings) -> Any:
    from activities.corpus import (
        open_corpus,
    )  # deferred: SQLite is the worker's business, not the sandbox's

    return open_corpus(config.research_corpus_dir, config.research_index_dir)
