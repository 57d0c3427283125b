"""An offline report's summary never contradicts its findings.

A report opened with "**The sources read do not answer this question.** None of the 7 sentences
found about asyncio.timeout says anything about "cancel", "task"" above the finding "When a
timeout occurs, it cancels the task and raises TimeoutError [2]": the summary looked for the
whole dotted name, which the documentation of `asyncio.timeout` never writes. Here real offline
research (the real worker, the offline engine, the local search) runs over real text, the Python
documentation the interpreter ships (the default corpus) and the project's notes on Rust, with
questions of several kinds (how, why, what, when; one subject or two; dotted names or words).

What a reader checks: when a finding below carries what the question asks (the words of its main
clause, a dotted name also by its last part), the summary does not say the sources do not answer;
and a summary that answers quotes such a finding when one exists.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from tests.conftest import REPO
from workflows.models import Depth, ResearchRequest
from workflows.research import DeepResearchWorkflow
from workflows.text import content_terms, stem

pytestmark = pytest.mark.e2e

DENIAL = "**The sources read do not answer this question.**"
QUESTIONS = {
    "python-docs": [
        "How does asyncio.timeout cancel a task?",
        "What does asyncio.timeout raise when the time runs out?",
        "Why does shutil.rmtree fail on read-only files?",
        "How does functools.lru_cache decide which entries to evict?",
        "How are default argument values evaluated?",
        "What does pathlib.Path.glob return?",
    ],
    "rust-notes": [
        "When does Rust drop a value?",
        "Why does the borrow checker reject two mutable references?",
        "How do Arc and Mutex share state between threads?",
        "How does a Box store a value on the heap?",
        "What does the question mark operator do with an error?",
        "How do closures capture variables?",
    ],
}
#: Words after which a question only qualifies what it asks ("... when the time runs out",
#: "... on read-only files"): its key terms are the words before.
QUALIFIERS = frozenset(
    "when while if after before on in at with without into from to by for between during "
    "which that whether until because".split()
)


def key_terms(question: str) -> set[str]:
    """The stems of the question's main clause's content words; a dotted name by its last part."""
    words = question.rstrip("?").split()
    main: list[str] = []
    for word in words[2:]:  # past "How does", "What is": the clause's own words
        if word.lower() in QUALIFIERS:
            break
        main.append(word)
    text = " ".join([*words[:2], *main])
    return {stem(t.rsplit(".", 1)[-1]) for t in content_terms(text)}


def carries(finding: str, terms: set[str]) -> bool:
    said = {stem(p) for t in content_terms(finding) for p in [t, *t.split(".")]}
    return terms <= said


def summary_and_findings(report: str) -> tuple[str, list[str]]:
    """The summary's paragraph and the findings listed under the steps' headings."""
    body = report.split("\n## Sources", 1)[0].split("\n## Not found in the sources", 1)[0]
    summary = body.split("## Summary", 1)[1].split("\n## ", 1)[0].strip()
    findings = [line[2:] for line in body.splitlines() if line.startswith("- ")]
    return summary, findings


@pytest.fixture(params=list(QUESTIONS))
def corpus_worker(
    request: pytest.FixtureRequest, subprocess_env: dict[str, str], rust_notes: Path
) -> Iterator[tuple[str, dict[str, str]]]:
    """A worker over the corpus: the default (Python's own documentation) or the notes on Rust."""
    env = dict(subprocess_env)
    if request.param == "rust-notes":
        env["RESEARCH_CORPUS_DIR"] = str(rust_notes)
    process = subprocess.Popen([sys.executable, "worker.py"], cwd=REPO, env=env)
    try:
        yield request.param, env
    finally:
        process.terminate()
        process.wait(timeout=30)


async def test_the_summary_never_says_the_sources_do_not_answer_above_a_finding_that_does(
    dev_client: Client, corpus_worker: tuple[str, dict[str, str]]
) -> None:
    corpus, env = corpus_worker
    handles = [
        await dev_client.start_workflow(
            DeepResearchWorkflow.run,
            ResearchRequest(query=question, depth=Depth.LIGHT),
            id=f"summary-{uuid.uuid4().hex[:8]}",
            task_queue=env["TEMPORAL_TASK_QUEUE"],
        )
        for question in QUESTIONS[corpus]
    ]
    results = await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), 240)
    contradicted, unquoted = [], []
    for question, result in zip(QUESTIONS[corpus], results, strict=True):
        summary, findings = summary_and_findings(result.report_markdown)
        answering = [f for f in findings if carries(f, key_terms(question))]
        if os.environ.get("SHOW_SUMMARIES"):
            print(f"\n{question}\n  summary: {summary[:300]}\n  answering: {answering[:2]}")
        if summary.startswith(DENIAL) and answering:
            contradicted.append((question, summary, answering[0]))
        if answering and not summary.startswith(DENIAL):
            if not any(re.sub(r"\s+", " ", f) in summary for f in answering):
                unquoted.append((question, summary, answering[0]))
    assert not contradicted, contradicted
    assert not unquoted, unquoted
