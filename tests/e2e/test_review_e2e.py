"""Plan review end to end: the real worker, the starter's `review` command and the Temporal CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle

from starter.cli.hints import program
from tests.conftest import BIN_DIR
from tests.e2e.test_end_to_end import Workers, start, worker_env, workers  # noqa: F401 - fixtures
from tests.starter.cli.test_starter import starter
from workflows.models import Depth, ResearchRequest, ResearchResult, ReviewDecision, Stage
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e
QUESTION = "How does Rust's ownership and borrowing prevent data races?"


async def pending_review(handle: WorkflowHandle[Any, Any], round_: int = 1) -> None:
    for _ in range(300):
        status = await handle.query(DeepResearchWorkflow.status)
        if status.pending_review and status.review_rounds >= round_:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"no review pending; stage {status.stage}")


async def test_review_feedback_then_own_steps_from_the_starter(
    dev_client: Client,
    worker_env: dict[str, str],
    workers: Workers,
    tmp_path: Path,
) -> None:
    workers.start()
    handle = await start(
        dev_client, worker_env, ResearchRequest(query=QUESTION, depth=Depth.LIGHT, review_plan=True)
    )
    await pending_review(handle)

    shown = await starter("status", handle.id, env=worker_env)
    assert "waiting for a review of the plan" in shown.out

    revised = await starter(
        "review", handle.id, "--feedback", "Focus on Send and Sync", env=worker_env
    )
    assert revised.code == 0 and "revise accepted" in revised.out
    await pending_review(handle, round_=2)

    steps = tmp_path / "steps.md"
    steps.write_text(
        "- The Send and Sync traits — what they promise\n- Mutex and Arc — sharing state\n"
    )
    edited = await starter("review", handle.id, "--steps", str(steps), env=worker_env)
    assert edited.code == 0, edited.err

    result: ResearchResult = await asyncio.wait_for(handle.result(), timeout=120)
    assert result.outcome is Stage.COMPLETED
    assert [r.decision for r in result.reviews] == [ReviewDecision.REVISE, ReviewDecision.APPROVE]
    assert result.plan is not None
    assert [s.title for s in result.plan.steps] == ["The Send and Sync traits", "Mutex and Arc"]

    late = await starter("review", handle.id, "--approve", env=worker_env)
    assert late.code == 2 and "already completed" in late.err


async def test_a_bad_review_is_refused_by_the_starter_in_one_line(
    dev_client: Client,
    worker_env: dict[str, str],
    workers: Workers,
    tmp_path: Path,
) -> None:
    workers.start()
    handle = await start(
        dev_client, worker_env, ResearchRequest(query=QUESTION, depth=Depth.LIGHT, review_plan=True)
    )
    await pending_review(handle)
    too_many = tmp_path / "steps.json"
    too_many.write_text('["a", "b", "c", "d"]')
    refused = await starter("review", handle.id, "--steps", str(too_many), env=worker_env)
    assert refused.code == 2
    assert refused.err.strip().startswith("error: review refused: the plan must have 1 to 3 steps")
    await handle.cancel()


async def test_plan_approved_with_the_temporal_cli_signal(
    dev_client: Client,
    dev_address: str,
    worker_env: dict[str, str],
    workers: Workers,
) -> None:
    workers.start()
    handle = await start(
        dev_client, worker_env, ResearchRequest(query=QUESTION, depth=Depth.LIGHT, review_plan=True)
    )
    await pending_review(handle)
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
            "plan_review",
            "--input",
            '{"decision": "approve"}',
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert signalled.returncode == 0, signalled.stderr
    result: ResearchResult = await asyncio.wait_for(handle.result(), timeout=120)
    assert [(r.decision, r.by) for r in result.reviews] == [(ReviewDecision.APPROVE, "person")]


async def test_attached_research_without_a_terminal_prints_the_review_command_and_exits_3(
    worker_env: dict[str, str],
    workers: Workers,
) -> None:
    workers.start()
    research_id = f"review-{uuid.uuid4().hex[:8]}"
    run = await starter(
        "research",
        QUESTION,
        "--depth",
        "light",
        "--review-plan",
        "--id",
        research_id,
        env=worker_env,
        timeout=90,
    )
    assert run.code == 3
    assert "plan to review" in run.err and f"{program()} review {research_id}" in run.err
    approved = await starter("review", research_id, "--approve", env=worker_env)
    assert approved.code == 0 and "approve accepted" in approved.out
    finished = await starter("result", research_id, "--json", env=worker_env, timeout=120)
    assert finished.code == 0
    assert json.loads(finished.out)["reviews"] == [
        {"target": "plan", "round": 1, "decision": "approve", "feedback": "", "by": "person"}
    ]
