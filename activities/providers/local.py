"""The local corpus as a search provider (a folder of documents indexed with SQLite FTS5), and
`Documents`: that corpus plus a person's uploaded documents (activities/corpus/uploads.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from activities.providers.http import unique_hits
from settings import Settings
from workflows.activity_models import SearchHit


class Local:
    """The local corpus (activities/corpus/), opened on first search: building its index is slow."""

    name = "local"

    def __init__(self, corpus: Callable[[], Any]) -> None:
        self._corpus = corpus

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        hits = await asyncio.to_thread(lambda: self._corpus().search(query, max_results))
        return unique_hits(hits, max_results)


class Documents:
    """The person's uploaded documents, then the local corpus: both searched, their hits
    interleaved by rank (the person's own first, since they chose to add them)."""

    name = "local"

    def __init__(self, corpora: list[Callable[[], Any | None]]) -> None:
        self._corpora = corpora

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        def run() -> list[list[SearchHit]]:
            opened = (open_one() for open_one in self._corpora)
            return [corpus.search(query, max_results) for corpus in opened if corpus is not None]

        found = await asyncio.to_thread(run)
        by_rank = (hits[rank] for rank in range(max_results) for hits in found if rank < len(hits))
        return unique_hits(by_rank, max_results)


def open_corpus_of(config: Settings) -> Any:
    from activities.corpus import (
        open_corpus,
    )  # deferred: SQLite is the worker's business, not the sandbox's

    return open_corpus(config.corpus.folder, config.corpus.index_dir)


def open_uploads_of(config: Settings, owner: str) -> Any | None:
    """OWNER's uploaded documents as a corpus, or None when they have uploaded none."""
    from activities.corpus import open_corpus, uploads

    folder = uploads.owner_folder(uploads.uploads_root(config.library.data_dir), owner)
    if not folder.is_dir():
        return None
    return open_corpus(folder, config.corpus.index_dir, config.limits.upload_quota_text_chars)


def uploads_corpus_for_url(config: Settings, url: str) -> Any | None:
    """The uploads corpus a `file://` URL of an uploaded document belongs to, or None."""
    from activities.corpus import open_corpus, uploads

    folder: Path | None = uploads.folder_of_url(uploads.uploads_root(config.library.data_dir), url)
    if folder is None or not folder.is_dir():
        return None
    return open_corpus(folder, config.corpus.index_dir, config.limits.upload_quota_text_chars)
