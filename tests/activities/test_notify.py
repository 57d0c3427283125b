"""Notification delivery (activities/notify.py): signed webhooks to a real local receiver, the
address guard's refusals, which answers are retried, the Slack-compatible line, and email through
a real SMTP server on loopback (aiosmtpd)."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from temporalio.exceptions import ApplicationError

from activities.notify import body, post_webhook, send_email, signature
from config import Settings
from tests.support.http_doubles import local_server, serving
from workflows.standing.changes import Changes, SourceRef
from workflows.standing.notify import DeliverInput, Notice, NoticeKind

SECRET = "whsec-unit-0123456789"


def notice(kind: NoticeKind = NoticeKind.COMPLETED, **extra: Any) -> Notice:
    return Notice(
        event=kind,
        research_id="standing-0123abcd-2026-11-27T08:00:00Z",
        owner="alice",
        question="How does Rust's borrow checker prevent data races?",
        at=datetime(2026, 11, 27, 8, 0, 5, tzinfo=UTC),
        **extra,
    )


def config(**extra: Any) -> Settings:
    return Settings(
        _env_file=None,
        research_webhook_secret=SECRET,
        research_public_url="https://research.example/",
        **extra,
    )


def answering(
    status: int, kept: list[tuple[dict[str, str], bytes]]
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            kept.append((dict(self.headers), raw))
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[tuple[dict[str, str], bytes]]]]:
    kept: list[tuple[dict[str, str], bytes]] = []
    with serving(local_server(answering(200, kept))) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", kept


async def test_a_webhook_is_one_signed_post_whose_signature_the_receiver_can_check(
    receiver: tuple[str, list[tuple[dict[str, str], bytes]]],
) -> None:
    url, kept = receiver
    cfg = config(webhook_allow_private=True)
    inp = DeliverInput(notice=notice(), target="webhook:0", delivery_id="d-1/webhook:0")
    assert await post_webhook(cfg, url, inp) == 200
    [(headers, raw)] = kept
    expected = "sha256=" + hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
    assert headers["X-Research-Signature"] == expected == signature(SECRET, raw)
    assert headers["X-Research-Event"] == "research.completed"
    assert headers["X-Research-Delivery"] == "d-1/webhook:0"
    sent = json.loads(raw)
    assert {k: sent[k] for k in ("event", "id", "owner", "at")} == {
        "event": "research.completed",
        "id": "standing-0123abcd-2026-11-27T08:00:00Z",
        "owner": "alice",
        "at": "2026-11-27T08:00:05+00:00",
    }
    assert sent["url"] == (
        "https://research.example/research/standing-0123abcd-2026-11-27T08%3A00%3A00Z"
    )
    # a retry sends the same bytes
    await post_webhook(cfg, url, inp)
    assert kept[1][1] == raw


@pytest.mark.parametrize(
    "address",
    ["http://127.0.0.1:9/hook", "http://10.0.0.8/hook", "http://[::1]:9/hook"],
)
async def test_a_private_receiver_is_refused_unless_allowed(address: str) -> None:
    inp = DeliverInput(notice=notice(), target="webhook:0", delivery_id="d")
    with pytest.raises(ApplicationError) as refused:
        await post_webhook(config(), address, inp)
    assert refused.value.type == "Refused" and refused.value.non_retryable
    assert "WEBHOOK_ALLOW_PRIVATE=1" in refused.value.message


async def test_cloud_metadata_is_refused_even_when_private_receivers_are_allowed() -> None:
    inp = DeliverInput(notice=notice(), target="webhook:0", delivery_id="d")
    with pytest.raises(ApplicationError) as refused:
        await post_webhook(config(webhook_allow_private=True), "http://169.254.169.254/", inp)
    assert refused.value.non_retryable and "metadata" in refused.value.message


@pytest.mark.parametrize("status, retried", [(500, True), (503, True), (429, True), (404, False)])
async def test_a_receiver_error_is_retried_and_a_refusal_is_final(
    status: int, retried: bool
) -> None:
    kept: list[tuple[dict[str, str], bytes]] = []
    with serving(local_server(answering(status, kept))) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        inp = DeliverInput(notice=notice(), target="webhook:0", delivery_id="d")
        with pytest.raises(ApplicationError) as failed:
            await post_webhook(config(webhook_allow_private=True), url, inp)
    assert failed.value.non_retryable is (not retried)
    assert f"HTTP {status}" in failed.value.message and "/hook" not in failed.value.message


def test_every_body_has_a_slack_text_line_and_a_change_carries_its_changes() -> None:
    changes = Changes(
        since_research_id="standing-0123abcd-2026-11-20T08:00:00Z",
        since=datetime(2026, 11, 20, 8, tzinfo=UTC),
        new_sources=[SourceRef(url="file:///notes/new.md", title="New note")],
    )
    sent = body(
        config(), notice(NoticeKind.CHANGED, standing_id="standing-0123abcd", changes=changes)
    )
    assert sent["text"].startswith("Standing research found changes: How does Rust's")
    assert "1 new sources" in sent["text"]
    assert sent["standing_id"] == "standing-0123abcd"
    assert sent["changes"]["new_sources"] == [{"url": "file:///notes/new.md", "title": "New note"}]
    waiting = body(config(), notice(NoticeKind.WAITING, waiting_for="plan_review"))
    assert waiting["text"].startswith("Research waits for you (plan review)")
    assert waiting["waiting_for"] == "plan_review"


class Inbox:
    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 OK"


@contextmanager
def smtp_server() -> Iterator[tuple[int, Inbox]]:
    """A real SMTP server on a free loopback port (aiosmtpd), and what it received."""
    inbox = Inbox()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield port, inbox
    finally:
        controller.stop()


def test_email_goes_through_a_real_smtp_server() -> None:
    with smtp_server() as (port, inbox):
        cfg = config(
            smtp_host="127.0.0.1",
            smtp_port=port,
            smtp_starttls=False,
            smtp_from="research@example.org",
            notify_email_to="alice@example.org, team@example.org",
        )
        inp = DeliverInput(
            notice=notice(NoticeKind.WAITING, waiting_for="clarification", pending="Which one?"),
            target="email",
            delivery_id="d-7/email",
        )
        send_email(cfg, inp)
    [(sender, recipients, raw)] = inbox.messages
    assert sender == "research@example.org"
    assert recipients == ["alice@example.org", "team@example.org"]
    mail = message_from_bytes(raw)
    assert (
        " ".join(str(mail["Subject"]).split())
        == "Research waits for you (clarification): How does Rust's borrow checker prevent data races?"
    )
    assert mail["X-Research-Delivery"] == "d-7/email"
    text = mail.get_payload(decode=True).decode()
    assert "https://research.example/research/" in text and "Which one?" in text
    assert SECRET not in raw.decode()


def test_a_completed_or_cancelled_email_says_what_was_found_and_carries_no_json(
    tmp_path: Any,
) -> None:
    """Issue 39, edges: email notices were one line plus raw JSON; "completed" said nothing of
    the result. The research is in the library when its end is announced."""
    from activities.storage import store
    from tests.activities.test_library import record

    db_url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    saved = record(notice().research_id)
    saved.result.report_markdown = (
        "# Aqueducts\n\n## Summary\n\nSettling tanks let silt fall out of the water [1].\n\n"
        "## Sources\n\n- [1] Aqueducts — https://example.org/a\n"
    )
    store.write(saved, db_url)
    with smtp_server() as (port, inbox):
        cfg = config(
            smtp_host="127.0.0.1",
            smtp_port=port,
            smtp_starttls=False,
            notify_email_to="alice@example.org",
            research_db_url=db_url,
        )
        for kind in (NoticeKind.COMPLETED, NoticeKind.CANCELLED):
            send_email(cfg, DeliverInput(notice=notice(kind), target="email", delivery_id="d"))
    for (_, _, raw), word in zip(inbox.messages, ("completed", "cancelled"), strict=True):
        mail = message_from_bytes(raw)
        assert " ".join(str(mail["Subject"]).split()).startswith(f"Research {word}")
        text = mail.get_payload(decode=True).decode()
        assert "Settling tanks let silt fall out of the water [1]." in text
        assert "Sources: 2 read, 1 cited in the report." in text
        assert "https://research.example/research/" in text
        assert "{" not in text and '"event"' not in text
