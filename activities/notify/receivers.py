"""A receiver's URL made plain before anything is sent to it, and what its deliveries are signed
with.

**Normalised**: what the red team got past the create check and then retried for a
day with a traceback each time: `0177.0.0.1` (octal), `127.000.000.001`, `①②⑦.0.0.1` (digits
that NFKC folds to ASCII), `localhost.` (the root dot). A URL is NFKC-folded, its host IDNA-encoded
(UTS 46), one trailing dot dropped, and an IPv4 address written any way but four plain decimal
numbers refused (what `inet_aton` would read as 127.0.0.1 is not what a person reading it sees);
then the address guard judges the host, and at create the name must resolve. The same rule runs at
delivery, so a receiver stored before it is refused once, not retried for a day.

**Signed** (R13), as Stripe and Slack sign: `X-Research-Signature: t=<unix seconds>,v1=<hex>`, the
HMAC-SHA256 of `<t>.<receiver URL>.<raw body>`. A captured delivery replayed later fails the
receiver's age check; replayed to another receiver, it fails the URL. The operator's
RESEARCH_WEBHOOKS are signed with RESEARCH_WEBHOOK_SECRET; a user's own `notify` receiver with a
secret of its own, derived from that key, the owner and the URL (`receiver_secret`), which its owner
reads in the standing research's detail: no user ever holds the operator's key.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import socket
import unicodedata
from ipaddress import IPv6Address, ip_address
from urllib.parse import urlsplit

import idna

from activities.web.netguard import METADATA_HOSTS, AddressGuard, Refused, classify

SIGNATURE_HEADER = "X-Research-Signature"
#: The longest error text a failed delivery carries (Temporal keeps every attempt's failure).
MAX_ERROR_CHARS = 300
RESOLVE_TIMEOUT_S = 5.0
_NUMERIC_LABEL = re.compile(r"(0x[0-9a-f]*|[0-9]+)")
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


class BadReceiver(ValueError):
    """A receiver URL that is never sent to: one line saying why."""

    def __init__(self, reason: str, retryable: bool = False) -> None:
        super().__init__(bounded(reason))
        self.reason = bounded(reason)
        self.retryable = retryable


def bounded(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def _host(raw: str) -> str:
    """The host as DNS and the address guard see it: IDNA (UTS 46), lower case, no root dot."""
    host = raw[:-1] if raw.endswith(".") else raw
    if not host or host.endswith(".") or ".." in host:
        raise BadReceiver(f"no usable host in {raw!r}")
    try:
        return str(ip_address(host))  # an IPv6 literal, or a canonical IPv4 one
    except ValueError:
        pass
    labels = host.split(".")
    if all(_NUMERIC_LABEL.fullmatch(label) for label in labels):
        raise BadReceiver(f"the address {raw} is not four plain decimal numbers (a.b.c.d)")
    try:
        return idna.encode(host, uts46=True).decode("ascii").lower()
    except idna.IDNAError:
        raise BadReceiver(f"the host {raw!r} is not a valid domain name") from None


def _judged(host: str, allow_private: bool) -> None:
    """Refusals the host alone decides: metadata and loopback names, non-public addresses."""
    if host in METADATA_HOSTS:
        raise BadReceiver(f"{host} is a cloud metadata address")
    if (host in _LOOPBACK_NAMES or host.endswith(".localhost")) and not allow_private:
        raise BadReceiver(f"{host} is this machine (set WEBHOOK_ALLOW_PRIVATE=1 to allow)")
    try:
        verdict = classify(ip_address(host))
    except ValueError:
        return
    if verdict is not None and (not verdict[1] or not allow_private):
        hint = " (set WEBHOOK_ALLOW_PRIVATE=1 to allow)" if verdict[1] else ""
        raise BadReceiver(f"{host} is a {verdict[0]}{hint}")


def normalised(url: str, allow_private: bool) -> str:
    """URL as it is sent to and signed: NFKC-folded, http(s), no user:password, its host IDNA and
    judged. `BadReceiver` otherwise."""
    text = unicodedata.normalize("NFKC", str(url).strip())
    if not text or any(ch.isspace() or unicodedata.category(ch)[0] == "C" for ch in text):
        raise BadReceiver("use http(s)://host/path without spaces or control characters")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise BadReceiver("use http(s)://host/path") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise BadReceiver("use http(s)://host/path")
    if "@" in parts.netloc:
        raise BadReceiver("no user:password@ in a receiver URL")
    host = _host(parts.hostname)
    _judged(host, allow_private)
    shown = f"[{host}]" if isinstance(_ip(host), IPv6Address) else host
    netloc = shown if port is None else f"{shown}:{port}"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{netloc}{parts.path or '/'}{query}"


def _ip(host: str) -> object:
    try:
        return ip_address(host)
    except ValueError:
        return None


async def resolved(url: str, guard: AddressGuard) -> None:
    """Resolve the URL's host through the guard: a refused address or a name that does not exist
    is final; a resolver that did not answer may be tried again."""
    parts = urlsplit(url)
    host = (parts.hostname or "").strip("[]")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        await asyncio.wait_for(guard.addresses(host, port), RESOLVE_TIMEOUT_S)
    except Refused as err:
        raise BadReceiver(
            err.reason.replace("CRAWL_ALLOW_PRIVATE", "WEBHOOK_ALLOW_PRIVATE")
        ) from None
    except TimeoutError:
        raise BadReceiver(f"{host} did not resolve in time", retryable=True) from None
    except socket.gaierror as err:
        again = err.errno in (socket.EAI_AGAIN, getattr(socket, "EAI_SYSTEM", None))
        raise BadReceiver(f"{host} does not resolve", retryable=again) from None


async def checked(url: str, allow_private: bool) -> str:
    """What a create does with a `notify` URL: normalised, and its host resolved and judged."""
    plain = normalised(url, allow_private)
    await resolved(plain, AddressGuard(allow_private=allow_private))
    return plain


def receiver_secret(operator_key: str, owner: str, url: str) -> str:
    """The key OWNER's own receiver URL is signed with: derived, so nothing is stored, and
    different for every receiver and owner (one receiver's secret verifies nothing else)."""
    material = f"notify-receiver\x00{owner}\x00{url}".encode()
    return "whrs_" + hmac.new(operator_key.encode(), material, hashlib.sha256).hexdigest()[:48]


def signature(secret: str, at: int, url: str, raw: bytes) -> str:
    """`t=<at>,v1=<hex>`: what a receiver recomputes over `<t>.<its own URL>.<raw body>`."""
    signed = f"{at}.{url}.".encode() + raw
    return f"t={at},v1=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
