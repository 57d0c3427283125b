"""`make bench`: how many of the offline engine's claims hold up, on the real Rust book corpus.

Five questions of our own, each a medium research with the offline engine, the local search over
`../shared/data/corpus/rust-book` (in a clone without it, the project's own notes on Rust, which
the figures then describe instead) and a real worker on the dev server; printed per question: the
claims checked, their final verdicts, what was rewritten or removed, the share supported, the
critic's scores, and the research time with and without verification.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench.research import research_corpus

QUESTIONS = [
    "How does the borrow checker decide when a reference is still valid?",
    "What happens to a value's ownership when it is passed to a function?",
    "How do closures capture variables from their environment?",
    "How does Cargo manage dependencies and workspaces?",
    "When should I use Box, Rc or RefCell for smart pointers?",
]


async def bench(tmp: Path) -> None:
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
    totals = [0, 0]
    async with (
        env,
        Worker(
            env.client, task_queue="bench", workflows=[DeepResearchWorkflow], activities=ACTIVITIES
        ),
    ):
        print(
            "claims  supported  partial  unsupported  rewritten  removed  share   quality  risk   time (off)  question"
        )
        for question in QUESTIONS:
            timings = {}
            for verify in (True, False):
                started = time.perf_counter()
                result = await env.client.execute_workflow(
                    DeepResearchWorkflow.run,
                    args=[ResearchRequest(query=question, depth=Depth.MEDIUM, verify=verify)],
                    id=f"bench-{uuid.uuid4().hex[:6]}",
                    task_queue="bench",
                )
                timings[verify] = time.perf_counter() - started
                if verify:
                    checked = result
            v, c = checked.verification, checked.critique
            assert v is not None
            totals[0] += v.supported
            totals[1] += v.claims
            print(
                f"{v.claims:6}  {v.supported:9}  {v.partial:7}  {v.unsupported:11}  {v.revised:9}  {v.removed:7}  "
                f"{v.share_supported:5.0%}  {c.quality if c else float('nan'):7.2f}  "
                f"{c.hallucination_risk if c else float('nan'):4.2f}  "
                f"{timings[True]:4.1f} s ({timings[False]:3.1f} s)  {question}"
            )
    print(
        f"all five: {totals[0]} of {totals[1]} claims supported ({totals[0] / max(1, totals[1]):.1%})"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = research_corpus(Path(tmp))
        os.environ.update(
            LLM_PROVIDER="offline",
            SEARCH_PROVIDER="local",
            RESEARCH_CORPUS_DIR=str(corpus),
            RESEARCH_INDEX_DIR=str(Path(tmp) / "index"),
            RESEARCH_DB_URL=f"sqlite:///{Path(tmp) / 'library.sqlite'}",
        )
        asyncio.run(bench(Path(tmp)))


if __name__ == "__main__":
    main()
