"""What a small real model does here (`make bench-models`): the model MODEL names (SmolLM2-135M-
Instruct, Qwen2.5-Coder-1.5B-Instruct: tests/models/llama.py) behind llama.cpp's OpenAI-compatible
server, light researches on notes of three kinds (the project's Rust notes, lighthouses, the
planets: tests/support/other_notes.py) and a medium one on the Rust notes (Qwen: the light Rust
research only, 20 minutes).

Per research: the calls the model answered of all its role calls; of those, the replies read only
once repaired (nearly JSON) and the model's retries (asked again with why its reply could not be
read, plus activity retries); the roles that fell back to the engine's rules; tokens; seconds; the
claims the verifier marked supported and unsupported; the judge's calibration on its canaries
(passed/asked, and whether it was trusted); and how much of the model's own prose the report kept
(activities/openai_engine/grounding.py). Wall-clock figures depend on this shared 2-core machine:
read them as an order of size. `--out FILE` also writes the table as Markdown, dated.
"""

from __future__ import annotations

import asyncio
import datetime
import sys
import tempfile
import uuid
from pathlib import Path

from activities.openai_engine.grounding import COMPOSED_NOTE
from bench.harness import DevServer, WorkerProcess, worker_env
from tests.models.llama import MODEL, MODEL_NAME, missing, running_llama
from tests.support.corpus import write_rust_notes
from tests.support.other_notes import LIGHTHOUSES, PLANETS, write_notes
from workflows.models import Depth, ResearchRequest, ResearchResult
from workflows.research import DeepResearchWorkflow

#: (name, notes, question, depth): what each research asks, over which notes.
RESEARCHES = [
    (
        "rust",
        "How does ownership work in Rust and what happens when a value is moved?",
        Depth.LIGHT,
    ),
    ("lighthouses", "How did the Fresnel lens change lighthouse range?", Depth.LIGHT),
    ("planets", "How long is a year on Mars and how tall is Olympus Mons?", Depth.LIGHT),
    ("rust", "How do Rust's borrowing rules and lifetimes keep references valid?", Depth.MEDIUM),
]
#: The 1.5B model writes a few tokens a second here: more than one light research takes hours.
ONLY = {"qwen2.5-coder-1.5b-instruct": RESEARCHES[:1]}
HEADER = (
    "| model | notes | depth | answered | repaired | retried | seconds | supported | unsupported "
    "| judge | prose kept | fell back |"
)


async def bench(folder: Path, out: Path | None) -> None:
    corpora = {
        "rust": write_rust_notes(folder / "rust"),
        "lighthouses": write_notes(folder / "lighthouses", LIGHTHOUSES),
        "planets": write_notes(folder / "planets", PLANETS),
    }
    rows = [HEADER, "|---" * 12 + "|"]
    print(HEADER, flush=True)
    dev = DevServer().start()
    try:
        with running_llama(folder / "llama.log") as llama:
            client = await dev.client()
            for kind, question, depth in ONLY.get(MODEL_NAME, RESEARCHES):
                env = worker_env(
                    dev.address,
                    f"bench-models-{uuid.uuid4().hex[:6]}",
                    llama.base_url,
                    folder,
                    LLM_MODEL=MODEL_NAME,
                    RESEARCH_CORPUS_DIR=str(corpora[kind]),
                )
                worker = WorkerProcess(env, folder / f"worker-{kind}.log").start()
                try:
                    handle = await client.start_workflow(
                        DeepResearchWorkflow.run,
                        args=[
                            ResearchRequest(
                                query=question,
                                depth=depth,
                                max_clarifications=0,
                                time_budget_s=max(3600, MODEL.time_budget_s),
                            )
                        ],
                        id=f"bench-model-{kind}-{depth.value}-{uuid.uuid4().hex[:6]}",
                        task_queue=env["TEMPORAL_TASK_QUEUE"],
                    )
                    result: ResearchResult = await handle.result()
                finally:
                    worker.stop()
                rows.append(row(kind, depth, result))
                print(rows[-1], flush=True)
                if out is not None:  # after each research: hours of measuring survive a stop
                    write(out, rows)
    finally:
        dev.stop()


def write(out: Path, rows: list[str]) -> None:
    when = datetime.date.today().isoformat()
    out.write_text(
        f"Measured {when} on this 2-core machine (`make bench-models`).\n\n"
        + "\n".join(rows)
        + "\n"
    )


def row(kind: str, depth: Depth, result: ResearchResult) -> str:
    stats, v = result.stats, result.verification
    answered = stats.llm_answered
    total = answered + sum(stats.llm_unanswered_by_role.values())
    judge = stats.judge_calibration
    judged = (
        f"{judge.passed}/{judge.canaries} {'trusted' if judge.trusted else 'not trusted'}"
        if judge
        else "-"
    )
    cells = [
        MODEL_NAME,
        kind,
        depth.value,
        f"{answered}/{total}",
        str(stats.llm_repaired),
        str(stats.llm_reasked + stats.llm_retries),
        f"{stats.duration_s:.0f}",
        str(v.supported if v else 0),
        str(v.unsupported if v else 0),
        judged,
        prose_kept(result),
        ", ".join(stats.llm_unanswered_by_role) or "-",
    ]
    return "| " + " | ".join(cells) + " |"


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
    out = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else None
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(bench(Path(tmp), out))


if __name__ == "__main__":
    main()
