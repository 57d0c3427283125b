"""A receiver's reply is hostile input: one answering `200` with endless
chunks, or trickling a byte at a time, must not hold a worker, grow its memory or be retried for a
day. Real HTTP receivers on loopback; every server loop is bounded and stops by itself."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from activities.notify import post_webhook, webhook
from settings import Settings
from tests.activities.test_notify import notice
from tests.support.http_doubles import local_server, serving
from workflows.standing_messages import DeliverInput

#: What the endless receiver sends at most (the old code read all of it and answered "HTTP 200").
ENDLESS_CAP = 48 * 1024 * 1024
CHUNK = 16 * 1024


class Sent:
    def __init__(self) -> None:
        self.bytes = 0
        self.stopped = False


def streaming(
    sent: Sent, chunk: bytes, pause_s: float, rounds: int
) -> type[BaseHTTPRequestHandler]:
    """A receiver answering 200 and then CHUNK after CHUNK (chunked), `rounds` at most."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
            try:
                for _ in range(rounds):
                    self.wfile.write(frame)
                    self.wfile.flush()
                    sent.bytes += len(chunk)
                    if pause_s:
                        time.sleep(pause_s)
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                sent.stopped = True  # the client closed: what a bounded reader does
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def cfg() -> Settings:
    return Settings(_env_file=None, research_webhook_secret="whsec-x", webhook_allow_private=True)


@pytest.fixture
def endless() -> Iterator[tuple[str, Sent]]:
    sent = Sent()
    handler = streaming(sent, b"y" * CHUNK, 0.0, ENDLESS_CAP // CHUNK)
    with serving(local_server(handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook/secret-path", sent


async def test_an_endless_reply_is_cut_after_a_few_kib_and_is_final(
    cfg: Settings, endless: tuple[str, Sent]
) -> None:
    url, sent = endless
    inp = DeliverInput(notice=notice(), target="notify:0", delivery_id="d/endless")
    with pytest.raises(ApplicationError) as failed:
        await post_webhook(cfg, url, inp)
    err = failed.value
    assert err.type == "ReplyTooLarge" and err.non_retryable, err.message
    [read] = err.details
    # at most the cap and one network read past it: KiB, not the receiver's 48 MiB
    assert webhook.MAX_REPLY_BYTES < read <= webhook.MAX_REPLY_BYTES + 128 * 1024
    assert "secret-path" not in err.message and "\n" not in err.message
    # the receiver saw the connection closed long before it had sent what it meant to
    assert sent.bytes < ENDLESS_CAP // 2


async def test_a_reply_trickling_past_the_deadline_ends_at_the_deadline_and_is_retried(
    cfg: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8 bytes every 0.2 s never passes the size cap and never lets a per-read timeout fire: only
    a deadline for the whole delivery ends it. The receiver stops by itself after 30 s."""
    monkeypatch.setattr(webhook, "DEADLINE_S", 1.5)
    sent = Sent()
    with serving(local_server(streaming(sent, b"k" * 8, 0.2, 150))) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        inp = DeliverInput(notice=notice(), target="notify:0", delivery_id="d/trickle")
        began = time.monotonic()
        with pytest.raises(ApplicationError) as failed:
            await post_webhook(cfg, url, inp)
        took = time.monotonic() - began
    assert failed.value.type == "Unreachable" and not failed.value.non_retryable
    assert "1.5 s" in failed.value.message
    assert took < 20  # the receiver would have gone on for 30 s


async def test_a_short_reply_is_still_read_and_delivered(cfg: Settings) -> None:
    sent = Sent()
    with serving(local_server(streaming(sent, b"ok", 0.0, 3))) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        inp = DeliverInput(notice=notice(), target="notify:0", delivery_id="d/short")
        assert await post_webhook(cfg, url, inp) == 200
