"""The client as the one door of every front end, against a real Temporal dev server: `find` sees
only the person's own research (another user's, in Temporal or in the library, is unknown in the
words of an id that does not exist), "my research" is one list of Temporal's and the library's
research with each research once, what it hands out names local sources as people may see them,
and Temporal's own failures reach a front end as a `ClientError` of a kind."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from settings import Settings
from starter.client import library, mine, research_client
from starter.client.errors import ClientError, Kind
from starter.client.finding import find, find_running
from starter.client.session import Session
from starter.client.temporal import translated
from storage import store
from tests.activities.test_library import T0, record
from tests.starter.cli.test_starter import closed_port
from workflows.models import ResearchRequest, Source

QUESTION = "How do otters keep warm in cold water?"


@pytest.fixture
def cfg(tmp_path: Path) -> Settings:
    return Settings(
        llm_provider="offline",
        temporal_task_queue=f"nobody-{uuid.uuid4().hex[:6]}",  # nothing runs them
        research_db_url=f"sqlite:///{tmp_path / 'library.sqlite'}",
    )


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def started(client: Client, cfg: Settings, owner: str, research_id: str) -> None:
    run = research_client.StartResearch(
        request=ResearchRequest(query=QUESTION), owner=owner, id=research_id
    )
    await research_client.start(client, cfg, run)


def stored(cfg: Settings, owner: str, research_id: str, **update: object) -> None:
    saved = record(research_id, f"run-{research_id}", T0, query=QUESTION)
    result = saved.result.model_copy(update={"owner": owner, **update})
    store.write(saved.model_copy(update={"result": result}), cfg.library.db_url)


async def test_another_users_research_is_not_found_in_temporal_and_in_the_library(
    dev_client: Client, cfg: Settings
) -> None:
    session = Session(cfg, client=dev_client)
    running, kept = unique("running"), unique("kept")
    await started(dev_client, cfg, "carol", running)
    stored(cfg, "carol", kept)
    try:
        for research_id in (running, kept, unique("nobodys")):
            with pytest.raises(ClientError) as refused:
                await find(session, research_id, "dave")
            assert refused.value.kind is Kind.NOT_FOUND
            assert str(refused.value) == f"no research with id {research_id}"
        hers = await find(session, running, "carol")
        assert hers.handle is not None and hers.running and hers.owner == "carol"
        only_stored = await find(session, kept, "carol")
        assert only_stored.handle is None and only_stored.stored is not None
        assert only_stored.state == "completed"
        with pytest.raises(ClientError, match=f"^no research with id {kept}$"):
            await find_running(session, kept, "carol")  # nothing of it left to follow
    finally:
        await dev_client.get_workflow_handle(running).terminate("done")


async def test_my_research_merges_temporal_and_the_library_once_each(
    dev_client: Client, cfg: Settings
) -> None:
    session = Session(cfg, client=dev_client)
    both, stored_only, theirs = unique("both"), unique("stored"), unique("theirs")
    await started(dev_client, cfg, "erin", both)
    await started(dev_client, cfg, "frank", theirs)
    stored(cfg, "erin", both)
    stored(cfg, "erin", stored_only)
    store.rename_research(cfg.library.db_url, both, "erin", "Otters, warmly")
    try:
        rows = await mine.my_research(session, limit=50, owner="erin")
        ids = [row.id for row in rows]
        assert sorted(ids) == sorted([both, stored_only])  # each once, nobody else's
        row = rows[ids.index(both)]
        # Temporal's status (it runs) with the library's title; the library's own row as stored
        assert (row.status, row.title, row.question) == ("running", "Otters, warmly", QUESTION)
        assert rows[ids.index(stored_only)].status == "completed"
        assert ids[0] == both  # newest started first: the library's one started at T0
        running = await mine.my_research(session, limit=50, owner="erin", running_only=True)
        assert [r.id for r in running] == [both]
    finally:
        for research_id in (both, theirs):
            await dev_client.get_workflow_handle(research_id).terminate("done")


async def test_what_the_client_hands_out_names_local_sources(
    dev_client: Client, cfg: Settings
) -> None:
    session = Session(cfg, client=dev_client)
    kept = unique("local")
    secret = Source(id=1, url="file:///srv/secret/corpus/otters.md", title="Otters")
    stored(cfg, "gina", kept, sources=[secret])
    found = await find(session, kept, "gina")
    assert found.stored is not None
    assert [s.url for s in found.stored.result.sources] == ["otters.md"]
    shown = await library.stored_research(session, kept, owner="gina")
    assert "/srv/secret" not in shown.model_dump_json()


async def test_temporals_failures_reach_a_front_end_as_client_errors(
    dev_client: Client, cfg: Settings
) -> None:
    unknown = research_client.handle(dev_client, unique("nowhere"))
    with pytest.raises(ClientError) as gone:
        await research_client.cancel(unknown, timedelta(seconds=5))
    assert gone.value.kind is Kind.NOT_FOUND and isinstance(gone.value.__cause__, RPCError)
    with pytest.raises(ClientError) as waited:
        await research_client.result(unknown, timedelta(seconds=5), cfg=cfg)
    assert waited.value.kind is Kind.NOT_FOUND
    refused = RPCError("no", RPCStatusCode.PERMISSION_DENIED, b"")
    assert translated(refused).kind is Kind.UNREACHABLE
    late = RPCError("late", RPCStatusCode.DEADLINE_EXCEEDED, b"")
    assert translated(late, "r-1").kind is Kind.NO_ANSWER
    # Temporal away: the library still answers for what it has; otherwise the failure does
    away = Settings(
        llm_provider="offline",
        temporal_address=f"127.0.0.1:{closed_port()}",
        research_db_url=cfg.library.db_url,
    )
    kept = unique("kept")
    stored(away, "local", kept)
    assert (await find(Session(away), kept)).stored is not None
    with pytest.raises(ClientError) as unreachable:
        await find(Session(away), unique("missing"))
    assert unreachable.value.kind is Kind.UNREACHABLE
    assert str(unreachable.value).startswith("cannot reach Temporal at 127.0.0.1:")
