"""The email channel (target `email`): one message to NOTIFY_EMAIL_TO through SMTP_HOST, when
both are set, with the same facts as a webhook's body in plain text."""

from __future__ import annotations

import asyncio
import smtplib
from email.message import EmailMessage
from typing import Any

from temporalio.exceptions import ApplicationError

from activities.notify.channel import Channel
from activities.notify.message import body, found
from settings import Settings
from workflows.standing_messages import DeliverInput, Notice

TIMEOUT_S = 20.0


def email_recipients(cfg: Settings) -> list[str]:
    return [a.strip() for a in cfg.notify.email_to.split(",") if a.strip()]


def clear_text_login_warning(cfg: Settings) -> str | None:
    """One line for the worker's start when email would log in over an unencrypted connection
    (SMTP_STARTTLS off with SMTP_USER and SMTP_PASSWORD set): the password would cross the
    network as it is. Names the server and the setting, never the password."""
    if (
        not (cfg.notify.smtp_host and cfg.notify.smtp_user and cfg.notify.smtp_password)
        or cfg.notify.smtp_starttls
    ):
        return None
    return (
        f"warning: SMTP_STARTTLS is off, so the login to {cfg.notify.smtp_host}:{cfg.notify.smtp_port} as "
        f"SMTP_USER sends the password unencrypted; set SMTP_STARTTLS=true"
    )


def send_email(cfg: Settings, inp: DeliverInput) -> None:
    """One email to NOTIFY_EMAIL_TO through SMTP_HOST (blocking: run in a thread)."""
    data = body(cfg, inp.notice)
    message = EmailMessage()
    message["Subject"] = data["text"].split(" — ")[0][:200]
    message["From"] = cfg.notify.smtp_from
    message["To"] = ", ".join(email_recipients(cfg))
    message["X-Research-Delivery"] = inp.delivery_id
    message["X-Research-Event"] = inp.notice.event.value
    message.set_content(readable(cfg, inp.notice, data))
    assert cfg.notify.smtp_host is not None
    try:
        with smtplib.SMTP(cfg.notify.smtp_host, cfg.notify.smtp_port, timeout=TIMEOUT_S) as smtp:
            if cfg.notify.smtp_starttls:
                smtp.starttls()
            if cfg.notify.smtp_user and cfg.notify.smtp_password is not None:
                smtp.login(cfg.notify.smtp_user, cfg.notify.smtp_password.get_secret_value())
            smtp.send_message(message)
    except smtplib.SMTPAuthenticationError:
        raise ApplicationError(
            f"SMTP login refused at {cfg.notify.smtp_host} (check SMTP_USER / SMTP_PASSWORD)",
            type="Rejected",
            non_retryable=True,
        ) from None
    except (smtplib.SMTPException, OSError) as err:
        raise ApplicationError(
            f"SMTP delivery through {cfg.notify.smtp_host} failed: {type(err).__name__}",
            type="SmtpError",
        ) from None


def readable(cfg: Settings, notice: Notice, data: dict[str, Any]) -> str:
    """The email's body, for a person: what happened, to which question, what it found (or what
    it waits for, what failed, what changed), and the link; no JSON."""
    lines = [data["text"].split(" — ")[0], "", f"Question: {' '.join(notice.question.split())}"]
    if notice.pending:
        lines.append(f"Waiting for: {notice.pending}")
    if notice.error:
        lines.append(f"What failed: {notice.error}")
    if what := found(cfg, notice):
        lines += ["", what]
    if notice.changes is not None:
        c = notice.changes
        lines += [
            "",
            f"Since the last run: {len(c.new_sources)} new sources, {len(c.gone_sources)} gone, "
            f"{len(c.new_claims)} new findings, {len(c.dropped_claims)} no longer made.",
        ]
    lines += ["", f"Open it: {data['url']}", ""]
    return "\n".join(lines)


def _targets(cfg: Settings, notice: Notice) -> list[str]:
    return ["email"] if cfg.notify.smtp_host and email_recipients(cfg) else []


async def _deliver(cfg: Settings, inp: DeliverInput) -> str:
    await asyncio.to_thread(send_email, cfg, inp)
    return f"to {len(email_recipients(cfg))} address(es)"


CHANNEL = Channel("email", _targets, _deliver)
