"""What a small real model does here (`make bench-models`): the model MODEL names (SmolLM2-135M-
Instruct, Qwen2.5-Coder-1.5B-Instruct: tests/models/llama.py) behind llama.cpp's OpenAI-compatible
server, one research per depth on the project's own notes (Qwen: the light one only, 20 minutes).

Per depth: LLM calls (completions served), the calls the model answered and the roles that fell
back, prompt and completion tokens, seconds, the claims the verifier marked supported and
unsupported, and how much of the model's own prose the report kept: its pieces (the report, or
its sections and summary) the grounding check let stand, the others composed by the engine from
quoted sentences (activities/openai_engine/grounding.py). Wall-clock figures depend on this
shared 2-core machine: read them as an order of size.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

from activities.openai_engine.grounding import COMPOSED_NOTE
from tests.bench.harness import DevServer, WorkerProcess, worker_env
from tests.models.llama import MODEL, MODEL_NAME, missing, running_llama
from tests.support.corpus import write_rust_notes
from workflows.models import Depth, ResearchRequest, ResearchResult
from workflows.research import DeepResearchWorkflow

QUESTIONS = {
    Depth.LIGHT: "How does ownership work in Rust and what happens when a value is moved?",
    Depth.MEDIUM: "How do Rust's borrowing rules and lifetimes keep references valid?",
}
#: The 1.5B model writes a few tokens a second here: a medium research would take hours.
DEPTHS = {"qwen2.5-coder-1.5b-instruct": [Depth.LIGHT]}


async def bench(folder: Path) -> None:
    notes = write_rust_notes(folder / "notes")
    dev = DevServer().start()
    try:
        with running_llama(folder / "llama.log") as llama:
            client = await dev.client()
            env = worker_env(
                dev.address,
                f"bench-models-{uuid.uuid4().hex[:6]}",
                llama.base_url,
                folder,
                LLM_MODEL=MODEL_NAME,
                RESEARCH_CORPUS_DIR=str(notes),
            )
            worker = WorkerProcess(env, folder / "worker.log").start()
            try:
                print(f"model {MODEL_NAME}")
                print(
                    f"{'depth':<7} {'calls':>5} {'answered':>8} {'tokens in/out':>14} "
                    f"{'seconds':>7} {'supported':>9} {'unsupported':>11} {'prose kept':>10}"
                    "  fell back"
                )
                for depth in DEPTHS.get(MODEL_NAME, list(QUESTIONS)):
                    question = QUESTIONS[depth]
                    handle = await client.start_workflow(
                        DeepResearchWorkflow.run,
                        ResearchRequest(
                            query=question,
                            depth=depth,
                            max_clarifications=0,
                            time_budget_s=max(3600, MODEL.time_budget_s),
                        ),
                        id=f"bench-model-{depth.value}-{uuid.uuid4().hex[:6]}",
                        task_queue=env["TEMPORAL_TASK_QUEUE"],
                    )
                    result: ResearchResult = await handle.result()
                    print(row(depth, result))
            finally:
                worker.stop()
    finally:
        dev.stop()


def row(depth: Depth, result: ResearchResult) -> str:
    stats, v = result.stats, result.verification
    answered = stats.llm_answered
    total = answered + sum(stats.llm_unanswered_by_role.values())
    return (
        f"{depth.value:<7} {stats.llm_calls:>5} {f'{answered}/{total}':>8} "
        f"{f'{stats.prompt_tokens}/{stats.completion_tokens}':>14} {stats.duration_s:>7.0f} "
        f"{v.supported if v else 0:>9} {v.unsupported if v else 0:>11} "
        f"{prose_kept(result):>10}  "
        f"{', '.join(stats.llm_unanswered_by_role) or '-'}"
    )


def prose_kept(result: ResearchResult) -> str:
    """The report's pieces (the one-call report, or each section) in the model's own words, of
    all: a piece ends with COMPOSED_NOTE when the engine composed it from quoted sentences, and a
    writer that fell back wrote none. Pieces are the writers' calls less their retries."""
    stats, writers = result.stats, ("synthesize", "write_section")
    pieces = sum(
        stats.llm_calls_by_role.get(r, 0) - stats.llm_retries_by_role.get(r, 0) for r in writers
    )
    answered = pieces - sum(stats.llm_unanswered_by_role.get(r, 0) for r in writers)
    kept = max(0, answered - result.report_markdown.count(COMPOSED_NOTE))
    return f"{kept}/{max(pieces, 1)}"


def main() -> None:
    why = missing()
    if why:
        print(f"skipped: {why}")
        sys.exit(0)
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(bench(Path(tmp)))


if __name__ == "__main__":
    main()
