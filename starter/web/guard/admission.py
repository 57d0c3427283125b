"""Who may send the web app a body, decided before a byte of it is read.

A body is held in memory while it arrives (starter/web/guard/shield.py caps its size), so 400
connections each sending a 5 MB upload with no token once took the web process from 165 MB to
2.2 GB before any token was looked at. Here, from the headers alone:

- **The token first.** With access control on, an API call that changes something (`POST`, `PUT`,
  `PATCH`, `DELETE` under /api/) and an upload (UPLOAD_PATHS) must name a user (a Bearer token or
  the session cookie) before its body is read: else 401 in one line (an upload form: the sign-in
  page), sent whole at once; what the client still sends is read and dropped (nothing kept, within
  the body's size and time limits), so it reads the answer, and then the connection closes.
- **Upload bytes in flight.** A signed-in user's upload reserves its size (declared, else the
  largest an upload may be) from WEB_UPLOADS_IN_FLIGHT_MB for as long as the request lasts: past it,
  503 with Retry-After; one user may have WEB_UPLOADS_PER_USER uploads arriving at once (429).

The number of connections at once is uvicorn's `limit_concurrency` (WEB_MAX_CONNECTIONS:
starter/web/guard/slow_clients.py), so what a body may cost is bounded in all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import Scope

from starter.web.identity import auth

UPLOAD_PATHS = ("/api/documents", "/documents")
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: How long a refused upload is told to wait: uploads take seconds.
RETRY_UPLOAD_S = 5


@dataclass(frozen=True)
class Refusal:
    """An answer given instead of reading the body."""

    status: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)


def needs_token(scope: Scope) -> bool:
    path = scope.get("path", "")
    unsafe = scope.get("method", "GET") in UNSAFE
    return unsafe and (path.startswith("/api/") or path in UPLOAD_PATHS)


async def who_sends(scope: Scope) -> str | Refusal | None:
    """The user a request that needs a token comes from; a `Refusal` when it names none (or too
    many wrong tokens came from its address); None when it needs no token here. The provider's
    keys are loaded first: a replica's first request may carry the provider's access token."""
    if not needs_token(scope):
        return None
    request = Request(scope)
    try:
        await auth.bearer_keys(request)
        identity = auth.identify(request)
    except HTTPException as err:
        return Refusal(err.status_code, str(err.detail), dict(err.headers or {}))
    if identity is not None:
        return identity.user
    if not scope.get("path", "").startswith("/api/"):  # the home page's upload form
        return Refusal(303, "sign in to upload", {"location": f"/signin?next={quote('/')}"})
    given = any(key == b"authorization" for key, _ in scope.get("headers", []))
    return Refusal(
        401,
        "the access token is not valid"
        if given
        else "sign in: send Authorization: Bearer TOKEN (a token of RESEARCH_API_TOKENS)",
        {"www-authenticate": "Bearer"},
    )


class UploadsInFlight:
    """The upload bytes the app holds at once, in all and per user."""

    def __init__(self, total_bytes: int, per_user: int) -> None:
        self.total_bytes = total_bytes
        self.per_user = per_user
        self.held = 0
        self.users: Counter[str] = Counter()

    def reserve(self, user: str, size: int) -> Refusal | None:
        """Holds SIZE bytes for USER's upload (None), or says why not."""
        if self.users[user] >= self.per_user:
            return Refusal(
                429,
                f"you already have {self.per_user} upload(s) arriving: wait for them to finish",
                {"retry-after": str(RETRY_UPLOAD_S)},
            )
        if self.held + size > self.total_bytes:
            return Refusal(
                503,
                "the server is receiving too many uploads at once: try again in a few seconds",
                {"retry-after": str(RETRY_UPLOAD_S)},
            )
        self.held += size
        self.users[user] += 1
        return None

    def release(self, user: str, size: int) -> None:
        self.held -= size
        self.users[user] -= 1
        if self.users[user] <= 0:
            del self.users[user]
