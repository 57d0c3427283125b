"""End to end on the dev server: the real worker process, activities, offline engine and local
corpus (notes on Rust this project writes itself, tests/support/corpus.py: any clone has them)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle

from storage.public_names import PublicNames
from tests.conftest import BIN_DIR, REPO
from workflows.kit.citations import cited_ids
from workflows.models import Depth, ResearchRequest, ResearchResult, Stage, StepStatus, Verdict
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

QUESTION = "How does Rust's ownership and borrowing prevent data races?"


@pytest.fixture
def worker_env(subprocess_env: dict[str, str], rust_notes: Path) -> dict[str, str]:
    return {**subprocess_env, "RESEARCH_CORPUS_DIR": str(rust_notes)}


class Workers:
    """Worker processes started by a test and always stopped by it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.processes: list[subprocess.Popen[str]] = []

    def start(self) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "worker.py"], cwd=REPO, env=self.env, stderr=subprocess.PIPE, text=True
        )
        self.processes.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()


@pytest.fixture
def workers(worker_env: dict[str, str]) -> Iterator[Workers]:
    started = Workers(worker_env)
    yield started
    started.stop_all()


async def start(
    client: Client, env: dict[str, str], request: ResearchRequest
) -> WorkflowHandle[Any, Any]:
    return await client.start_workflow(
        DeepResearchWorkflow.run,
        request,
        id=f"e2e-{uuid.uuid4().hex[:8]}",
        task_queue=env["TEMPORAL_TASK_QUEUE"],
    )


def activity_counts(events: Any) -> tuple[Counter[str], int, int]:
    """Scheduled activities by type, how many completed, and the most attempts any one took."""
    scheduled: Counter[str] = Counter()
    completed = 0
    attempts = 1
    for event in events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled[event.activity_task_scheduled_event_attributes.activity_type.name] += 1
        elif event.HasField("activity_task_completed_event_attributes"):
            completed += 1
        elif event.HasField("activity_task_started_event_attributes"):
            attempts = max(attempts, event.activity_task_started_event_attributes.attempt)
    return scheduled, completed, attempts


def assert_cited_report(result: ResearchResult, corpus: Path) -> None:
    ids = {s.id for s in result.sources}
    cited = cited_ids(result.report_markdown)
    assert cited, result.report_markdown
    assert set(cited) <= ids
    for source in result.sources:
        assert source.url.startswith(corpus.as_uri()), source.url


def assert_evidence_backs_the_steps(result: ResearchResult) -> None:
    """Every cited source has evidence, every piece of evidence is real text of a cited source."""
    assert result.plan is not None
    cited = {n for step in result.plan.steps for n in step.source_ids}
    assert cited and {e.source_id for e in result.evidence} == cited
    by_id = {s.id: s for s in result.sources}
    for item in result.evidence:
        assert 0 < len(item.text) <= 600
        document = Path(by_id[item.source_id].url.removeprefix("file://")).read_text(
            encoding="utf-8"
        )
        words = item.text.rstrip("…").split()[:8]
        assert " ".join(words) in " ".join(document.split()), item.text


async def test_a_research_completes_with_a_report_whose_every_citation_resolves(
    dev_client: Client, worker_env: dict[str, str], workers: Workers
) -> None:
    workers.start()
    handle = await start(
        dev_client, worker_env, ResearchRequest(query=QUESTION, depth=Depth.MEDIUM)
    )
    result: ResearchResult = await asyncio.wait_for(handle.result(), timeout=120)
    assert result.outcome is Stage.COMPLETED
    assert_cited_report(result, Path(worker_env["RESEARCH_CORPUS_DIR"]))
    assert result.plan is not None
    assert sum(s.status is StepStatus.COMPLETED for s in result.plan.steps) >= 3
    assert any(
        "ownership" in s.title.lower() or "references" in s.title.lower() for s in result.sources
    )
    assert "offline" in result.report_markdown.lower()
    assert result.engine == "offline"
    assert (
        result.stats.searches > 0 and result.stats.pages_fetched > 0 and result.stats.llm_calls > 0
    )
    assert_evidence_backs_the_steps(result)
    history = await handle.fetch_history()
    size = len(history.to_json())
    assert size < 2_000_000, f"history of a medium research is {size} bytes"


async def test_a_clarification_answered_with_the_temporal_cli_signal(
    dev_client: Client, dev_address: str, worker_env: dict[str, str], workers: Workers
) -> None:
    workers.start()
    handle = await start(
        dev_client, worker_env, ResearchRequest(query="Tell me more about it", depth=Depth.LIGHT)
    )
    for _ in range(200):
        status = await handle.query(DeepResearchWorkflow.status)
        if status.pending_question:
            break
        await asyncio.sleep(0.1)
    assert status.pending_question and status.stage is Stage.AWAITING_ANSWER
    signalled = subprocess.run(
        [
            str(BIN_DIR / "temporal"),
            "workflow",
            "signal",
            "--address",
            dev_address,
            "--workflow-id",
            handle.id,
            "--name",
            "clarification_answer",
            "--input",
            '"Rust ownership and borrowing"',
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert signalled.returncode == 0, signalled.stderr
    result: ResearchResult = await asyncio.wait_for(handle.result(), timeout=120)
    assert result.clarifications[0].answer == "Rust ownership and borrowing"
    assert result.outcome is Stage.COMPLETED
    assert_cited_report(result, Path(worker_env["RESEARCH_CORPUS_DIR"]))


async def test_a_worker_killed_mid_research_is_replaced_and_nothing_completed_is_redone(
    dev_client: Client, worker_env: dict[str, str], workers: Workers
) -> None:
    request = ResearchRequest(query=QUESTION, depth=Depth.EXTENDED)

    # The same research without a crash, for the activity counts to compare with.
    workers.start()
    calm = await start(dev_client, worker_env, request)
    calm_result: ResearchResult = await asyncio.wait_for(calm.result(), timeout=180)
    calm_counts, calm_completed, _ = activity_counts((await calm.fetch_history()).events)

    crashed = await start(dev_client, worker_env, request)
    for _ in range(600):
        status = await crashed.query(DeepResearchWorkflow.status)
        if status.plan and sum(s.status is StepStatus.COMPLETED for s in status.plan.steps) >= 2:
            break
        await asyncio.sleep(0.02)
    workers.processes[0].kill()  # SIGKILL: no graceful shutdown
    workers.processes[0].wait()
    workers.start()
    result: ResearchResult = await asyncio.wait_for(crashed.result(), timeout=240)

    counts, completed, max_attempts = activity_counts((await crashed.fetch_history()).events)
    assert result.outcome is Stage.COMPLETED
    assert result.report_markdown == calm_result.report_markdown
    assert counts == calm_counts, "the crash changed which activities ran"
    assert completed == calm_completed == sum(counts.values()), "an activity was scheduled twice"
    assert max_attempts <= 2  # at most the one activity that was running when the worker died


async def test_a_finished_research_is_verified_kept_in_the_library_and_can_be_followed_up(
    dev_client: Client, worker_env: dict[str, str], workers: Workers
) -> None:
    """The offline engine's lexical verification on the real corpus, the library written by the
    worker and read by the starter, and a follow-up whose pronoun the earlier report resolves."""
    workers.start()
    handle = await start(dev_client, worker_env, ResearchRequest(query=QUESTION, depth=Depth.LIGHT))
    result: ResearchResult = await asyncio.wait_for(handle.result(), timeout=120)

    summary = result.verification
    assert summary is not None and summary.method == "lexical" and summary.claims > 0
    assert summary.claims == len(result.claims) and summary.share_supported >= 0.5
    assert all(c.verdict is not Verdict.UNVERIFIED and c.checked_by for c in result.claims)
    assert result.critique is not None and 0 <= result.critique.quality <= 1
    assert_cited_report(result, Path(worker_env["RESEARCH_CORPUS_DIR"]))

    def starter(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "starter", *args],
            cwd=REPO,
            env=worker_env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    shown = starter("show", handle.id, "--json")
    assert shown.returncode == 0, shown.stderr
    # the library's copy, its local sources named inside the corpus
    named = PublicNames(Path(worker_env["RESEARCH_CORPUS_DIR"])).model(result)
    assert ResearchResult.model_validate(json.loads(shown.stdout)["result"]) == named
    assert "file:" not in shown.stdout and worker_env["RESEARCH_CORPUS_DIR"] not in shown.stdout

    follow = starter(
        "research",
        "What are its limitations?",
        "--follow-up",
        handle.id,
        "--depth",
        "light",
        "--json",
    )
    assert follow.returncode == 0, follow.stderr  # 3 would mean it asked back
    later = ResearchResult.model_validate_json(follow.stdout)
    assert later.follow_up_of == handle.id and Stage.CLARIFYING not in later.stage_history
    listed = starter("history", "--json")
    assert [e["workflow_id"] for e in json.loads(listed.stdout)][1] == handle.id

    unknown = starter("research", "What are its limitations?", "--follow-up", "research-nope")
    assert unknown.returncode == 2
    assert (
        unknown.stderr.strip().splitlines()[-1]
        == "error: no research with id research-nope in the library or in Temporal"
    )
