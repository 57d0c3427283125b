"""The event stream on a real server: every event once and in order, resumed by `Last-Event-ID`
or `since` with nothing missing and nothing twice, heartbeats with data, an `end`, one poller per
research shared by its streams, and a closed stream that never touches the research.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from temporalio.client import Client

from starter.client import research_client
from starter.web.services import events
from storage import store
from tests.starter.web.conftest import (
    TOKENS,
    SseEvent,
    WebServer,
    WebWorker,
    one_line_error,
    read_stream,
    running_app,
    start,
    wait_for,
    web_config,
)
from workflows.activity_models import SaveResearchInput
from workflows.models import ResearchResult

SLOW_QUESTION = "A slow question about asyncio.gather and its results"


def research_events(stream: list[SseEvent]) -> list[SseEvent]:
    return [event for event in stream if event.id is not None]


def seqs(stream: list[SseEvent]) -> list[int]:
    return [event.id for event in research_events(stream)]  # type: ignore[misc]


def pollers(server: WebServer) -> dict[str, Any]:
    return server.app.state.backend.hub.pollers


async def test_a_stream_gives_every_event_once_in_order_then_end(web_server: WebServer) -> None:
    async with web_server.client() as client:
        research_id = await start(client, question=SLOW_QUESTION)
        response, stream = await read_stream(client, f"/api/research/{research_id}/events")
        done = (await client.get(f"/api/research/{research_id}")).json()
    assert response.headers["content-type"].startswith("text/event-stream")
    assert (
        response.headers["cache-control"] == "no-cache"
        and response.headers["x-accel-buffering"] == "no"
    )
    assert "default-src 'self'" in response.headers["content-security-policy"]
    got = seqs(stream)
    assert got == list(range(1, len(got) + 1)) and len(got) >= 10
    assert stream[-1].event == "end" and stream[-1].data == {
        "status": "completed",
        "outcome": "completed",
    }
    for event in research_events(stream):
        assert (
            event.event == event.data["kind"]
            and event.data["seq"] == event.id
            and event.data["text"]
        )
    assert research_events(stream)[-1].event == "done" and done["status"] == "completed"


@pytest.mark.parametrize("resume", ["last-event-id", "since"])
async def test_a_dropped_stream_resumes_with_nothing_missing_and_nothing_twice(
    web_server: WebServer, resume: str
) -> None:
    async with web_server.client() as client:
        research_id = await start(client, question=SLOW_QUESTION)
        path = f"/api/research/{research_id}/events"
        _, first = await read_stream(client, path, until=lambda event: event.id == 4)
        last = first[-1].id
        assert last == 4
        await asyncio.sleep(1)  # more happens while nobody listens
        if resume == "last-event-id":  # as a browser does it: the same URL, and the header
            _, rest = await read_stream(client, path, headers={"Last-Event-ID": str(last)})
        else:
            _, rest = await read_stream(client, f"{path}?since={last}")
        _, whole = await read_stream(client, path)
    assert seqs(first) + seqs(rest) == seqs(whole)
    assert seqs(whole) == list(range(1, len(seqs(whole)) + 1))
    assert rest[-1].event == "end" and whole[-1].event == "end"


async def test_last_event_id_wins_over_the_since_of_the_url(web_server: WebServer) -> None:
    async with web_server.client() as client:
        research_id = await start(client)
        await wait_for(
            client, f"/api/research/{research_id}", lambda body: body["status"] != "running"
        )
        _, stream = await read_stream(
            client, f"/api/research/{research_id}/events?since=1", headers={"Last-Event-ID": "3"}
        )
    assert seqs(stream)[0] == 4 and stream[-1].event == "end"


async def test_a_waiting_research_sends_heartbeats_with_data(
    web_server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events, "HEARTBEAT_S", 0.3)
    async with web_server.client() as client:
        research_id = await start(client, review_plan=True)
        await wait_for(
            client, f"/api/research/{research_id}", lambda body: body.get("pending_review")
        )
        _, stream = await read_stream(
            client,
            f"/api/research/{research_id}/events",
            until=lambda event: event.event == "heartbeat",
            timeout=10,
        )
        await client.post(f"/api/research/{research_id}/cancel")
    assert stream[-1].event == "heartbeat" and stream[-1].id is None
    assert set(stream[-1].data) == {"at"}
    assert any(event.event == "review_requested" for event in stream)


async def test_streams_of_one_research_share_one_poller_and_closing_them_leaves_it_running(
    web_server: WebServer,
) -> None:
    async with web_server.client() as client:
        research_id = await start(client, review_plan=True)
        await wait_for(
            client, f"/api/research/{research_id}", lambda body: body.get("pending_review")
        )
        path = f"/api/research/{research_id}/events"
        tabs = [
            asyncio.create_task(read_stream(client, path, until=lambda event: False, timeout=120))
            for _ in range(3)
        ]
        for _ in range(100):
            poller = pollers(web_server).get(research_id)
            if poller is not None and len(poller.subscribers) == 3:
                break
            await asyncio.sleep(0.05)
        assert len(pollers(web_server)[research_id].subscribers) == 3
        for tab in tabs:  # three tabs closed
            tab.cancel()
        await asyncio.gather(*tabs, return_exceptions=True)
        for _ in range(100):
            if research_id not in pollers(web_server):
                break
            await asyncio.sleep(0.05)
        assert research_id not in pollers(web_server)
        still = (await client.get(f"/api/research/{research_id}")).json()
        assert still["status"] == "running" and still["pending_review"] == "plan"
        assert (
            await client.post(f"/api/research/{research_id}/review", json={"decision": "approve"})
        ).status_code == 200
        done = await wait_for(
            client, f"/api/research/{research_id}", lambda body: body["status"] != "running"
        )
    assert done["outcome"] == "completed"


async def test_a_research_that_closes_while_its_worker_is_too_busy_to_answer_still_gets_its_whole_log(
    web_server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy machine the `events` query can miss its deadline; when the last one before `end`
    did, the streams ended without the log's tail (the page then showed a report under a log
    stopped at "awaiting answer"). Here the query times out, as the SDK reports it (TimeoutError),
    from the approval until the poller knows the research closed, and twice after that (of which
    one poll at most can come before the poller's last: the last always fails)."""
    busy = {"from_approval": False, "after_close": 2}
    query = research_client.events_as_sent

    async def too_busy(handle: Any, since: int, rpc_timeout: Any = None, **kw: Any) -> Any:
        if busy["from_approval"]:
            closed = bool(pollers(web_server)[handle.id].ending)
            if not closed or busy["after_close"]:
                busy["after_close"] -= 1 if closed else 0
                raise TimeoutError("the worker did not answer in time")
        return await query(handle, since, rpc_timeout, **kw)

    monkeypatch.setattr(events, "RETRY_END_S", 0.2)
    monkeypatch.setattr(research_client, "events_as_sent", too_busy)
    async with web_server.client() as client:
        research_id = await start(client, review_plan=True)
        path = f"/api/research/{research_id}/events"
        reading = asyncio.create_task(read_stream(client, path, timeout=90))
        await wait_for(
            client, f"/api/research/{research_id}", lambda body: body.get("pending_review")
        )
        busy["from_approval"] = True
        await client.post(f"/api/research/{research_id}/review", json={"decision": "approve"})
        _, stream = await reading
    got = seqs(stream)
    assert busy["after_close"] == 0  # the queries after the close did fail
    assert got == list(range(1, len(got) + 1))
    assert research_events(stream)[-1].event == "done"
    assert stream[-1].event == "end" and stream[-1].data["status"] == "completed"


async def test_a_stream_joining_late_gets_its_backlog_from_the_shared_poller(
    web_server: WebServer,
) -> None:
    async with web_server.client() as client:
        research_id = await start(client, question=SLOW_QUESTION)
        path = f"/api/research/{research_id}/events"
        early = asyncio.create_task(read_stream(client, path))
        _, partway = await read_stream(client, path, until=lambda event: event.id == 6)
        _, late = await read_stream(client, f"{path}?since=2")
        _, whole = await early
    assert seqs(partway) == list(range(1, 7))
    assert seqs(late) == seqs(whole)[2:]
    assert late[-1].event == "end" and whole[-1].event == "end"


async def test_someone_elses_stream_is_404_and_a_missing_one_too(web_server: WebServer) -> None:
    async with web_server.client("alice") as alice, web_server.client("bob") as bob:
        research_id = await start(alice, review_plan=True)
        response, _ = await read_stream(bob, f"/api/research/{research_id}/events")
        missing, _ = await read_stream(alice, "/api/research/research-doesnotexist/events")
        await alice.post(f"/api/research/{research_id}/cancel")
    assert one_line_error(response, 404) == f"no research with id {research_id}"
    assert one_line_error(missing, 404) == "no research with id research-doesnotexist"


async def test_while_no_worker_answers_the_stream_says_so_and_ends_when_the_research_does(
    web_worker: WebWorker, dev_client: Client
) -> None:
    config = web_config(web_worker, TOKENS, temporal_task_queue="no-worker-polls-this")
    with running_app(config, TOKENS) as server:
        async with server.client() as client:
            research_id = await start(client)
            reading = asyncio.create_task(
                read_stream(client, f"/api/research/{research_id}/events", timeout=60)
            )
            await asyncio.sleep(7)
            await dev_client.get_workflow_handle(research_id).terminate("test: no worker")
            _, stream = await reading
    kinds = [event.event for event in stream]
    assert kinds[0] == "unavailable" and kinds.count("unavailable") == 1
    assert "did not answer within 5s: no worker polls its task queue" in stream[0].data["reason"]
    assert stream[-1].event == "end" and stream[-1].data["status"] == "terminated"
    assert stream[-1].data["failure"].startswith("the research was terminated")


async def test_a_research_only_the_library_keeps_is_still_read_streamed_and_downloaded(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    async with open_web_server.client(user=None) as client:
        finished = await start(client)
        result = await wait_for(
            client, f"/api/research/{finished}", lambda body: body["status"] != "running"
        )
        kept = f"forgotten-{uuid.uuid4().hex[:8]}"  # Temporal never heard of it
        now = datetime.now(UTC)
        store.write(
            SaveResearchInput(
                workflow_id=kept,
                run_id="r1",
                started_at=now,
                finished_at=now,
                result=ResearchResult.model_validate(result),
            ),
            web_worker.db_url,
        )
        shown = (await client.get(f"/api/research/{kept}")).json()
        _, stream = await read_stream(client, f"/api/research/{kept}/events")
        download = await client.get(f"/api/research/{kept}/report?format=md")
        listed = [row["id"] for row in (await client.get("/api/research?limit=100")).json()]
    assert shown["report_markdown"] == result["report_markdown"] and shown["status"] == "completed"
    assert [event.event for event in stream] == ["end"]
    assert download.status_code == 200 and download.text.startswith("# ")
    assert kept in listed and finished in listed
