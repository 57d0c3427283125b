"""`python -m starter index [DIR]`: build or bring up to date the local provider's index of a folder.

A research keeps the index fresh by itself (added, changed and deleted files are seen on the next
search, checked at most every 2 s), so this is never required. It is for a first build of a large
folder of PDFs, which may take longer than one search is allowed (30 s), and for seeing what was
indexed: it prints what it added, updated and removed, and every file it could not read with why.
Without DIR it indexes RESEARCH_CORPUS_DIR (or, unset, the Python documentation), into
RESEARCH_INDEX_DIR, the very index a worker with the same settings searches.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
from pathlib import Path

from starter.client.errors import ClientError, Kind
from starter.client.terminal import escape

#: Files listed per kind of change; the rest are counted.
LISTED = 20


async def index(args: argparse.Namespace, session: object) -> int:
    from activities.corpus import LocalCorpus
    from activities.web.bounded import close_pool

    # What could not be read is listed below; the worker's log line for it would say it twice.
    logging.getLogger("activities.corpus.index").setLevel(logging.ERROR)
    cfg = session.cfg  # type: ignore[attr-defined]
    folder = Path(args.dir).expanduser() if args.dir else cfg.corpus.folder
    if folder is not None and not folder.is_dir():
        raise ClientError(f"{escape(str(folder))} is not a folder of documents", Kind.INVALID)
    corpus = LocalCorpus(folder, cfg.corpus.index_dir)
    started = time.perf_counter()
    try:
        changes = await asyncio.to_thread(corpus.refresh)
        skipped = await asyncio.to_thread(corpus.skipped)
        description = await asyncio.to_thread(lambda: corpus.description)
    finally:
        close_pool()
    elapsed = time.perf_counter() - started
    root = corpus.corpus_dir

    def shown(path: str) -> str:
        """The path under the folder, control characters escaped: a name is one line."""
        return escape(
            str(Path(path).relative_to(root)) if root and Path(path).is_relative_to(root) else path
        )

    # A file that could not be read is listed once, as unreadable, not also as added or updated.
    unreadable = {path for path, _ in skipped}
    added = [path for path in changes.added if path not in unreadable]
    updated = [path for path in changes.updated if path not in unreadable]
    print(
        f"{escape(description)}: {len(added)} added, {len(updated)} updated, "
        f"{len(changes.removed)} removed, {len(skipped)} unreadable, in {elapsed:.1f} s"
    )
    for label, paths in (("added", added), ("updated", updated), ("removed", changes.removed)):
        for path in paths[:LISTED]:
            print(f"  {label:8} {shown(path)}")
        if len(paths) > LISTED:
            print(f"  {label:8} … and {len(paths) - LISTED} more")
    for path, why in skipped:
        print(f"  skipped  {shown(path)}: {escape(why)}")
    print(f"index: {escape(str(corpus.index_path))}")
    configured = cfg.corpus.folder.expanduser().resolve() if cfg.corpus.folder else None
    if root != configured:
        searched = escape(str(configured)) if configured else "unset: the Python documentation"
        print(
            f"note: this folder is indexed, but workers search RESEARCH_CORPUS_DIR ({searched}): "
            f"to search it, put `RESEARCH_CORPUS_DIR={escape(str(root or 'nothing'))}` in .env "
            "(or the workers' environment) and restart them (`make dev`)"
        )
    return 0
