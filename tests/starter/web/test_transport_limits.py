"""What a hostile client does to the connection, against the real uvicorn server:
streamed bodies (W1), slow headers and bodies (W14), foreign Host names in open mode (W4) and
caching of signed-in pages (W10)."""

from __future__ import annotations

import asyncio
import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from starter.web.guard.slow_clients import HeaderDeadline
from tests.starter.web.conftest import WebServer, one_line_error, session_cookie

MIB = 1024 * 1024


def _rss() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _address(server: WebServer) -> tuple[str, int]:
    parts = urlsplit(server.url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def _chunked_post(server: WebServer, path: str, total: int, content_type: str) -> tuple[str, int]:
    """POST PATH with a chunked body of TOTAL bytes (1 MiB chunks), no token; the status line the
    server answered with and the highest RSS of this process (the server runs in it) meanwhile."""
    host, port = _address(server)
    chunk = b"x" * MIB
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    peak = _rss()
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(
            (
                f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: {content_type}\r\n"
                "Transfer-Encoding: chunked\r\n\r\n"
            ).encode()
        )
        try:
            for _ in range(total // MIB):
                sock.sendall(frame)
                peak = max(peak, _rss())
            sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server answered and closed: the rest of the body was never read
        answer = b""
        try:
            while b"\r\n" not in answer:
                data = sock.recv(4096)
                if not data:
                    break
                answer += data
        except OSError:
            pass
    return answer.split(b"\r\n", 1)[0].decode(), max(peak, _rss())


@pytest.mark.parametrize(
    ("path", "content_type"),
    [("/signin", "application/x-www-form-urlencoded"), ("/api/research", "application/json")],
)
async def test_a_200_mib_chunked_body_is_refused_as_it_streams_before_any_token_check(
    web_server: WebServer, path: str, content_type: str
) -> None:
    before = _rss()
    status, peak = await asyncio.to_thread(_chunked_post, web_server, path, 200 * MIB, content_type)
    # refused unread: too large (413), or, for an API write, sent with no token (401)
    assert " 413 " in status + " " or (path.startswith("/api/") and " 401 " in status), status
    assert peak - before < 64 * MIB, f"the process grew by {(peak - before) / MIB:.0f} MiB"


async def test_a_declared_oversize_body_is_413_in_one_line(web_server: WebServer) -> None:
    async with web_server.client() as client:
        response = await client.post(
            "/api/research",
            content=b"{" + b" " * (300 * 1024) + b"}",
            headers={"content-type": "application/json"},
        )
    assert "larger than 256 KB" in one_line_error(response, 413)


def _slow_headers(server: WebServer, connections: int, seconds: float) -> int:
    """CONNECTIONS sockets each sending one header line a second for SECONDS; how many the
    server still holds open at the end."""
    host, port = _address(server)
    socks = []
    for _ in range(connections):
        sock = socket.create_connection((host, port), timeout=5)
        sock.sendall(f"GET /api/health HTTP/1.1\r\nHost: {host}\r\n".encode())
        socks.append(sock)
    open_ = set(range(connections))
    deadline = time.monotonic() + seconds
    line = 0
    while time.monotonic() < deadline and open_:
        time.sleep(1)
        line += 1
        for i in list(open_):
            try:
                socks[i].sendall(f"X-Slow-{line}: {'a' * 10}\r\n".encode())
            except OSError:
                open_.discard(i)
    for i in list(open_):  # a closed connection reads as EOF (or a reset)
        socks[i].settimeout(0.2)
        try:
            if socks[i].recv(1024) == b"":
                open_.discard(i)
        except TimeoutError:
            pass
        except OSError:
            open_.discard(i)
    for sock in socks:
        sock.close()
    return len(open_)


async def test_connections_sending_headers_slowly_are_closed(
    web_server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(HeaderDeadline, "header_timeout_s", 2.0)
    still_open = await asyncio.to_thread(_slow_headers, web_server, 40, 6)
    assert still_open == 0, f"{still_open} of 40 slow connections are still open"


def _slow_body(server: WebServer) -> bytes:
    host, port = _address(server)
    with socket.create_connection((host, port), timeout=60) as sock:
        sock.sendall(
            f"POST /api/research HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {server.tokens['alice']}\r\n"  # else 401 before any body
            "Content-Length: 1000\r\n\r\n{".encode()
        )
        answer = b""
        while True:
            data = sock.recv(4096)
            if not data:
                return answer
            answer += data


async def test_a_body_that_stops_coming_is_408_and_the_connection_closes(
    web_server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from starter.web.guard import shield

    monkeypatch.setattr(shield, "BODY_IDLE_S", 1.0)
    started = time.monotonic()
    answer = await asyncio.wait_for(asyncio.to_thread(_slow_body, web_server), 60)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert time.monotonic() - started < 30


# --- open mode: its own host names only (DNS rebinding) -------------------------------------------


async def test_open_mode_answers_only_to_its_own_host_names(open_web_server: WebServer) -> None:
    port = _address(open_web_server)[1]
    async with httpx.AsyncClient(base_url=open_web_server.url, timeout=30) as client:
        for host in (f"rebind.attacker.example:{port}", "attacker.example", "127.0.0.1.nip.io"):
            page = await client.get("/", headers={"host": host})
            assert page.status_code == 421, (host, page.status_code)
            write = await client.post(
                "/api/research",
                json={"question": "How does DNS rebinding work in practice?"},
                headers={"host": host, "origin": f"http://{host}"},
            )
            assert "own host names" in one_line_error(write, 421)
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
            assert (await client.get("/api/health", headers={"host": host})).status_code == 200, (
                host
            )


async def test_the_allowed_hosts_setting_adds_names() -> None:
    from starter.web.guard.shield import Shield

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        pass

    shield = Shield(app, open_mode=True, allowed_hosts=["research.lan", " box.local "])
    assert shield.own_host("research.lan:8000") and shield.own_host("BOX.local")
    assert shield.own_host("127.0.0.5:80") and shield.own_host("[::1]")
    assert not shield.own_host("evil.lan") and not shield.own_host(None)


# --- caching ------------------------------------------------------------------------------------------


async def test_every_signed_in_page_says_no_store(web_server: WebServer) -> None:
    cookie = session_cookie(web_server, "alice")
    async with httpx.AsyncClient(
        base_url=web_server.url, cookies={"research_session": cookie}, timeout=30
    ) as client:
        for path in ("/", "/library", "/research/unknown-id", "/signin"):
            response = await client.get(path)
            assert response.headers.get("cache-control") == "no-store", path
        static = await client.get("/static/api.js")
        assert static.headers.get("cache-control") != "no-store"
