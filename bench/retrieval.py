"""`make bench`: does a research find the documents that explain the answer? (the Rust book dev set)

Runs `../shared/data/rust-book-dev-questions.md` through the real workflow (a worker in-process on
the dev server) with the offline engine and the local provider over the Rust book, at medium
depth, and prints:

- **multi-document questions** (D1-D12): for each, the required files the report cites, their
  recall, and whether it cites at least two (the set's bar for a good answer); overall recall;
- **vague questions** (V1-V6): whether the research asked back, and the question it asked;
- **held-out questions** (H1-H12, bench/rust-book-held-out-questions.md): the same figures
  on questions of the same kind written here, never used for tuning;
- **follow-ups** (F1-F4): the first question is researched, then the follow-up with the first
  research as its conversation (as `research --follow-up ID` builds it); resolved when it is not
  asked back and its report cites the file the follow-up refers to.

A file is *cited* when the report's `[n]` resolves to a source whose `file://` URL ends in it.
`--only D3,V1,F2` runs a subset (for tuning; the figures to report come from the whole set), and
`--set NAME=VALUE` changes a constant of activities/corpus/ranking.py for the run (ablations:
`--set EXPANSION_WEIGHT=0` turns pseudo-relevance feedback off).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import logging
import os
import re
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.support.shared import DEV_SET, RUST_BOOK, skip_bench

#: Questions of the dev set's kind written here and never tuned on: the figures on
#: questions retrieval has not seen.
HELD_OUT = Path(__file__).with_name("rust-book-held-out-questions.md")
TASK_QUEUE = "bench-retrieval"
#: A vague question's verdict is the routing's: how long to wait for the workflow to leave it.
ROUTING_WAIT_S = 30.0


@dataclass
class Question:
    key: str
    text: str
    required: list[str] = field(default_factory=list)
    follow_up: str = ""


def parse_dev_set(text: str) -> tuple[list[Question], list[Question], list[Question]]:
    """(research questions with required files, vague questions, follow-up pairs) of the dev set."""
    research: list[Question] = []
    vague: list[Question] = []
    pairs: list[Question] = []
    blocks = re.split(r"^### ", text, flags=re.M)[1:]
    for block in blocks:
        head, _, body = block.partition("\n")
        key = head.split(".")[0].strip()
        if key.startswith(("D", "H")):  # the dev set's research questions, or the held-out's
            required = re.search(r"^- Required: (.+)$", body, re.M)
            research.append(
                Question(
                    key,
                    head.split(".", 1)[1].strip(),
                    re.findall(r"`([^`]+\.md)`", required.group(1) if required else ""),
                )
            )
        elif key.startswith("V"):
            vague.append(Question(key, head.split(".", 1)[1].strip()))
        elif key.startswith("F"):
            first = re.search(r"^- First: (.+)$", body, re.M)
            second = re.search(r"^- Follow-up: (.+)$", body, re.M)
            refers = re.search(r"^- Refers to: (.+)$", body, re.M)
            if first and second and refers:
                pairs.append(
                    Question(
                        key,
                        first.group(1).strip(),
                        re.findall(r"`([^`]+\.md)`", refers.group(1)),
                        second.group(1).strip(),
                    )
                )
    return research, vague, pairs


def cited_files(result: Any) -> list[str]:
    """The corpus files the report cites, in citation order."""
    from workflows.kit.citations import cited_ids

    by_id = {s.id: s.url for s in result.sources}
    files = []
    for n in cited_ids(result.report_markdown):
        url = by_id.get(n, "")
        name = Path(unquote(urlsplit(url).path)).name if url.startswith("file:") else ""
        if name and name not in files:
            files.append(name)
    return files


class Bench:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def start(self, request: Any) -> Any:
        from workflows.research import DeepResearchWorkflow

        return await self.client.start_workflow(
            DeepResearchWorkflow.run,
            args=[request],
            id=f"bench-{uuid.uuid4().hex[:8]}",
            task_queue=TASK_QUEUE,
        )

    async def asked_back(self, handle: Any) -> str | None:
        """The clarification question the research asked, or None once it went on to research."""
        from workflows.models import Stage

        deadline = time.monotonic() + ROUTING_WAIT_S
        while time.monotonic() < deadline:
            status = await handle.query("status")
            stage = Stage(status["stage"] if isinstance(status, dict) else status.stage)
            pending: str | None = (  # the status's `pending_question`
                status.get("pending_question")
                if isinstance(status, dict)
                else status.pending_question
            )
            if pending:
                return pending
            if stage not in (Stage.ROUTING, Stage.CLARIFYING):
                return None
            await asyncio.sleep(0.05)
        raise TimeoutError(f"{handle.id} stayed in routing for {ROUTING_WAIT_S} s")

    async def research(self, request: Any) -> tuple[Any, str | None]:
        """The finished research and the clarification question it asked first, if any (then
        answered with the question itself, so the research still runs)."""
        handle = await self.start(request)
        asked = await self.asked_back(handle)
        if asked:
            await handle.signal("clarification_answer", request.query)
        return await handle.result(), asked


async def run(only: set[str]) -> None:
    from temporalio.testing import WorkflowEnvironment
    from temporalio.worker import Worker

    from settings import data_converter
    from worker import ACTIVITIES
    from workflows.models import Depth, ReportReview, ResearchRequest
    from workflows.research import DeepResearchWorkflow

    def request(query: str, **more: Any) -> ResearchRequest:
        # No person is there to review a report the critic would rather show one.
        return ResearchRequest(
            query=query, depth=Depth.MEDIUM, review_report=ReportReview.NEVER, **more
        )

    research, vague, pairs = parse_dev_set(DEV_SET.read_text(encoding="utf-8"))
    held_out = parse_dev_set(HELD_OUT.read_text(encoding="utf-8"))[0]
    if only:
        research, vague, pairs, held_out = (
            [q for q in qs if q.key in only] for qs in (research, vague, pairs, held_out)
        )
    env = await WorkflowEnvironment.start_local(
        data_converter=data_converter(),
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        dev_server_log_level="error",
    )
    started = time.perf_counter()
    async with (
        env,
        Worker(
            env.client,
            task_queue=TASK_QUEUE,
            workflows=[DeepResearchWorkflow],
            activities=ACTIVITIES,
        ),
    ):
        bench = Bench(env.client)
        found, wanted, good = await research_set(bench, request, research, "dev set")
        asked_count = await vague_set(bench, request, vague)
        resolved = await follow_up_set(bench, request, pairs)
        held = await research_set(bench, request, held_out, "held-out (bench)")
    print(
        f"summary: ≥2 required cited {good}/{len(research)}, recall {found / max(1, wanted):.0%}, "
        f"vague asked back {asked_count}/{len(vague)}, follow-ups resolved {resolved}/{len(pairs)}; "
        f"held-out ≥2 required cited {held[2]}/{len(held_out)}, recall "
        f"{held[0] / max(1, held[1]):.0%} ({time.perf_counter() - started:.0f} s)"
    )


async def vague_set(bench: Bench, request: Any, vague: list[Question]) -> int:
    """Start each vague question and print whether it was asked back: how many were."""
    asked_count = 0
    if vague:
        print("vague questions (asked back?)")
    for q in vague:
        handle = await bench.start(request(q.text))
        asked = await bench.asked_back(handle)
        if asked:
            await handle.terminate("bench: asked back")
        else:
            await handle.result()
        asked_count += asked is not None
        print(f"  {q.key:4} {'asked' if asked else 'RESEARCHED':10} {q.text!r}: {asked or '-'}")
    if vague:
        print(f"  vague questions asked back: {asked_count}/{len(vague)}")
    return asked_count


async def follow_up_set(bench: Bench, request: Any, pairs: list[Question]) -> int:
    """Research each first question, then its follow-up with it as the conversation: how many
    follow-ups were researched (not asked back) and cite the file they refer to."""
    from starter.client.followup import conversation

    resolved = 0
    if pairs:
        print("follow-ups (resolved from the first research, on the referred topic?)")
    for q in pairs:
        first, _ = await bench.research(request(q.text))
        handle = await bench.start(
            request(q.follow_up, history=conversation(first), follow_up_of="bench-first")
        )
        asked = await bench.asked_back(handle)
        if asked:
            await handle.terminate("bench: asked back")
            ok, cited = False, []
        else:
            cited = cited_files(await handle.result())
            ok = all(f in cited for f in q.required)
        resolved += ok
        state = "asked back" if asked else ("resolved" if ok else "off-topic")
        print(
            f"  {q.key:4} {state:10} {q.follow_up!r} → cites {', '.join(_short(f) for f in cited[:6]) or '-'}"
            f" (wanted {', '.join(_short(f) for f in q.required)})"
        )
    if pairs:
        print(f"  follow-ups resolved: {resolved}/{len(pairs)}")
    return resolved


async def research_set(
    bench: Bench, request: Any, research: list[Question], name: str
) -> tuple[int, int, int]:
    """Research each question and print the required files its report cites: (required files
    cited, required files, questions citing at least two)."""
    found = wanted = good = 0
    if research:
        print(f"multi-document questions, {name} (offline engine, local provider, medium depth)")
        print("  q     recall  ≥2  cited required (of required)         other cited")
    for q in research:
        result, asked = await bench.research(request(q.text))
        cited = cited_files(result)
        hits = [f for f in q.required if f in cited]
        found, wanted = found + len(hits), wanted + len(q.required)
        good += len(hits) >= 2
        others = [f for f in cited if f not in q.required]
        note = "  (asked back first!)" if asked else ""
        print(
            f"  {q.key:4} {len(hits)}/{len(q.required)} {len(hits) / len(q.required):4.0%}  "
            f"{'yes' if len(hits) >= 2 else 'no ':3} {', '.join(_short(f) for f in hits) or '-':34} "
            f"{', '.join(_short(f) for f in others[:6])}{note}"
        )
        missed = [f for f in q.required if f not in hits]
        if missed:
            print(f"        missed: {', '.join(missed)}")
    if research:
        print(
            f"  required files cited: {found}/{wanted} ({found / max(1, wanted):.0%}); "
            f"questions citing ≥2 required files: {good}/{len(research)}"
        )
    return found, wanted, good


def _short(name: str) -> str:
    """`ch07-05-separating-modules-into-different-files.md` → `ch07-05`."""
    match = re.match(r"((?:ch|appendix-)\d+(?:-\d+)?)", name)
    return match.group(1) if match else name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated keys, e.g. D1,V3,F2")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a constant of activities/corpus/ranking.py, e.g. EXPANSION_WEIGHT=0",
    )
    args = parser.parse_args()
    from activities.corpus import ranking

    for assignment in args.set:
        name, _, value = assignment.partition("=")
        if not hasattr(ranking, name):
            sys.exit(f"error: activities/corpus/ranking.py has no {name}")
        setattr(ranking, name, type(getattr(ranking, name))(ast.literal_eval(value)))
        print(f"ranking.{name} = {getattr(ranking, name)}")
    skip_bench(RUST_BOOK, DEV_SET)
    logging.getLogger("temporalio").setLevel(
        logging.ERROR
    )  # the workflows' own warnings are not the figures
    with tempfile.TemporaryDirectory() as tmp:
        for name in [
            k for k in os.environ if k.startswith(("OPENAI_", "LLM_", "SEARCH_", "LANGFUSE_"))
        ]:
            del os.environ[name]
        os.environ.update(
            LLM_PROVIDER="offline",
            SEARCH_PROVIDER="local",
            RESEARCH_CORPUS_DIR=str(RUST_BOOK.resolve()),
            RESEARCH_INDEX_DIR=str(Path(tmp) / "index"),
            RESEARCH_DB_URL=f"sqlite:///{Path(tmp) / 'library.sqlite'}",
        )
        asyncio.run(run({k.strip().upper() for k in args.only.split(",") if k.strip()}))


if __name__ == "__main__":
    main()
