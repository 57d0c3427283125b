"""Notification delivery (activities/notify/): signed webhooks to a real local receiver, the
address guard's refusals, which answers are retried, the Slack-compatible line, and email through
a real SMTP server on loopback (aiosmtpd)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from temporalio.exceptions import ApplicationError

from activities.notify import body, post_webhook, send_email
from settings import Settings
from tests.support.http_doubles import local_server, serving
from workflows.standing_messages import Changes, DeliverInput, Notice, NoticeKind, SourceRef

SECRET = "whsec-unit-0123456789"


def verified(secret: str, url: str, headers: dict[str, str], raw: bytes, now: float = 0) -> bool:
    """The receiver's check, as docs/standing-research.md writes it: the timestamp recent, and
    the HMAC over `<t>.<its own URL>.<raw body>`."""
    fields = dict(part.split("=", 1) for part in headers["X-Research-Signature"].split(","))
    signed = f"{fields['t']}.{url}.".encode() + raw
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    fresh = abs((now or time.time()) - int(fields["t"])) <= 300
    return fresh and hmac.compare_digest(expected, fields["v1"])


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
    assert verified(SECRET, url, headers, raw)
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
    # a retry sends the same bytes, signed again at its own time
    await post_webhook(cfg, url, inp)
    assert kept[1][1] == raw and verified(SECRET, url, kept[1][0], raw)


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
    # a local source by its name, never the server's path
    assert sent["changes"]["new_sources"] == [{"url": "new.md", "title": "New note"}]
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
    """Edges: email notices were one line plus raw JSON; "completed" said nothing of
    the result. The research is in the library when its end is announced."""
    from storage import store
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


# --- receivers normalised before anything is sent; deliveries that cannot be replayed ---


@pytest.mark.parametrize(
    "url",
    [
        "http://0177.0.0.01:9/hook",  # octal
        "http://127.000.000.002/hook",  # zero-padded
        "http://\u2460\u2461\u2466.0.0.3/hook",  # circled digits, 127.0.0.3 after NFKC
        "http://localhost./hook",  # the root dot
        "http://0x7f.0.0.4/hook",  # hex
        "http://2130706437/hook",  # one decimal number
        "http://[::ffff:127.0.0.5]/hook",  # IPv4 inside IPv6
        "http://sub.localhost/hook",
        "http://no-such-receiver-3f1.invalid/hook",  # does not resolve
        "http://exa mple.org/hook",
        "http://" + "x" * 5000 + ".org/hook",  # no error text over its bound
    ],
)
async def test_a_receiver_that_does_not_parse_resolve_or_is_private_fails_once_in_a_bounded_line(
    url: str,
) -> None:
    inp = DeliverInput(notice=notice(), target="notify:0", delivery_id="d")
    with pytest.raises(ApplicationError) as refused:
        await post_webhook(config(), url, inp)
    assert refused.value.non_retryable, refused.value.message
    assert "\n" not in refused.value.message and len(refused.value.message) <= 300


async def delivered_once(
    receiver: tuple[str, list[tuple[dict[str, str], bytes]]], target: str
) -> tuple[str, dict[str, str], bytes]:
    """One delivery to TARGET at the receiver: its URL, and the headers and body it got."""
    url, kept = receiver
    inp = DeliverInput(notice=notice(), target=target, delivery_id=f"d/{target}")
    await post_webhook(config(webhook_allow_private=True), url, inp)
    [(headers, raw)] = kept
    return url, headers, raw


async def test_a_users_own_receiver_is_signed_with_its_own_secret_not_the_operators(
    receiver: tuple[str, list[tuple[dict[str, str], bytes]]],
) -> None:
    from activities.notify.receivers import receiver_secret

    url, headers, raw = await delivered_once(receiver, "notify:0")
    own = receiver_secret(SECRET, "alice", url)
    assert verified(own, url, headers, raw)
    assert not verified(SECRET, url, headers, raw)  # the operator's key verifies nothing here
    assert own != receiver_secret(SECRET, "bob", url)
    assert own != receiver_secret(SECRET, "alice", url + "-other")


async def test_a_captured_delivery_fails_a_receivers_check_later_or_at_another_url(
    receiver: tuple[str, list[tuple[dict[str, str], bytes]]],
) -> None:
    url, headers, raw = await delivered_once(receiver, "webhook:0")
    assert verified(SECRET, url, headers, raw)
    assert not verified(SECRET, url, headers, raw, now=time.time() + 3600)  # replayed an hour on
    assert not verified(SECRET, "https://operator.example/hook", headers, raw)  # elsewhere


def documented_receiver(secret: str, url: str) -> type[BaseHTTPRequestHandler]:
    """The receiver docs/standing-research.md tells people to write, run as it is written."""
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "standing-research.md").read_text()
    code = doc.split("To receive and verify one:\n\n```python\n", 1)[1].split("```", 1)[0]
    code = code.replace("HTTPServer((", "# HTTPServer((")
    code = re.sub(r'(?m)^SECRET = b".*"$', f"SECRET = {secret.encode()!r}", code)
    code = re.sub(r'(?m)^MY_URL = ".*?"', f"MY_URL = {url!r}", code)
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/standing-research.md", "exec"), namespace)  # noqa: S102 - our own doc
    return namespace["Hook"]


@pytest.mark.parametrize("target", ["webhook:0", "notify:0"])
async def test_the_documented_receiver_accepts_a_delivery_and_refuses_it_replayed_elsewhere(
    target: str,
) -> None:
    from activities.notify.receivers import receiver_secret

    server = local_server(documented_receiver("placeholder", "placeholder"))
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    secret = SECRET if target == "webhook:0" else receiver_secret(SECRET, "alice", url)
    server.RequestHandlerClass = documented_receiver(secret, url)
    inp = DeliverInput(notice=notice(), target=target, delivery_id=f"d/{target}")
    with serving(server):
        assert await post_webhook(config(webhook_allow_private=True), url, inp) == 204
    other = local_server(documented_receiver(secret, "https://elsewhere.example/hook"))
    other_url = f"http://127.0.0.1:{other.server_address[1]}/hook"
    with serving(other), pytest.raises(ApplicationError) as refused:
        await post_webhook(config(webhook_allow_private=True), other_url, inp)
    assert "HTTP 401" in refused.value.message


@pytest.mark.parametrize("starttls, warned", [("false", True), ("true", False)])
def test_the_worker_warns_at_start_when_email_would_log_in_in_clear_text(
    starttls: str, warned: bool
) -> None:
    """One line naming the server and the setting, never the password."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    password = "pw-do-not-print-7781"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "SMTP_"))},
        "TEMPORAL_ADDRESS": f"127.0.0.1:{closed}",
        "LLM_PROVIDER": "offline",
        "SMTP_HOST": "mail.example.org",
        "SMTP_PORT": "2525",
        "SMTP_USER": "research",
        "SMTP_PASSWORD": password,
        "SMTP_STARTTLS": starttls,
    }
    done = subprocess.run(
        [sys.executable, "worker.py", "--no-engine-notice"],
        cwd=Path(__file__).parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: SMTP")]
    assert len(warnings) == (1 if warned else 0), done.stderr
    assert password not in done.stderr + done.stdout
    if warned:
        assert "mail.example.org:2525" in warnings[0] and "SMTP_STARTTLS" in warnings[0]


async def test_an_empty_secret_signs_nothing_rather_than_with_an_empty_key(
    receiver: tuple[str, list[tuple[dict[str, str], bytes]]],
) -> None:
    """Compose passes RESEARCH_WEBHOOK_SECRET through as "" when it is unset."""
    url, kept = receiver
    inp = DeliverInput(notice=notice(), target="webhook:0", delivery_id="d/empty")
    cfg = Settings(_env_file=None, research_webhook_secret="", webhook_allow_private=True)
    await post_webhook(cfg, url, inp)
    [(headers, _)] = kept
    assert "X-Research-Signature" not in headers
