"""`make bench`: what a research spends per depth, and how a token budget holds.

Runs the real workflow and activities in-process with the `openai` engine against the scripted
OpenAI-protocol server (tests/support/llm_server.py), whose token counts follow the texts (4
characters a token) and whose writers write as long as a model would (`write_like_a_model`).
Prints, per depth: LLM calls, tokens, cost (gpt-4o-mini's built-in price), the report's length
in words as written against its target; then the same research with a third of those tokens as its budget:
what it spent, how far it got, and the overshoot (negative: under the limit).
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import tempfile
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUST_BOOK = REPO.parent / "shared" / "data" / "corpus" / "rust-book"
QUESTION = "How do Rust's ownership and borrowing rules prevent memory errors?"
STEPS = {"light": 2, "medium": 4, "extended": 6}


async def bench() -> None:
    from config import data_converter
    from temporalio.testing import WorkflowEnvironment
    from temporalio.worker import Worker

    from tests.support.llm_server import running_llm, write_like_a_model
    from workflows.budget import TARGET_WORDS
    from workflows.models import Depth, ResearchRequest, StepStatus
    from workflows.research import DeepResearchWorkflow

    with running_llm(usage_from_text=True) as llm:
        os.environ.update(OPENAI_BASE_URL=llm.base_url, LLM_MODEL="gpt-4o-mini")
        from worker import ACTIVITIES

        env = await WorkflowEnvironment.start_local(
            data_converter=data_converter(),
            dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        )
        async with env, Worker(env.client, task_queue="bench-budgets", workflows=[DeepResearchWorkflow],
                               activities=ACTIVITIES, max_concurrent_activities=20):
            async def run(depth: Depth, **budget: object) -> tuple[object, int]:
                llm.reset()
                write_like_a_model(llm, depth.value, STEPS[depth.value])
                handle = await env.client.start_workflow(
                    DeepResearchWorkflow.run, ResearchRequest(query=QUESTION, depth=depth, **budget),
                    id=f"bench-{uuid.uuid4().hex[:6]}", task_queue="bench-budgets")
                result = await handle.result()
                largest = max((p + c for p, c in (s.usage for s in llm.completions())), default=0)
                return result, largest

            print("depth     calls  tokens   cost USD  report words (target)")
            stops = []
            for depth in (Depth.LIGHT, Depth.MEDIUM, Depth.EXTENDED):
                full, _ = await run(depth)
                tokens = full.budget.spent_tokens
                # The length as written (verification off: the scripted prose is not what the
                # scripted sources say, so checking it would remove much of it).
                written, _ = await run(depth, verify=False)
                words = len(re.findall(r"\w+", written.report_markdown))
                print(f"{depth.value:9} {full.stats.llm_calls:5}  {tokens:6}  {full.stats.cost_usd:9.5f}  "
                      f"{words:5} ({TARGET_WORDS[depth]:5})")
                planned = len(full.plan.steps) if full.plan else 0
                for share in (1 / 3, 2 / 3):
                    limit = int(tokens * share)
                    cut, largest = await run(depth, max_tokens=limit)
                    done = sum(s.status is StepStatus.COMPLETED for s in cut.plan.steps) if cut.plan else 0
                    stops.append(f"{depth.value:9} {share:4.2f}  {cut.budget.spent_tokens:6} / {limit:6}  "
                                 f"{done} of {planned} steps  {cut.budget.spent_tokens - limit:+6d}  {largest:6}  "
                                 f"{cut.budget.exhausted.value if cut.budget.exhausted else '-'}")
            print("\ntoken budget as a share of the unbudgeted research:")
            print("depth     share  spent / limit   progress     over   largest call  exhausted")
            print("\n".join(stops))


def main() -> None:
    if not RUST_BOOK.is_dir():
        sys.exit(f"error: the shared corpus is not at {RUST_BOOK}")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(LLM_PROVIDER="openai", SEARCH_PROVIDER="local", RESEARCH_CORPUS_DIR=str(RUST_BOOK),
                          RESEARCH_INDEX_DIR=str(Path(tmp) / "index"),
                          RESEARCH_DB_URL=f"sqlite:///{Path(tmp) / 'library.sqlite'}")
        for key in ("OPENAI_API_KEY", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LLM_PRICES"):
            os.environ.pop(key, None)
        asyncio.run(bench())


if __name__ == "__main__":
    main()
