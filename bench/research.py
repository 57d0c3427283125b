"""`make bench`: speed and size figures, never part of `make test`.

Prints: the default corpus's first index time and document count, search latency, and for a
medium research on the Rust book (offline engine, real worker in-process, dev server; in a clone
without ../shared, on the project's own notes on Rust, tests/support/corpus.py) its
duration, activity count, history size (which must stay far below Temporal's 2 MB warning) and
how many events its `events` query holds (state, not history: they add nothing to the history).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tests.support.corpus import write_rust_notes
from tests.support.shared import RUST_BOOK, missing, shown

QUESTIONS = [
    "How does Rust's ownership and borrowing prevent data races?",
    "How do traits and generics work together in Rust?",
    "How does Rust handle recoverable and unrecoverable errors?",
]


def bench_corpus(index_dir: Path) -> None:
    from activities.corpus import LocalCorpus

    corpus = LocalCorpus(None, index_dir)
    started = time.perf_counter()
    description = corpus.description
    print(f"default corpus: {description}, first index {time.perf_counter() - started:.2f} s")
    timings = []
    for query in [
        "asyncio gather tasks concurrently",
        "assert statement",
        "json decode errors",
        "context manager",
    ] * 5:
        t = time.perf_counter()
        corpus.search(query, 5)
        timings.append(time.perf_counter() - t)
    print(
        f"search latency: median {statistics.median(timings) * 1000:.1f} ms, max {max(timings) * 1000:.1f} ms"
    )


async def bench_research(tmp: Path) -> None:
    from temporalio.testing import WorkflowEnvironment
    from temporalio.worker import Worker

    from settings import data_converter
    from worker import ACTIVITIES
    from workflows.models import Depth, ResearchRequest
    from workflows.research import DeepResearchWorkflow

    env = await WorkflowEnvironment.start_local(
        data_converter=data_converter(),
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
    )
    async with (
        env,
        Worker(
            env.client, task_queue="bench", workflows=[DeepResearchWorkflow], activities=ACTIVITIES
        ),
    ):
        for depth in (Depth.MEDIUM, Depth.EXTENDED):
            for question in QUESTIONS:
                started = time.perf_counter()
                handle = await env.client.start_workflow(
                    DeepResearchWorkflow.run,
                    args=[ResearchRequest(query=question, depth=depth)],
                    id=f"bench-{uuid.uuid4().hex[:6]}",
                    task_queue="bench",
                )
                result = await handle.result()
                elapsed = time.perf_counter() - started
                history = await handle.fetch_history()
                size = len(history.to_json())
                steps = sum(1 for s in (result.plan.steps if result.plan else []) if s.observation)
                followed = len(await handle.query("events", 0))
                print(
                    f"{depth.value:8} {elapsed:5.2f} s  {len(history.events):4} events  {size / 1024:6.0f} KiB history  "
                    f"{size:8} bytes  {followed:3} research events  {steps} steps  {len(result.sources):2} sources  "
                    f"{question}"
                )


def research_corpus(tmp: Path) -> Path:
    """The Rust book when ../shared is beside the clone, else the project's own notes written into
    `tmp`; says which, since the figures of the two do not compare."""
    if missing(RUST_BOOK):
        notes = write_rust_notes(tmp / "rust-notes")
        print(
            f"corpus: the project's own notes on Rust ({len(list(notes.iterdir()))} files), as {shown(RUST_BOOK)} "
            "is not in this clone (figures not comparable with the Rust book's)"
        )
        return notes
    print(f"corpus: the Rust book ({RUST_BOOK})")
    return RUST_BOOK


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = research_corpus(Path(tmp))
        os.environ.update(
            LLM_PROVIDER="offline",
            SEARCH_PROVIDER="local",
            RESEARCH_CORPUS_DIR=str(corpus),
            RESEARCH_INDEX_DIR=str(Path(tmp) / "index"),
        )
        bench_corpus(Path(tmp) / "default-index")
        asyncio.run(bench_research(Path(tmp)))


if __name__ == "__main__":
    main()
