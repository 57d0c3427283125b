"""Standing research caps hold under concurrent creates: every create counts and
creates holding its user's lease in the library (starter/client/quota_locks.py), against the real
Temporal dev server and a real SQLite library, with the creates sent all at once."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from temporalio.client import Client

from settings import Settings
from starter.client import quota_locks, standing
from starter.client.errors import ClientError, Kind
from starter.client.schedule_pace import runs_per_day
from workflows.models import ResearchRequest

QUESTION = "Which dragonflies hunt over the Camargue marshes in June?"


def cfg(tmp_path: Path, **extra: Any) -> Settings:
    return Settings(
        llm_provider="offline", research_db_url=f"sqlite:///{tmp_path / 'lib.sqlite'}", **extra
    )


async def at_once(client: Client, settings: Settings, owner: str, n: int, **spec: Any) -> list[Any]:
    request = ResearchRequest(query=QUESTION)
    return await asyncio.gather(
        *(standing.create(client, settings, request, owner, **spec) for _ in range(n)),
        return_exceptions=True,
    )


def outcomes(results: list[Any]) -> tuple[list[str], list[ClientError]]:
    made = [r for r in results if isinstance(r, str)]
    refused = [r for r in results if isinstance(r, ClientError)]
    assert len(made) + len(refused) == len(results), [r for r in results if r not in made]
    return made, refused


async def test_concurrent_creates_accept_exactly_the_cap(
    dev_client: Client, tmp_path: Path
) -> None:
    owner, limit, sent = f"race-{uuid.uuid4().hex[:6]}", 7, 26
    settings = cfg(tmp_path, standing_max_per_user=limit)
    made, refused = outcomes(await at_once(dev_client, settings, owner, sent, every="5d"))
    assert len(made) == limit, (len(made), [str(r) for r in refused][:3])
    assert all(r.kind is Kind.LIMITED for r in refused)
    assert any(f"STANDING_MAX_PER_USER={limit}" in str(r) for r in refused)
    listed = await standing.list_standing(dev_client, settings, owner)
    assert sorted(v.id for v in listed) == sorted(made)


async def test_concurrent_fast_creates_stay_under_the_runs_a_day(
    dev_client: Client, tmp_path: Path
) -> None:
    owner, per_day, sent = f"race-{uuid.uuid4().hex[:6]}", 1500, 9
    settings = cfg(tmp_path, standing_max_runs_per_day=per_day)
    made, refused = outcomes(await at_once(dev_client, settings, owner, sent, every="3m"))
    # 480 runs a day each: three fit in 1,500, a fourth would not
    assert len(made) == 3, (len(made), [str(r) for r in refused][:3])
    assert all(
        r.kind is Kind.LIMITED and f"STANDING_MAX_RUNS_PER_DAY={per_day}" in str(r) for r in refused
    )
    total = 0
    for standing_id in made:
        described = await dev_client.get_schedule_handle(standing_id).describe()
        total += runs_per_day(described.schedule.spec)
    assert total <= per_day


async def test_a_lease_left_by_a_dead_holder_expires(tmp_path: Path, monkeypatch: Any) -> None:
    settings = cfg(tmp_path)
    assert await asyncio.to_thread(quota_locks._take, settings, "standing:zed", "dead")
    monkeypatch.setattr(quota_locks, "WAIT_S", 0.3)
    try:
        async with quota_locks.held(settings, "standing:zed"):
            raise AssertionError("taken while another holds it")
    except ClientError as err:
        assert err.kind is Kind.LIMITED and err.retry_after_s
    monkeypatch.setattr(quota_locks, "LEASE_S", -1)  # what LEASE_S later looks like
    assert await asyncio.to_thread(quota_locks._take, settings, "standing:yew", "dead")
    async with quota_locks.held(settings, "standing:yew"):
        pass
