"""Standing research end to end, through the HTTP API: the real worker process on the
dev server (offline engine, local corpus in a folder of the test's own), the web app on loopback,
and a webhook receiver that is a real local HTTP server.

A standing research runs twice (run now); a note added to the corpus between the runs is among
the second run's new sources and its report opens with what changed; the receiver gets signed
events for both completions, for the change and for a research waiting for its plan review; a
third run after the note was renamed (the same text under another name) finds nothing changed and
sends no `standing.changed`; pause holds; another user can neither see nor steer it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from settings import Settings
from tests.e2e.test_end_to_end import Workers
from tests.starter.web.conftest import running_app
from tests.support.corpus import write_rust_notes
from tests.support.http_doubles import local_server, serving

pytestmark = pytest.mark.e2e

QUESTION = "How does Rust's ownership and borrowing prevent data races?"
SECRET = "whsec-test-0123456789"
TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdef"}
NEW_NOTE = (
    "fearless-concurrency.md",
    """\
# Fearless concurrency: how ownership and borrowing prevent data races

Rust's ownership and borrowing rules prevent data races at compile time: a data race needs two
threads touching the same data with one of them writing, and the borrow checker refuses a mutable
borrow while any other borrow of the data is alive, across threads as within one.

Ownership moves a value into the thread that uses it, so no other thread keeps access to it, and
shared mutable state must go through types such as Mutex that hand out one mutable borrow at a time.
""",
)


class Receiver:
    """Every POST, kept with its raw body and headers."""

    def __init__(self) -> None:
        self.posts: list[tuple[dict[str, str], bytes]] = []
        self.lock = threading.Lock()
        self.url = ""

    def events(self) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(body) for _, body in self.posts]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.posts.append((dict(self.headers), raw))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, str]]:
    found = Receiver()
    with serving(local_server(found.handler())) as server:
        found.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        yield found, found.url


def signed(headers: dict[str, str], raw: bytes, url: str) -> bool:
    """docs/standing-research.md's check: `t=...,v1=...` over `<t>.<url>.<raw body>`."""
    given = {k.lower(): v for k, v in headers.items()}.get("x-research-signature", "")
    fields = dict(part.split("=", 1) for part in given.split(",") if "=" in part)
    signed_text = f"{fields.get('t', '')}.{url}.".encode() + raw
    expected = hmac.new(SECRET.encode(), signed_text, hashlib.sha256).hexdigest()
    return abs(time.time() - int(fields.get("t", "0"))) <= 300 and hmac.compare_digest(
        expected, fields.get("v1", "")
    )


async def wait_until(check: Any, what: str, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = await check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        await asyncio.sleep(0.3)


async def finished(client: httpx.AsyncClient, research_id: str) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        response = await client.get(f"/api/research/{research_id}")
        body = response.json()
        return body if response.status_code == 200 and body.get("running") is False else None

    return await wait_until(check, f"{research_id} finished")


async def test_a_standing_research_runs_twice_says_what_changed_and_notifies(
    dev_client: Client,
    subprocess_env: dict[str, str],
    tmp_path: Path,
    receiver: tuple[Receiver, str],
) -> None:
    hook, hook_url = receiver
    corpus = write_rust_notes(tmp_path / "notes")
    env = {
        **subprocess_env,
        "RESEARCH_CORPUS_DIR": str(corpus),
        "RESEARCH_WEBHOOKS": hook_url,
        "RESEARCH_WEBHOOK_SECRET": SECRET,
        "WEBHOOK_ALLOW_PRIVATE": "1",
        "RESEARCH_PUBLIC_URL": "http://research.example",
    }
    workers = Workers(env)
    workers.start()
    config = Settings(
        _env_file=None,
        temporal_address=env["TEMPORAL_ADDRESS"],
        temporal_task_queue=env["TEMPORAL_TASK_QUEUE"],
        research_db_url=env["RESEARCH_DB_URL"],
        llm_provider="offline",
        research_api_tokens=",".join(f"{n}:{t}" for n, t in TOKENS.items()),
    )
    try:
        with running_app(config, TOKENS) as web:
            async with (
                httpx.AsyncClient(base_url=web.url, headers=web.auth("alice"), timeout=60) as alice,
                httpx.AsyncClient(base_url=web.url, headers=web.auth("bob"), timeout=60) as bob,
            ):
                await _journey(alice, bob, hook, corpus, dev_client)
    finally:
        workers.stop_all()


async def _journey(
    alice: httpx.AsyncClient,
    bob: httpx.AsyncClient,
    hook: Receiver,
    corpus: Path,
    temporal: Client,
) -> None:
    # bad input: one line, 422
    bad = await alice.post("/api/standing", json={"question": QUESTION, "every": "often"})
    assert bad.status_code == 422 and "every" in bad.json()["error"]
    created = await alice.post(
        "/api/standing", json={"question": QUESTION, "every": "7d", "depth": "light"}
    )
    assert created.status_code == 201, created.text
    standing_id = created.json()["id"]

    listed = (await alice.get("/api/standing")).json()
    assert [s["id"] for s in listed] == [standing_id]
    assert listed[0]["every"] == "7d" and listed[0]["paused"] is False
    assert listed[0]["next_run_at"] and listed[0]["owner"] == "alice"

    # another user can neither see nor steer it
    assert (await bob.get("/api/standing")).json() == []
    for method, path in [
        ("GET", f"/api/standing/{standing_id}"),
        ("POST", f"/api/standing/{standing_id}/run"),
        ("POST", f"/api/standing/{standing_id}/pause"),
        ("POST", f"/api/standing/{standing_id}/resume"),
        ("DELETE", f"/api/standing/{standing_id}"),
    ]:
        response = await bob.request(method, path)
        assert response.status_code == 404, (path, response.text)
        assert response.json() == {"error": f"no standing research with id {standing_id}"}

    # first run
    run = await alice.post(f"/api/standing/{standing_id}/run")
    assert run.status_code == 202, run.text
    first_id = run.json()["research_id"]
    assert (await bob.get(f"/api/research/{first_id}")).status_code == 404
    first = await finished(alice, first_id)
    assert first["outcome"] == "completed" and first["standing_id"] == standing_id
    assert first["changes"] is None and "What changed since" not in first["report_markdown"]

    # a note added between the runs
    name, text = NEW_NOTE
    (corpus / name).write_text(text, encoding="utf-8")
    await asyncio.sleep(2.5)  # the local index looks at the folder at most every 2 s
    run = await alice.post(f"/api/standing/{standing_id}/run")
    assert run.status_code == 202, run.text
    second_id = run.json()["research_id"]
    assert second_id != first_id
    second = await finished(alice, second_id)
    assert second["outcome"] == "completed"
    changes = second["changes"]
    assert changes["since_research_id"] == first_id
    new_urls = [s["url"] for s in changes["new_sources"]]
    assert name in new_urls, (new_urls, second["sources"])  # by name, never the server's path
    assert "## What changed since" in second["report_markdown"]
    assert "fearless" in second["report_markdown"].lower()

    shown = (await alice.get(f"/api/standing/{standing_id}")).json()
    runs = {r["research_id"]: r for r in shown["runs"]}
    assert set(runs) >= {first_id, second_id}
    assert runs[second_id]["changed"] is True and runs[first_id]["changed"] is False
    assert shown["last_research_id"] == second_id

    # the pages: the list with its last run and changes, the run's changes beside the previous report
    page = await alice.get("/standing")
    assert page.status_code == 200 and QUESTION.replace("'", "&#39;") in page.text
    assert "Create standing research" in page.text and second_id in page.text
    assert "changed" in page.text
    run_page = (await alice.get(f"/research/{second_id}")).text
    assert "What changed since" in run_page  # the report's first section, said once
    assert run_page.count("What changed since") == 1 and "The previous run</h2>" in run_page
    assert "The previous run&#39;s report" in run_page or "previous run's report" in run_page
    assert "Research again on a schedule" in (await alice.get(f"/research/{first_id}")).text
    assert standing_id not in (await bob.get("/standing")).text

    # a research waiting for its plan review is announced with its page
    waiting = await alice.post(
        "/api/research", json={"question": QUESTION, "depth": "light", "review_plan": True}
    )
    waiting_id = waiting.json()["id"]

    async def all_events() -> list[dict[str, Any]] | None:
        events = hook.events()
        kinds = {(e["event"], e["id"]) for e in events}
        wanted = {
            ("research.completed", first_id),
            ("research.completed", second_id),
            ("standing.changed", second_id),
            ("research.waiting", waiting_id),
        }
        return events if wanted <= kinds else None

    events = await wait_until(all_events, "the four notifications", timeout=60)
    assert all(signed(h, raw, hook.url) for h, raw in hook.posts), "every event is signed"
    by = {(e["event"], e["id"]): e for e in events}
    wait = by[("research.waiting", waiting_id)]
    assert wait["waiting_for"] == "plan_review"
    assert wait["url"] == f"http://research.example/research/{waiting_id}"
    assert wait["owner"] == "alice" and wait["text"]
    change = by[("standing.changed", second_id)]
    assert change["standing_id"] == standing_id
    assert name in [s["url"] for s in change["changes"]["new_sources"]]
    assert by[("research.completed", first_id)]["question"] == QUESTION
    await alice.post(f"/api/research/{waiting_id}/cancel")

    await _the_same_note_renamed_is_no_change(alice, hook, corpus, standing_id, second_id)

    # pause holds: paused, no next run; resume brings it back
    paused = await alice.post(f"/api/standing/{standing_id}/pause")
    assert paused.status_code == 200 and paused.json()["paused"] is True
    assert paused.json()["next_run_at"] is None
    described = await temporal.get_schedule_handle(standing_id).describe()
    assert described.schedule.state.paused
    resumed = (await alice.post(f"/api/standing/{standing_id}/resume")).json()
    assert resumed["paused"] is False and resumed["next_run_at"]

    # deleted for good; its runs stay
    assert (await alice.delete(f"/api/standing/{standing_id}")).status_code == 200
    assert (await alice.get(f"/api/standing/{standing_id}")).status_code == 404
    assert (await alice.get(f"/api/research/{first_id}")).status_code == 200


async def _the_same_note_renamed_is_no_change(
    alice: httpx.AsyncClient, hook: Receiver, corpus: Path, standing_id: str, second_id: str
) -> None:
    """The note renamed between runs (its text unchanged): no new source, none gone, the same
    findings; the report says nothing changed and no `standing.changed` is sent."""
    name, _ = NEW_NOTE
    renamed = corpus / f"renamed-{name}"
    (corpus / name).rename(renamed)
    await asyncio.sleep(2.5)  # the local index looks at the folder at most every 2 s
    run = await alice.post(f"/api/standing/{standing_id}/run")
    assert run.status_code == 202, run.text
    third_id = run.json()["research_id"]
    third = await finished(alice, third_id)
    assert third["outcome"] == "completed"
    assert renamed.name in [s["url"] for s in third["sources"]], third["sources"]
    changes = third["changes"]
    assert changes["since_research_id"] == second_id
    assert changes["new_sources"] == [] and changes["gone_sources"] == [], changes
    assert changes["new_claims"] == [] and changes["dropped_claims"] == [], changes
    assert "Nothing changed since the previous run" in third["report_markdown"]

    async def completed() -> bool:
        return ("research.completed", third_id) in {(e["event"], e["id"]) for e in hook.events()}

    await wait_until(completed, "the third run's completion notice", timeout=60)
    await asyncio.sleep(3)  # standing.changed would be announced right after research.completed
    assert ("standing.changed", third_id) not in {(e["event"], e["id"]) for e in hook.events()}
