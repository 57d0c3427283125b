"""A standing research's scheduled run counts against its owner's running limit: the
schedule starts the workflow itself, so the run asks first (workflows/standing/admission.py, the
real `owner_running` activity over Temporal's visibility) and, at the limit, ends at once saying
why. Against the real dev server, a real schedule and a real SQLite library."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

import activities.standing
from settings import Settings
from starter.client import research_client, standing
from tests.support.doubles import Script
from workflows.models import ResearchRequest, Stage
from workflows.research import DeepResearchWorkflow

QUESTION = "Which orchids flower on the limestone of the Burren in May?"


async def waiting(client: Client, cfg: Settings, owner: str) -> str:
    """A research of OWNER's that keeps running: it waits an hour for its plan review."""
    request = ResearchRequest(query=QUESTION, review_plan=True)
    run = research_client.StartResearch(request=request, owner=owner)
    await research_client.start(client, cfg, run)
    return run.id


async def test_a_scheduled_run_past_the_owners_running_limit_is_skipped(
    dev_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = 3
    owner, other = f"ann-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    cfg = Settings(
        _env_file=None,
        llm_provider="offline",
        temporal_task_queue=f"tq-{uuid.uuid4().hex[:8]}",
        research_db_url=f"sqlite:///{tmp_path / 'lib.sqlite'}",
        research_running_per_user=limit,
    )
    monkeypatch.setattr(activities.standing, "settings", lambda: cfg)  # the worker's settings
    script = Script(owner_running=activities.standing.owner_running)
    started: list[str] = []
    async with Worker(
        dev_client,
        task_queue=cfg.temporal.task_queue,
        workflows=[DeepResearchWorkflow],
        activities=script.activities(),
    ):
        try:
            started += [await waiting(dev_client, cfg, owner) for _ in range(limit)]
            started.append(await waiting(dev_client, cfg, other))  # not ann's: not counted
            standing_id = await standing.create(
                dev_client, cfg, ResearchRequest(query=QUESTION), owner, every="5d"
            )
            skipped = await standing.run_now(dev_client, cfg, standing_id, owner)
            result = await research_client.handle(dev_client, skipped).result()
            said = f"Skipped: {limit} researches of yours were running"
            assert result.outcome is Stage.CANCELLED and said in result.report_markdown
            assert any(said in note for note in result.notes)
            assert result.stage_history == [Stage.ROUTING, Stage.CANCELLED]  # nothing researched
            assert not result.sources and result.stats.llm_calls == 0
            # one of hers ends: the next run goes ahead
            await dev_client.get_workflow_handle(started[0]).terminate("done with it")
            await asyncio.sleep(1.1)  # a run's id is the schedule's plus the second it started
            ran = await _run_when_free(dev_client, cfg, standing_id, owner)
            result = await research_client.handle(dev_client, ran).result()
            assert result.outcome is Stage.COMPLETED and "Skipped" not in result.report_markdown
            counted = [c for c in script.calls["owner_running"] if c.research_id == ran]
            assert counted and counted[0].owner == owner
        finally:
            for research_id in started:
                await _ended(dev_client, research_id)


async def _run_when_free(client: Client, cfg: Settings, standing_id: str, owner: str) -> str:
    """A run now once the last one has ended (runs never overlap)."""
    for _ in range(100):
        try:
            return await standing.run_now(client, cfg, standing_id, owner)
        except Exception as err:  # noqa: BLE001 - the previous run still closing: 409
            if "already running" not in str(err):
                raise
        await asyncio.sleep(0.1)
    raise AssertionError("the previous run never ended")


async def _ended(client: Client, research_id: str) -> Any:
    try:
        await client.get_workflow_handle(research_id).terminate("test over")
    except Exception:  # noqa: BLE001 - already ended
        pass
