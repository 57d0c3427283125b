"""Webhook channels: the operator's RESEARCH_WEBHOOKS (targets `webhook:N`) and a research's own
`notify` URLs (targets `notify:N`). One POST of the signed JSON body through the crawler's address
guard (private and loopback receivers only with WEBHOOK_ALLOW_PRIVATE=1; cloud metadata never);
its `text` line makes a Slack (or Mattermost, Rocket.Chat) incoming webhook take it as it is. A
URL that does not parse, a host that is refused or does not exist, and a 4xx other than
408/409/425/429 are final (one bounded line, no traceback); the rest is retried by
`NotifyWorkflow`. Signing: receivers.py.

**Bounded**: a receiver is anyone's URL, so its reply is hostile input. The
red team's receiver answered `200` with endless chunks and took a worker from 116 MiB to 13.7 GiB:
the reply was read whole and the timeout was per read. Now the reply is streamed and at most
MAX_REPLY_BYTES of it read (nothing needs more than its status); past that the connection is
closed and the delivery is final (`ReplyTooLarge`, not retried for a day: the same receiver would
answer the same way). The whole delivery, connect to last byte, has one deadline (DEADLINE_S),
well inside the activity's own timeout; a receiver that trickles bytes past it is retried, as a
slow one would be."""

from __future__ import annotations

import asyncio
import time

import httpx
from temporalio.exceptions import ApplicationError

from activities.notify.channel import Channel
from activities.notify.message import body, encoded
from activities.notify.receivers import (
    SIGNATURE_HEADER,
    BadReceiver,
    bounded,
    normalised,
    receiver_secret,
    resolved,
    signature,
)
from activities.web.netguard import AddressGuard, Refused, check_url, guarded_transport
from settings import Settings
from telemetry import redaction
from workflows.standing_messages import DeliverInput, Notice

TIMEOUT_S = 20.0
#: The whole delivery, connect to last byte read (TIMEOUT_S is per operation); well inside the
#: activity's 60 s timeout (DELIVER_NOTIFICATION in workflows/roles.py).
DEADLINE_S = 30.0
#: The most of a reply that is read: receivers answer "ok" or a short JSON; the status decides.
MAX_REPLY_BYTES = 4096
#: Statuses worth trying again (the receiver is busy or briefly away); any other 4xx is final.
RETRYABLE_4XX = frozenset({408, 409, 425, 429})


def webhook_urls(cfg: Settings) -> list[str]:
    return [u.strip() for u in cfg.notify.webhooks.split(",") if u.strip()]


def target_url(cfg: Settings, notice: Notice, target: str) -> str:
    kind, _, index = target.partition(":")
    urls = webhook_urls(cfg) if kind == "webhook" else notice.notify
    try:
        return urls[int(index)]
    except (ValueError, IndexError):
        raise ApplicationError(
            f"notification target {target} is no longer configured", type="NotConfigured"
        ) from None


def operator_key(cfg: Settings) -> str | None:
    """RESEARCH_WEBHOOK_SECRET, or None when it is unset or empty (never an empty HMAC key)."""
    key = cfg.notify.webhook_secret
    return key.get_secret_value() if key is not None and key.get_secret_value() else None


def signing_key(cfg: Settings, target: str, owner: str, url: str) -> str | None:
    """The operator's key for the operator's receivers; a user's own receiver's derived one."""
    key = operator_key(cfg)
    if key is None or not target.startswith("notify:"):
        return key
    return receiver_secret(key, owner, url)


async def post_webhook(cfg: Settings, url: str, inp: DeliverInput) -> int:
    guard = AddressGuard(allow_private=cfg.notify.webhook_allow_private)
    try:
        url = normalised(url, cfg.notify.webhook_allow_private)
        check_url(httpx.URL(url))
        await resolved(url, guard)
    except (BadReceiver, Refused, httpx.InvalidURL) as err:
        retry = isinstance(err, BadReceiver) and err.retryable
        raise ApplicationError(
            bounded(f"webhook refused: {getattr(err, 'reason', None) or err}"),
            type="Unreachable" if retry else "Refused",
            non_retryable=not retry,
        ) from None
    raw = encoded(body(cfg, inp.notice))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": cfg.crawl.user_agent,
        "X-Research-Event": inp.notice.event.value,
        "X-Research-Delivery": inp.delivery_id,
    }
    key = signing_key(cfg, inp.target, inp.notice.owner, url)
    if key is not None:
        headers[SIGNATURE_HEADER] = signature(key, int(time.time()), url, raw)
    return await _post(guard, url, raw, headers)


async def _post(guard: AddressGuard, url: str, raw: bytes, headers: dict[str, str]) -> int:
    try:
        async with asyncio.timeout(DEADLINE_S):
            with redaction.secret_path():  # a receiver's URL is its secret: no path in traces
                status = await _exchange(guard, url, raw, headers)
    except TimeoutError:
        raise ApplicationError(
            f"webhook {_host(url)} did not answer within {DEADLINE_S:g} s", type="Unreachable"
        ) from None
    if 200 <= status < 300:
        return status
    final = 400 <= status < 500 and status not in RETRYABLE_4XX
    raise ApplicationError(
        f"webhook {_host(url)} answered HTTP {status}",
        type="Rejected" if final else "ReceiverError",
        non_retryable=final,
    )


async def _exchange(guard: AddressGuard, url: str, raw: bytes, headers: dict[str, str]) -> int:
    """POST and read at most MAX_REPLY_BYTES of the reply (streamed; leaving the block closes the
    connection, so the rest is never read). The reply's status."""
    transport = guarded_transport(guard, httpx.Limits(max_connections=2))
    try:
        async with (
            httpx.AsyncClient(
                transport=transport, timeout=TIMEOUT_S, follow_redirects=False
            ) as client,
            client.stream("POST", url, content=raw, headers=headers) as response,
        ):
            read = 0
            async for chunk in response.aiter_raw():
                read += len(chunk)
                if read > MAX_REPLY_BYTES:
                    raise ReplyTooLarge(response.status_code, read)
            return response.status_code
    except ReplyTooLarge as err:
        raise ApplicationError(
            f"webhook {_host(url)} answered HTTP {err.status} with a reply over "
            f"{MAX_REPLY_BYTES} bytes: not read, not retried",
            err.read,
            type="ReplyTooLarge",
            non_retryable=True,
        ) from None
    except Refused as err:
        raise ApplicationError(
            bounded(_private_hint(err.reason)), type="Refused", non_retryable=True
        ) from None
    except httpx.HTTPError as err:
        raise ApplicationError(
            f"webhook {_host(url)} unreachable: {type(err).__name__}", type="Unreachable"
        ) from None


class ReplyTooLarge(Exception):
    """A reply longer than MAX_REPLY_BYTES: its status, and the bytes read before it was closed."""

    def __init__(self, status: int, read: int) -> None:
        super().__init__(status, read)
        self.status = status
        self.read = read


def _private_hint(reason: str) -> str:
    return reason.replace("CRAWL_ALLOW_PRIVATE", "WEBHOOK_ALLOW_PRIVATE")


def _host(url: str) -> str:
    """The receiver named without its path (a Slack webhook's path is its secret)."""
    try:
        return httpx.URL(url).host or "?"
    except httpx.InvalidURL:
        return "?"


async def _deliver(cfg: Settings, inp: DeliverInput) -> str:
    status = await post_webhook(cfg, target_url(cfg, inp.notice, inp.target), inp)
    return f"HTTP {status}"


def _configured(cfg: Settings, notice: Notice) -> list[str]:
    return [f"webhook:{i}" for i, _ in enumerate(webhook_urls(cfg))]


def _own(cfg: Settings, notice: Notice) -> list[str]:
    return [f"notify:{i}" for i, _ in enumerate(notice.notify)]


CONFIGURED = Channel("webhook", _configured, _deliver)
OWN = Channel("notify", _own, _deliver)
