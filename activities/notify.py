"""Notification activities: which channels are configured, and one delivery to one of them.

- `notification_targets` (a local activity of the research): opaque keys, `webhook:N` for the
  N-th URL of RESEARCH_WEBHOOKS, `notify:N` for the research's own N-th `notify` URL, `email`
  when SMTP_HOST and NOTIFY_EMAIL_TO are set. No address and no secret leaves the worker.
- `deliver_notification` (retried for a day by `NotifyWorkflow`): a webhook is one POST of a JSON
  body signed with HMAC-SHA256 keyed with RESEARCH_WEBHOOK_SECRET
  (`X-Research-Signature: sha256=<hex>`), through the crawler's address guard (private and
  loopback receivers only with WEBHOOK_ALLOW_PRIVATE=1; cloud metadata never); the body has a
  `text` line, so a Slack (or Mattermost, Rocket.Chat) incoming webhook takes it as it is. Email
  goes through SMTP with the same facts in plain text.

The body is built here from the notice, the same bytes on every attempt (`at` was fixed by the
workflow), with `X-Research-Delivery` the same too: a receiver drops what it has seen.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import smtplib
from email.message import EmailMessage
from typing import Any
from urllib.parse import quote

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.web.netguard import AddressGuard, Refused, check_url, guarded_transport
from config import Settings, settings
from workflows.notify import (
    DELIVER_NOTIFICATION,
    NOTIFICATION_TARGETS,
    DeliverInput,
    DeliverOutput,
    Notice,
    NoticeKind,
)

SIGNATURE_HEADER = "X-Research-Signature"
TIMEOUT_S = 20.0
#: Statuses worth trying again (the receiver is busy or briefly away); any other 4xx is final.
RETRYABLE_4XX = frozenset({408, 409, 425, 429})


def webhook_urls(cfg: Settings) -> list[str]:
    return [u.strip() for u in cfg.research_webhooks.split(",") if u.strip()]


def email_recipients(cfg: Settings) -> list[str]:
    return [a.strip() for a in cfg.notify_email_to.split(",") if a.strip()]


@activity.defn(name=NOTIFICATION_TARGETS)
async def notification_targets(notice: Notice) -> list[str]:
    cfg = settings()
    targets = [f"webhook:{i}" for i, _ in enumerate(webhook_urls(cfg))]
    targets += [f"notify:{i}" for i, _ in enumerate(notice.notify)]
    if cfg.smtp_host and email_recipients(cfg):
        targets.append("email")
    return targets


def page_url(cfg: Settings, notice: Notice) -> str:
    return f"{cfg.research_public_url.rstrip('/')}/research/{quote(notice.research_id, safe='')}"


def summary(notice: Notice, url: str) -> str:
    """One line for a person (Slack's `text`, the email's subject line with the link)."""
    question = " ".join(notice.question.split())
    if len(question) > 120:
        question = question[:119] + "…"
    what = {
        NoticeKind.COMPLETED: "Research completed",
        NoticeKind.FAILED: "Research failed",
        NoticeKind.WAITING: f"Research waits for you ({(notice.waiting_for or '').replace('_', ' ')})",
        NoticeKind.CHANGED: "Standing research found changes",
    }[notice.event]
    line = f"{what}: {question} — {url}"
    if notice.event is NoticeKind.CHANGED and notice.changes is not None:
        c = notice.changes
        line += (
            f" ({len(c.new_sources)} new sources, {len(c.gone_sources)} gone, "
            f"{len(c.updated_sources)} updated, {len(c.new_claims)} new findings, "
            f"{len(c.dropped_claims)} no longer made, {len(c.changed_findings)} changed)"
        )
    return line


def body(cfg: Settings, notice: Notice) -> dict[str, Any]:
    """The event as receivers get it: INTERFACE.md's `{event, id, owner, question, url, at, ...}`."""
    url = page_url(cfg, notice)
    data: dict[str, Any] = {
        "event": notice.event.value,
        "id": notice.research_id,
        "owner": notice.owner,
        "question": notice.question,
        "url": url,
        "at": notice.at.isoformat(),
        "text": summary(notice, url),
    }
    if notice.standing_id:
        data["standing_id"] = notice.standing_id
    for key in ("waiting_for", "pending", "outcome", "error"):
        if getattr(notice, key):
            data[key] = getattr(notice, key)
    if notice.changes is not None:
        data["changes"] = notice.changes.model_dump(mode="json")
    return data


def encoded(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


def signature(secret: str, raw: bytes) -> str:
    """`sha256=<hex>`: what a receiver recomputes over the raw body and compares in constant time."""
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


def target_url(cfg: Settings, notice: Notice, target: str) -> str:
    kind, _, index = target.partition(":")
    urls = webhook_urls(cfg) if kind == "webhook" else notice.notify
    try:
        return urls[int(index)]
    except (ValueError, IndexError):
        raise ApplicationError(
            f"notification target {target} is no longer configured", type="NotConfigured"
        ) from None


@activity.defn(name=DELIVER_NOTIFICATION)
async def deliver_notification(inp: DeliverInput) -> DeliverOutput:
    cfg = settings()
    if inp.target == "email":
        await asyncio.to_thread(send_email, cfg, inp)
        return DeliverOutput(
            target=inp.target, detail=f"to {len(email_recipients(cfg))} address(es)"
        )
    url = target_url(cfg, inp.notice, inp.target)
    status = await post_webhook(cfg, url, inp)
    return DeliverOutput(target=inp.target, detail=f"HTTP {status}")


async def post_webhook(cfg: Settings, url: str, inp: DeliverInput) -> int:
    raw = encoded(body(cfg, inp.notice))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": cfg.crawl_user_agent,
        "X-Research-Event": inp.notice.event.value,
        "X-Research-Delivery": inp.delivery_id,
    }
    if cfg.research_webhook_secret is not None:
        headers[SIGNATURE_HEADER] = signature(cfg.research_webhook_secret.get_secret_value(), raw)
    guard = AddressGuard(allow_private=cfg.webhook_allow_private)
    transport = guarded_transport(guard, httpx.Limits(max_connections=2))
    try:
        check_url(httpx.URL(url))
        async with httpx.AsyncClient(
            transport=transport, timeout=TIMEOUT_S, follow_redirects=False
        ) as client:
            response = await client.post(url, content=raw, headers=headers)
    except Refused as err:
        raise ApplicationError(
            _private_hint(err.reason), type="Refused", non_retryable=True
        ) from None
    except httpx.HTTPError as err:
        raise ApplicationError(
            f"webhook {_host(url)} unreachable: {type(err).__name__}", type="Unreachable"
        ) from None
    if response.is_success:
        return response.status_code
    final = 400 <= response.status_code < 500 and response.status_code not in RETRYABLE_4XX
    raise ApplicationError(
        f"webhook {_host(url)} answered HTTP {response.status_code}",
        type="Rejected" if final else "ReceiverError",
        non_retryable=final,
    )


def _private_hint(reason: str) -> str:
    return reason.replace("CRAWL_ALLOW_PRIVATE", "WEBHOOK_ALLOW_PRIVATE")


def _host(url: str) -> str:
    """The receiver named without its path (a Slack webhook's path is its secret)."""
    try:
        return httpx.URL(url).host or "?"
    except httpx.InvalidURL:
        return "?"


def send_email(cfg: Settings, inp: DeliverInput) -> None:
    """One email to NOTIFY_EMAIL_TO through SMTP_HOST (blocking: run in a thread)."""
    data = body(cfg, inp.notice)
    message = EmailMessage()
    message["Subject"] = data["text"].split(" — ")[0][:200]
    message["From"] = cfg.smtp_from
    message["To"] = ", ".join(email_recipients(cfg))
    message["X-Research-Delivery"] = inp.delivery_id
    message["X-Research-Event"] = inp.notice.event.value
    message.set_content(
        f"{data['text']}\n\nOpen: {data['url']}\n\n{json.dumps(data, indent=2, ensure_ascii=False)}\n"
    )
    assert cfg.smtp_host is not None
    try:
        with smtplib.SMTP(cfg.smtp_host, cfg.smtp_port, timeout=TIMEOUT_S) as smtp:
            if cfg.smtp_starttls:
                smtp.starttls()
            if cfg.smtp_user and cfg.smtp_password is not None:
                smtp.login(cfg.smtp_user, cfg.smtp_password.get_secret_value())
            smtp.send_message(message)
    except smtplib.SMTPAuthenticationError:
        raise ApplicationError(
            f"SMTP login refused at {cfg.smtp_host} (check SMTP_USER / SMTP_PASSWORD)",
            type="Rejected",
            non_retryable=True,
        ) from None
    except (smtplib.SMTPException, OSError) as err:
        raise ApplicationError(
            f"SMTP delivery through {cfg.smtp_host} failed: {type(err).__name__}",
            type="SmtpError",
        ) from None
