"""A chosen research id is never reused across owners. Another user's id, finished
in Temporal or kept only in the library (its history gone), is refused as a conflict in one line,
so its owner never finds a stranger's research where theirs was; the owner may reuse their own."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from settings import Settings
from starter.client import research_client
from starter.client.errors import ClientError, Kind
from storage import store
from tests.activities.test_library import T0, record, rich_result
from workflows.models import ResearchRequest

QUESTION = "How do beavers choose where to build a dam?"


def run(owner: str, research_id: str) -> research_client.StartResearch:
    return research_client.StartResearch(
        request=ResearchRequest(query=QUESTION), owner=owner, id=research_id
    )


@pytest.fixture
def cfg(tmp_path: Path) -> Settings:
    return Settings(
        llm_provider="offline",
        temporal_task_queue=f"nobody-{uuid.uuid4().hex[:6]}",  # nothing runs them
        research_db_url=f"sqlite:///{tmp_path / 'library.sqlite'}",
    )


async def test_another_users_finished_id_in_temporal_is_a_conflict(
    dev_client: Client, cfg: Settings
) -> None:
    chosen = f"beavers-{uuid.uuid4().hex[:6]}"
    first = await research_client.start(dev_client, cfg, run("carol", chosen))
    await first.terminate("finished, as far as this test goes")
    with pytest.raises(ClientError) as refused:
        await research_client.start(dev_client, cfg, run("dave", chosen))
    assert refused.value.kind is Kind.CONFLICT
    assert str(refused.value) == (f"the id {chosen} is taken: choose another (or leave the id out)")
    assert await research_client.owner_of(dev_client.get_workflow_handle(chosen), cfg) == "carol"
    again = await research_client.start(dev_client, cfg, run("carol", chosen))  # hers to reuse
    await again.terminate("done")


async def test_another_users_id_kept_only_in_the_library_is_a_conflict(
    dev_client: Client, cfg: Settings
) -> None:
    chosen = f"dams-{uuid.uuid4().hex[:6]}"
    saved = record(chosen, "run-gone", T0)
    saved = saved.model_copy(
        update={"result": rich_result(QUESTION).model_copy(update={"owner": "erin"})}
    )
    store.write(saved, cfg.library.db_url)
    with pytest.raises(ClientError) as refused:
        await research_client.start(dev_client, cfg, run("frank", chosen))
    assert refused.value.kind is Kind.CONFLICT
    mine = await research_client.start(dev_client, cfg, run("erin", chosen))
    await mine.terminate("done")


def test_checking_an_id_never_makes_a_library_that_is_not_there(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "library.sqlite"
    assert store.owner_of(f"sqlite:///{missing}", "research-1") is None
    assert not missing.exists() and not missing.parent.exists()
