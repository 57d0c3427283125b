"""`POST /api/check` as bounded work, through a real uvicorn: checks
whose sources are pages that answer only when the test lets them hold their slots; a user's
checks past WEB_CHECKS_PER_USER get 429, the server's past WEB_CHECKS 503 (both with
Retry-After); another user's library is answered all the while; the checks' children end when
their clients leave; a text whose cited sentences × sources pass the limit is one 422 line."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest

from settings import Settings
from starter.client.citations_check import MAX_PAIRS
from tests.starter.cli.test_check_cli import FAITHFUL, SOURCE, one_paragraph_lines
from tests.starter.cli.test_starter import closed_port
from tests.starter.web.conftest import one_line_error, running_app
from tests.support.http_doubles import local_server, serving

USERS = {name: f"{name}-token-0123456789abcdef" for name in ("alice", "bob", "carol", "dave")}
TEXT = one_paragraph_lines(FAITHFUL)
#: How long the held page waits at most before it answers by itself (the test releases it).
HOLD_S = 90


class HeldPages:
    """Pages that answer only once `release` is set (or after HOLD_S): what holds a check."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked = 0
        self.lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        pages = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/robots.txt":
                    self.send_error(404)
                    return
                with pages.lock:
                    pages.asked += 1
                pages.release.wait(HOLD_S)
                body = f"<html><body><article><p>{SOURCE}</p></article></body></html>".encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def held() -> Iterator[tuple[str, HeldPages]]:
    pages = HeldPages()
    with serving(local_server(pages.handler(), backlog=64)) as server:
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}", pages
        finally:
            pages.release.set()


def app_config(tmp_path: Path, **extra: Any) -> Settings:
    return Settings(
        _env_file=None,
        temporal_address=f"127.0.0.1:{closed_port()}",
        research_db_url=f"sqlite:///{tmp_path / 'library.sqlite'}",
        llm_provider="offline",
        research_api_tokens=",".join(f"{name}:{token}" for name, token in USERS.items()),
        crawl_allow_private=True,
        crawl_page_timeout_s=HOLD_S + 30,
        web_checks=3,
        web_checks_per_user=2,
        **extra,
    )


def client(url: str, user: str, timeout: float = HOLD_S + 60) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {USERS[user]}"}
    return httpx.AsyncClient(base_url=url, headers=headers, timeout=timeout)


def check_children() -> list[int]:
    """This process's children running a check (the app runs in a thread of the test)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"starter.web.services.check_child" in cmdline:
            found.append(int(entry.name))
    return found


async def until(condition: Any, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.1)
    return condition()


async def test_checks_at_the_cap_leave_another_users_library_answered_and_end_with_their_clients(
    tmp_path: Path, held: tuple[str, HeldPages]
) -> None:
    page_url, pages = held
    body = {"markdown": TEXT, "sources": [{"id": 1, "url": f"{page_url}/page"}]}
    # more than the app's shared thread pool holds (min(32, CPUs + 4)): what took it before
    many = min(32, (os.cpu_count() or 1) + 4) + 2
    with running_app(app_config(tmp_path), USERS) as server:
        alice = [client(server.url, "alice") for _ in range(many)]
        bob, carol, dave = (client(server.url, u, timeout=60) for u in ("bob", "carol", "dave"))
        try:
            first = [asyncio.ensure_future(c.post("/api/check", json=body)) for c in alice[:2]]
            assert await until(lambda: pages.asked >= 2, 60), "alice's checks never read"
            extra = [asyncio.ensure_future(c.post("/api/check", json=body)) for c in alice[2:]]
            bobs = asyncio.ensure_future(bob.post("/api/check", json=body))
            assert await until(lambda: pages.asked >= 3, 60), "bob's check never read"
            carols = await carol.post("/api/check", json=body)
            began = time.monotonic()
            library = await dave.get("/api/library")
            took = time.monotonic() - began
            done, _ = await asyncio.wait(extra, timeout=60)
            refused = [t.result() for t in done]
            assert all(not t.done() for t in first) and not bobs.done()
            running = len(check_children())
            # the clients leave: their checks' children are killed, their slots freed
            for task in [*first, bobs]:
                task.cancel()
            await asyncio.gather(*first, bobs, return_exceptions=True)
            for c in [*alice[:2], bob]:
                await c.aclose()
            ended = await until(lambda: not check_children(), 30)
            again = await freed_slot_check(client(server.url, "alice", timeout=120))
        finally:
            pages.release.set()
            for c in [*alice, bob, carol, dave]:
                await c.aclose()
    assert library.status_code == 200, library.text
    assert took < 30, took  # before, it waited for a held check to end (HOLD_S)
    assert len(refused) == many - 2
    for answer in refused:
        assert one_line_error(answer, 429).startswith("you already have 2 check(s) running")
        assert answer.headers["retry-after"] == "10"
    assert one_line_error(carols, 503).startswith("the server is running too many checks")
    assert carols.headers["retry-after"] == "10"
    assert running == 3  # each running check is a child process, off the app's threads
    assert ended, check_children()
    assert again.status_code == 200, again.text
    assert again.json()["supported"] == 3


async def freed_slot_check(alice: httpx.AsyncClient, within_s: float = 30) -> httpx.Response:
    """Alice's next check once the checks whose clients left have given their slots back: asked
    again on a 429 as a client that heeds Retry-After would, for up to WITHIN_S (the slot is
    freed as the app's handler unwinds, which on a loaded machine came after the child's end)."""
    deadline = time.monotonic() + within_s
    async with alice:
        while True:
            answer = await alice.post(
                "/api/check", json={"markdown": TEXT, "sources": [{"id": 1, "text": SOURCE}]}
            )
            if answer.status_code != 429 or time.monotonic() > deadline:
                return answer
            await asyncio.sleep(0.5)


async def test_a_check_past_the_sentences_times_sources_limit_is_one_422_line(
    tmp_path: Path,
) -> None:
    sources = 13
    sentences = MAX_PAIRS // sources + 7  # 237 sentences: under the 300-sentence cap
    cites = "".join(f"[{n}]" for n in range(1, sources + 1))
    markdown = " ".join(f"Claim number {n} is made here {cites}." for n in range(sentences))
    given = [{"id": n, "text": f"Claim number {n} is true."} for n in range(1, sources + 1)]
    small = [{"id": n, "text": SOURCE} for n in range(1, 4)]
    with running_app(app_config(tmp_path), USERS) as server:
        async with client(server.url, "alice", timeout=120) as alice:
            over = await alice.post("/api/check", json={"markdown": markdown, "sources": given})
            under = await alice.post("/api/check", json={"markdown": TEXT, "sources": small})
    pairs = sentences * sources
    assert one_line_error(over, 422) == (
        f"{sentences} cited sentences × {sources} sources is {pairs:,} pairs: at most "
        f"{MAX_PAIRS:,} are checked at once (check fewer sentences or sources at a time)"
    )
    assert under.status_code == 200, under.text
