"""A body that needs a token is not read before the token is checked, against the
real uvicorn server (it runs in this process, so its memory is this process's RSS)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.starter.web.conftest import (
    TOKENS,
    WebServer,
    WebWorker,
    one_line_error,
    running_app,
    web_config,
)
from tests.support.processes import cli

MIB = 1024 * 1024
CHUNK = b"x" * (128 * 1024)


async def _upload_without_token(
    server: WebServer, size: int, path: str = "/api/documents"
) -> bytes:
    """One connection that sends an upload of SIZE bytes with no token, as fast as the server
    takes it, then reads what it answered: its status line."""
    parts = urlsplit(server.url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    answer = b""
    try:
        writer.write(
            (
                f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                "Content-Type: multipart/form-data; boundary=b\r\n"
                f"Content-Length: {size}\r\n\r\n"
            ).encode()
        )
        for _ in range(size // len(CHUNK)):
            writer.write(CHUNK)
            await writer.drain()
        answer = await asyncio.wait_for(reader.readline(), 20)
    except (OSError, TimeoutError):
        pass
    finally:
        writer.close()
    return answer


def _memory(pid: int) -> tuple[int, int]:
    """(resident now, the most resident so far) of process PID, in bytes."""
    found = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) * 1024
    return found["VmRSS"], found["VmHWM"]


@asynccontextmanager
async def served(tmp_path: Path) -> AsyncIterator[tuple[WebServer, int]]:
    """`python -m starter serve` with access control, as deployed: the server and its pid."""
    env = {
        **os.environ,
        "RESEARCH_API_TOKENS": ",".join(f"{n}:{t}" for n, t in TOKENS.items()),
        "RESEARCH_DATA_DIR": str(tmp_path / "data"),
        "RESEARCH_DB_URL": f"sqlite:///{tmp_path / 'library.sqlite'}",
        "TEMPORAL_ADDRESS": "127.0.0.1:1",  # never reached: every request here is refused first
    }
    async with cli("serve", "--host", "127.0.0.1", "--port", "0", env=env) as proc:
        assert proc.stderr is not None
        line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
        url = line.split("web app: ", 1)[1].split()[0].rstrip("/")
        logs = asyncio.ensure_future(proc.stderr.read())  # its log is read, never left to block it
        try:
            for _ in range(100):
                with contextlib.suppress(httpx.HTTPError):
                    async with httpx.AsyncClient(base_url=url) as client:
                        if (await client.get("/api/health")).status_code < 500:
                            break
                await asyncio.sleep(0.1)
            yield WebServer(url=url, config=None, app=None, tokens=TOKENS), proc.pid  # type: ignore[arg-type]
        finally:
            logs.cancel()


async def test_many_uploads_without_a_token_leave_the_served_process_small(
    tmp_path: Path,
) -> None:
    """160 connections each sending a 3 MiB upload with no token: 480 MiB in all, which the web
    app once kept as it came (5 MB a connection); now each is refused from its headers and what
    still comes is dropped, so the process grows by its connections' buffers only."""
    connections, size = 160, 3 * MIB
    async with served(tmp_path) as (server, pid):
        before, _ = _memory(pid)
        answers = await asyncio.gather(
            *(_upload_without_token(server, size) for _ in range(connections))
        )
        _, peak = _memory(pid)
    assert all(a.startswith(b"HTTP/1.1 401 ") for a in answers), {a[:30] for a in answers}
    grown = (peak - before) / MIB
    assert grown < 64, f"the web process grew by {grown:.1f} MiB"


@pytest.mark.parametrize(
    ("path", "size"), [("/api/documents", 3 * MIB), ("/api/research", 200_000)]
)
async def test_a_write_without_a_token_is_answered_401_before_its_body_arrives(
    web_server: WebServer, path: str, size: int
) -> None:
    """The headers alone are answered: the client has sent none of the body it announced."""
    parts = urlsplit(web_server.url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(
        (
            f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    started = time.monotonic()
    answer = await asyncio.wait_for(reader.readuntil(b"}"), 5)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:80]
    assert b"sign in" in answer
    assert time.monotonic() - started < 5


async def test_a_wrong_token_is_refused_before_the_upload_is_read(web_server: WebServer) -> None:
    async with httpx.AsyncClient(base_url=web_server.url, timeout=30) as client:
        response = await client.post(
            "/api/documents",
            headers={"Authorization": "Bearer not-a-token-of-anyone-0123"},
            files={"file": ("notes.md", b"# Notes\n" * (3 * MIB // 8), "text/markdown")},
        )
    assert "not valid" in one_line_error(response, 401)


async def test_a_client_sending_its_whole_upload_first_reads_the_401(
    web_server: WebServer,
) -> None:
    """An HTTP client sends the body before it reads: it still gets the answer, not a reset."""
    async with httpx.AsyncClient(base_url=web_server.url, timeout=60) as client:
        answers = await asyncio.gather(
            *(
                client.post(
                    "/api/documents",
                    files={"file": (f"n{i}.md", b"# Notes\n" * (2 * MIB // 8), "text/markdown")},
                )
                for i in range(25)
            )
        )
    assert {a.status_code for a in answers} == {401}


async def test_the_home_pages_upload_form_without_a_session_goes_to_sign_in(
    web_server: WebServer,
) -> None:
    async with httpx.AsyncClient(base_url=web_server.url, timeout=30) as client:
        response = await client.post(
            "/documents", files={"file": ("notes.md", b"# Notes\n", "text/markdown")}
        )
    assert response.status_code == 303
    assert response.headers["location"].startswith("/signin")


async def test_one_users_uploads_in_flight_are_capped_while_anothers_go_through(
    web_worker: WebWorker,
) -> None:
    """Signed in, a user may have WEB_UPLOADS_PER_USER uploads arriving at once; the next is 429
    with Retry-After, and another user's upload is taken meanwhile."""
    config = web_config(web_worker, TOKENS, web_uploads_per_user=2)
    with running_app(config, TOKENS) as server:
        parts = urlsplit(server.url)
        held = []
        for _ in range(2):  # two uploads that announce 1 MiB and send nothing yet
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
            writer.write(
                (
                    f"POST /api/documents HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                    f"Authorization: Bearer {TOKENS['alice']}\r\n"
                    "Content-Type: multipart/form-data; boundary=b\r\n"
                    f"Content-Length: {MIB}\r\n\r\n"
                ).encode()
            )
            await writer.drain()
            held.append(writer)
        async with server.client("alice") as alice, server.client("bob") as bob:
            deadline = time.monotonic() + 15  # until the server has read both uploads' headers
            while True:
                third = await alice.post(
                    "/api/documents", files={"file": ("a.md", b"# A\n", "text/markdown")}
                )
                if third.status_code != 201 or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.1)
            other = await bob.post(
                "/api/documents", files={"file": ("b.md", b"# B\n", "text/markdown")}
            )
        for writer in held:
            writer.close()
    assert "upload" in one_line_error(third, 429)
    assert third.headers["retry-after"]
    assert other.status_code == 201, other.text


async def test_connections_past_the_cap_are_503_and_served_again_once_they_close(
    web_worker: WebWorker,
) -> None:
    config = web_config(web_worker, TOKENS, web_max_connections=4)
    with running_app(config, TOKENS) as server:
        parts = urlsplit(server.url)
        held = []
        for _ in range(4):  # connections that say nothing yet
            _, writer = await asyncio.open_connection(parts.hostname, parts.port)
            writer.write(b"GET /api/health HTTP/1.1\r\n")
            await writer.drain()
            held.append(writer)
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            assert await _health_becomes(client, 503)
            for writer in held:
                writer.close()
            assert await _health_becomes(client, 200)


async def _health_becomes(client: httpx.AsyncClient, status: int) -> bool:
    """Whether /api/health answers STATUS within 15 s: the server counts a connection once its
    loop has taken it, which on a busy machine is not at once."""
    deadline = time.monotonic() + 15
    while (await client.get("/api/health")).status_code != status:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.1)
    return True
