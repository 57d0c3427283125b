"""What a small real model does here (`make bench-models`): SmolLM2-135M-Instruct behind
llama.cpp's OpenAI-compatible server, one research per depth on the project's own notes.

Per depth: LLM calls (completions served), the calls the model answered and the roles that fell
back, prompt and completion tokens, seconds, and the claims the verifier marked supported and
unsupported (with how many of the report's sentences the engine quoted instead of the model's
draft). Wall-clock figures depend on this shared 2-core machine: read them as an order of size.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

from tests.bench.harness import DevServer, WorkerProcess, worker_env
from tests.models.llama import MODEL_NAME, missing, running_llama
from tests.support.corpus import write_rust_notes
from workflows.models import Depth, ResearchRequest, ResearchResult
from workflows.research import DeepResearchWorkflow

QUESTIONS = {
    Depth.LIGHT: "How does ownership work in Rust and what happens when a value is moved?",
    Depth.MEDIUM: "How do Rust's borrowing rules and lifetimes keep references valid?",
}


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
                LLM_REQUEST_TIMEOUT_S="85",
            )
            worker = WorkerProcess(env, folder / "worker.log").start()
            try:
                print(
                    f"{'depth':<7} {'calls':>5} {'answered':>8} {'tokens in/out':>14} "
                    f"{'seconds':>7} {'supported':>9} {'unsupported':>11}  fell back"
                )
                for depth, question in QUESTIONS.items():
                    handle = await client.start_workflow(
                        DeepResearchWorkflow.run,
                        ResearchRequest(
                            query=question, depth=depth, max_clarifications=0, time_budget_s=3600
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
    quoted = " (sentences quoted)" if "quoted from those sources" in result.report_markdown else ""
    return (
        f"{depth.value:<7} {stats.llm_calls:>5} {f'{answered}/{total}':>8} "
        f"{f'{stats.prompt_tokens}/{stats.completion_tokens}':>14} {stats.duration_s:>7.0f} "
        f"{v.supported if v else 0:>9} {v.unsupported if v else 0:>11}  "
        f"{', '.join(stats.llm_unanswered_by_role) or '-'}{quoted}"
    )


def main() -> None:
    why = missing()
    if why:
        print(f"skipped: {why}")
        sys.exit(0)
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(bench(Path(tmp)))


if __name__ == "__main__":
    main()
