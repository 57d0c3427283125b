"""`make bench`: what a research spends per depth, and what a token budget buys.

Runs the real workflow and activities in-process with the `openai` engine against the scripted
OpenAI-protocol server (tests/support/llm_server.py), whose token counts follow the texts (4
characters a token) and whose writers write as long as a model would (`write_like_a_model`).
The local search reads notes this project writes itself (tests/support/corpus.py), so the bench
runs in any clone; `BENCH_CORPUS=/path/to/folder` reads another folder instead.

Prints, per depth: LLM calls, tokens, cost (gpt-4o-mini's built-in price), the report's length in
words as written against its target. Then, per depth, the same research with a share of those
tokens as its budget (a tenth to all of them): steps researched, sources cited in the report, the
share of the budget used, the over-run (tokens past the limit, 0 when within it) and the largest
single call, the bound an over-run must stay within (one call's estimate missed by at most that).
A last line checks what a user can expect of a third of a medium research's tokens.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypedDict, Unpack

QUESTION = "How do Rust's ownership and borrowing rules prevent memory errors?"
STEPS = {"light": 2, "medium": 4, "extended": 6}
SHARES = (0.1, 0.2, 1 / 3, 0.5, 0.75, 1.0)
#: A third of a medium research's tokens researches at least one step and cites it, and uses at
#: least this share of the budget.
THIRD_USES_AT_LEAST = 0.6


class _Budget(TypedDict, total=False):
    """What a measured research is given beyond its depth: no verifier, or a token budget."""

    verify: bool
    max_tokens: int


def _cited(result: Any) -> int:
    """Distinct sources the report cites (its list of sources not counted)."""
    body = result.report_markdown.split("\n## Sources", 1)[0]
    known = {s.id for s in result.sources}
    return len({int(n) for n in re.findall(r"\[(\d+)\]", body)} & known)


def _row(
    depth: str, share: float, limit: int, cut: Any, planned: int, largest: int
) -> tuple[str, dict[str, Any]]:
    from workflows.models import StepStatus

    done = sum(s.status is StepStatus.COMPLETED for s in cut.plan.steps) if cut.plan else 0
    spent = cut.budget.spent_tokens
    figures = {
        "done": done,
        "cited": _cited(cut),
        "used": spent / limit,
        "over": max(0, spent - limit),
        "largest": largest,
    }
    exhausted = cut.budget.exhausted.value if cut.budget.exhausted else "-"
    return (
        f"{depth:9} {share:5.2f}  {spent:6} / {limit:6}  {done} of {planned}    {figures['cited']:3}    "
        f"{figures['used']:5.0%}  {figures['over']:6}  {largest:6}  {exhausted}"
    ), figures


def _verdict(third: dict[str, Any] | None) -> str:
    """What a third of a medium research's tokens bought, against what a user may expect."""
    assert third is not None
    kept = (
        third["done"] >= 1
        and third["cited"] >= 1
        and third["used"] >= THIRD_USES_AT_LEAST
        and third["over"] <= third["largest"]
    )
    return (
        f"\na third of a medium research's tokens: {third['done']} step(s) researched, {third['cited']} "
        f"source(s) cited, {third['used']:.0%} used, {third['over']} over: "
        + (
            "as expected"
            if kept
            else f"NOT as expected (>= 1 step cited, >= {THIRD_USES_AT_LEAST:.0%} "
            "used, over-run within one call)"
        )
    )


async def bench() -> None:
    from temporalio.testing import WorkflowEnvironment
    from temporalio.worker import Worker

    from settings import data_converter
    from tests.support.llm_server import running_llm, write_like_a_model
    from workflows.models import Depth, ResearchRequest
    from workflows.research import DeepResearchWorkflow

    with running_llm(usage_from_text=True) as llm:
        os.environ.update(OPENAI_BASE_URL=llm.base_url, LLM_MODEL="gpt-4o-mini")
        from worker import ACTIVITIES

        env = await WorkflowEnvironment.start_local(
            data_converter=data_converter(),
            dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        )
        async with (
            env,
            Worker(
                env.client,
                task_queue="bench-budgets",
                workflows=[DeepResearchWorkflow],
                activities=ACTIVITIES,
                max_concurrent_activities=20,
            ),
        ):

            async def run(depth: Depth, **budget: Unpack[_Budget]) -> tuple[Any, int]:
                llm.reset()
                write_like_a_model(llm, depth.value, STEPS[depth.value])
                # Queries on the question's subject, so the first source the scripted prose cites
                # says what it says and the verifier keeps it (see tests/support/corpus.py).
                llm.answers["write_queries"] = {
                    "queries": ["owner value dropped scope", "borrowing references"]
                }
                handle = await env.client.start_workflow(
                    DeepResearchWorkflow.run,
                    args=[ResearchRequest(query=QUESTION, depth=depth, **budget)],
                    id=f"bench-{uuid.uuid4().hex[:6]}",
                    task_queue="bench-budgets",
                )
                result = await handle.result()
                largest = max((p + c for p, c in (s.usage for s in llm.completions())), default=0)
                return result, largest

            await _measure(run)


async def _measure(run: Callable[..., Awaitable[tuple[Any, int]]]) -> None:
    """The two tables and the verdict, from `run(depth, **budget)`: each depth unbudgeted, then
    under each share of what it spent."""
    from workflows.models import TARGET_WORDS, Depth

    print("depth     calls  tokens   cost USD  report words (target)")
    rows, third = [], None
    for depth in (Depth.LIGHT, Depth.MEDIUM, Depth.EXTENDED):
        full, _ = await run(depth)
        tokens = full.budget.spent_tokens
        # The length as written (verification off: the scripted prose is not what the
        # scripted sources say, so checking it would remove much of it).
        written, _ = await run(depth, verify=False)
        words = len(re.findall(r"\w+", written.report_markdown))
        print(
            f"{depth.value:9} {full.stats.llm_calls:5}  {tokens:6}  {full.stats.cost_usd:9.5f}  "
            f"{words:5} ({TARGET_WORDS[depth]:5})"
        )
        planned = len(full.plan.steps) if full.plan else 0
        for share in SHARES:
            limit = int(tokens * share)
            cut, largest = await run(depth, max_tokens=limit)
            line, figures = _row(depth.value, share, limit, cut, planned, largest)
            rows.append(line)
            if depth is Depth.MEDIUM and share == SHARES[2]:
                third = figures
    print("\ntoken budget as a share of the unbudgeted research:")
    print(
        "depth     share   spent / limit  steps   cited  used   over-run  largest call  exhausted"
    )
    print("\n".join(rows))
    print(_verdict(third))


def _corpus(tmp: Path) -> Path:
    """The folder the local search reads: `BENCH_CORPUS`, else notes written here."""
    given = os.environ.get("BENCH_CORPUS")
    if given:
        folder = Path(given)
        if not folder.is_dir():
            sys.exit(f"error: BENCH_CORPUS is not a folder: {folder}")
        return folder
    try:
        from tests.support.corpus import write_rust_notes
    except ImportError:  # a checkout from before the notes: the shared Rust book, if it is there
        book = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus" / "rust-book"
        if not book.is_dir():
            sys.exit(
                "error: no corpus to search: tests/support/corpus.py is missing; set BENCH_CORPUS"
            )
        return book
    return write_rust_notes(tmp / "notes")


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        os.environ.update(
            LLM_PROVIDER="openai",
            SEARCH_PROVIDER="local",
            RESEARCH_CORPUS_DIR=str(_corpus(tmp)),
            RESEARCH_INDEX_DIR=str(tmp / "index"),
            RESEARCH_DB_URL=f"sqlite:///{tmp / 'library.sqlite'}",
        )
        for key in ("OPENAI_API_KEY", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LLM_PRICES"):
            os.environ.pop(key, None)
        asyncio.run(bench())


if __name__ == "__main__":
    main()
