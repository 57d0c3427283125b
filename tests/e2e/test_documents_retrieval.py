"""Research over a person's documents reads the documents a question is about,
end to end: the real worker, offline engine (no model) and `sources: documents`.

Each question's documents sit among those of all the other questions of its set, one Markdown
file per source, named and headed by its title, either as a folder (`RESEARCH_CORPUS_DIR`) or as
the person's uploads (`RESEARCH_DATA_DIR/uploads/...`), where the Python documentation of the
default corpus competes with them. Every question is researched at light depth, and must READ
(fetch and pass to the researcher, not just see in a search's hits) every source its set names:
the stricter of the two readings, since the sets' claims cite every one of them.

- the claim-attribution dev set (../shared/attribution/dev.jsonl, 12 questions): at least 11;
- the held-out set (tests/support/python_docs.py, 8 questions on other Python topics, documents
  from this interpreter): at least 7, so what helps the dev set must help questions it never saw.

The figures are printed (`-s`) with what each question missed.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from temporalio.client import Client

from activities.corpus import uploads
from tests.e2e.test_end_to_end import Workers
from tests.support.python_docs import (
    DEV_SET,
    Question,
    dev_questions,
    file_name,
    held_out_questions,
)
from workflows.models import Depth, ResearchRequest, ResearchResult, Stage
from workflows.request import Sources
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

OWNER = "reader"


def write_documents(questions: list[Question], data: Path, as_uploads: bool) -> dict[str, str]:
    """Every source as a Markdown file, in one folder or as OWNER's uploads (a folder each, as
    the web app stores them); the environment that makes the worker search them."""
    if as_uploads:
        root = uploads.owner_folder(uploads.uploads_root(data), OWNER)
        folders = (root / f"{n:012x}" for n in range(1000))
        env = {}
    else:
        root = data / "my documents"
        folders = (root for _ in range(1000))
        env = {"RESEARCH_CORPUS_DIR": str(root)}
    for question in questions:
        for source, folder in zip(question.sources, folders, strict=False):
            folder.mkdir(parents=True, exist_ok=True)
            text = f"# {source.title}\n\n{source.text}\n"
            (folder / file_name(source.title)).write_text(text, "utf-8")
    return {**env, "RESEARCH_DATA_DIR": str(data)}


def read_files(result: ResearchResult) -> set[str]:
    """The files a research read. With a plan, its sources are the pages its steps read (a page
    read in an earlier step counts); a direct answer's sources are search snippets, read by no one."""
    if result.plan is None:
        return set()
    return {Path(unquote(urlsplit(s.url).path)).name for s in result.sources}


async def missed_sources(
    client: Client, env: dict[str, str], questions: list[Question]
) -> dict[str, list[str]]:
    """Per question whose research left any of its sources unread, the files it did not read."""
    workers = Workers(env)
    workers.start()
    missed: dict[str, list[str]] = {}
    try:
        for question in questions:
            handle = await client.start_workflow(
                DeepResearchWorkflow.run,
                ResearchRequest(
                    query=question.question,
                    depth=Depth.LIGHT,
                    max_clarifications=0,
                    sources=Sources.DOCUMENTS,
                    owner=OWNER,
                ),
                id=f"docs-read-{uuid.uuid4().hex[:8]}",
                task_queue=env["TEMPORAL_TASK_QUEUE"],
            )
            result: ResearchResult = await asyncio.wait_for(handle.result(), timeout=180)
            assert result.outcome is Stage.COMPLETED, result.report_markdown
            unread = {file_name(s.title) for s in question.sources} - read_files(result)
            if unread:
                missed[question.id] = sorted(unread)
    finally:
        workers.stop_all()
    return missed


@pytest.mark.parametrize("as_uploads", [False, True], ids=["folder", "uploads"])
@pytest.mark.parametrize("which", ["dev", "held-out"])
async def test_a_research_over_documents_reads_the_sources_its_question_is_about(
    dev_client: Client, subprocess_env: dict[str, str], tmp_path: Path, which: str, as_uploads: bool
) -> None:
    if which == "dev" and not DEV_SET.exists():
        pytest.skip("needs ../shared/attribution/dev.jsonl (not in this clone)")
    questions = dev_questions() if which == "dev" else held_out_questions()
    env = {**subprocess_env, **write_documents(questions, tmp_path / "data", as_uploads)}

    missed = await missed_sources(dev_client, env, questions)

    met = len(questions) - len(missed)
    print(
        f"\n{which}, {'uploads' if as_uploads else 'folder'}: {met} of {len(questions)} questions read every source; missed {missed}"
    )
    assert met >= len(questions) - 1, missed
