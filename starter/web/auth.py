"""Who is asking: API tokens, signed session cookies and the cross-site checks of the web app.

Access control is off when RESEARCH_API_TOKENS is unset: one user, RESEARCH_USER (default `local`),
and `serve` only binds a loopback address. With tokens (`NAME:TOKEN,NAME:TOKEN`) every API call
needs `Authorization: Bearer TOKEN` or the session cookie a page got by signing in with a token.

For the pages (starter/web/pages.py), each takes the request (or, without it, the request being
served, which the app's middleware binds):

- `user_from_request(request) -> str | None`: the user of a Bearer token or a session cookie
  (RESEARCH_USER when access control is off); None: not signed in, or a token that is not known.
- `check_token(token) -> str | None`: the user a token belongs to (the sign-in form).
- `start_session(response, user)`: sets the session cookie: HttpOnly, SameSite=Strict, Secure
  when the request came over https, valid for SESSION_TTL_S.
- `end_session(response)`: removes it.
- `csrf_token(request) -> str`: the token a page embeds in `<meta name="csrf-token">`; its
  JavaScript sends it as the header `X-CSRF-Token` on every POST.

Nothing lives in process memory: a session cookie is `user.expiry.mac`, the MAC an HMAC-SHA256
over user and expiry with a key derived from RESEARCH_SESSION_SECRET, else from the configured
tokens, so any replica verifies it, and changing the tokens (or the secret) ends every session.
A user whose token is removed is signed out at once. The CSRF token is an HMAC of the session
cookie (or of the user, without one).

A state-changing request authenticated by a cookie (or, with access control off, any that a
browser sends) must come from our own origin (`Sec-Fetch-Site: same-origin` and/or an `Origin`
equal to ours) AND carry the CSRF token: `forbidden_cross_site` says why not. Bearer requests need
neither (a browser never adds that header by itself). Tokens are compared with
`hmac.compare_digest` and never logged or echoed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from starlette.requests import Request
from starlette.responses import Response

from config import ConfigError, Settings, settings

COOKIE = "research_session"
CSRF_HEADER = "X-CSRF-Token"
#: How long a sign-in lasts.
SESSION_TTL_S = 7 * 24 * 3600
#: Shorter tokens are refused at start: they could be guessed.
MIN_TOKEN_CHARS = 16
USER_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

#: The request being served; set by the app's middleware, so `check_token` needs no argument.
current_request: ContextVar[Request | None] = ContextVar("current_request", default=None)

Via = Literal["bearer", "cookie", "open"]


@dataclass(frozen=True)
class Identity:
    user: str
    #: How the user was recognised: a Bearer token, the session cookie, or no access control.
    via: Via


@dataclass(frozen=True)
class Access:
    """The configured users and the key that signs their sessions."""

    tokens: dict[str, str]
    key: bytes
    #: The only user while access control is off.
    open_user: str

    @property
    def on(self) -> bool:
        return bool(self.tokens)

    @classmethod
    def from_settings(cls, cfg: Settings) -> Access:
        """Raises `ConfigError` in one line for malformed tokens (never showing one)."""
        tokens = parse_tokens(
            cfg.research_api_tokens.get_secret_value() if cfg.research_api_tokens else ""
        )
        secret = (
            cfg.research_session_secret.get_secret_value() if cfg.research_session_secret else ""
        )
        material = secret or ",".join(f"{name}:{token}" for name, token in sorted(tokens.items()))
        key = hmac.new(material.encode(), b"deep-research web session v1", hashlib.sha256).digest()
        user = cfg.research_user.strip() or "local"
        return cls(tokens=tokens, key=key, open_user=user)


def parse_tokens(text: str) -> dict[str, str]:
    """`NAME:TOKEN,NAME:TOKEN` as {name: token}; empty text: no access control."""
    tokens: dict[str, str] = {}
    for position, entry in enumerate((e.strip() for e in text.split(",")), start=1):
        if not entry:
            continue
        name, _, token = entry.partition(":")
        name, token = name.strip(), token.strip()
        if not USER_NAME.fullmatch(name) or not token:
            raise ConfigError(
                f"RESEARCH_API_TOKENS: entry {position} is not NAME:TOKEN "
                "(a name of letters, digits, . _ @ -, then a colon and the token)"
            )
        if len(token) < MIN_TOKEN_CHARS:
            raise ConfigError(
                f"RESEARCH_API_TOKENS: the token of {name} is shorter than {MIN_TOKEN_CHARS} "
                "characters; make one with: python -c 'import secrets; print(secrets.token_urlsafe(24))'"
            )
        if name in tokens:
            raise ConfigError(f"RESEARCH_API_TOKENS: {name} is named twice")
        if token in tokens.values():
            raise ConfigError(f"RESEARCH_API_TOKENS: {name} has the same token as another user")
        tokens[name] = token
    return tokens


# --- for the pages -------------------------------------------------------------------------------


def user_from_request(request: Request) -> str | None:
    found = identify(request)
    return found.user if found else None


def check_token(token: str, request: Request | None = None) -> str | None:
    """The user TOKEN belongs to, or None. Every configured token is compared, in constant time."""
    access = _access(request)
    given = token.strip().encode()
    owner = None
    for name, known in access.tokens.items():
        if hmac.compare_digest(given, known.encode()):
            owner = name
    return owner


def start_session(response: Response, user: str, request: Request | None = None) -> None:
    request = request or current_request.get()
    access = _access(request)
    expires = int(time.time()) + SESSION_TTL_S
    response.set_cookie(
        COOKIE,
        _session_value(access, user, expires),
        max_age=SESSION_TTL_S,
        path="/",
        httponly=True,
        samesite="strict",
        secure=_https(request),
    )


def end_session(response: Response, request: Request | None = None) -> None:
    response.delete_cookie(
        COOKIE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=_https(request or current_request.get()),
    )


def csrf_token(request: Request) -> str:
    access = _access(request)
    cookie = request.cookies.get(COOKIE)
    bound = (
        f"session|{cookie}"
        if cookie and _session_user(access, cookie)
        else f"user|{user_from_request(request)}"
    )
    return _mac(access.key, "csrf", bound)


# --- for the API's dependencies ------------------------------------------------------------------


def identify(request: Request) -> Identity | None:
    """Who sent REQUEST; None when access control is on and nothing valid came with it. A Bearer
    header is final: a wrong token is not rescued by a cookie."""
    access = _access(request)
    if not access.on:
        return Identity(access.open_user, "open")
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, token = header.partition(" ")
        user = check_token(token, request) if scheme.lower() == "bearer" and token.strip() else None
        return Identity(user, "bearer") if user else None
    cookie = request.cookies.get(COOKIE)
    user = _session_user(access, cookie) if cookie else None
    return Identity(user, "cookie") if user else None


def forbidden_cross_site(request: Request, identity: Identity) -> str | None:
    """Why a state-changing request may not go ahead, or None. Bearer requests, and requests no
    browser sent (no cookie, no Origin, no Sec-Fetch-Site, access control off: curl, scripts),
    pass; anything else must be same-origin and carry the page's CSRF token."""
    if request.method in SAFE_METHODS or identity.via == "bearer":
        return None
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    if identity.via == "open" and site is None and origin is None and COOKIE not in request.cookies:
        return None
    if site is None and origin is None:
        return "cross-site request refused: the request does not say where it comes from (no Origin header)"
    if (site is not None and site != "same-origin") or (
        origin is not None and origin != _own_origin(request)
    ):
        return "cross-site request refused"
    given = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(given.encode(), csrf_token(request).encode()):
        return "missing or invalid CSRF token: reload the page and try again"
    return None


# --- plumbing ------------------------------------------------------------------------------------


def _access(request: Request | None) -> Access:
    request = request or current_request.get()
    state = (
        getattr(request.app.state, "backend", None)
        if request is not None and "app" in request.scope
        else None
    )
    return state.access if state is not None else Access.from_settings(settings())


def _session_value(access: Access, user: str, expires: int) -> str:
    name = base64.urlsafe_b64encode(user.encode()).decode().rstrip("=")
    return f"{name}.{expires}.{_mac(access.key, 'session', user, str(expires))}"


def _session_user(access: Access, value: str) -> str | None:
    """The user of a cookie that is well formed, signed by our key, unexpired, and whose user
    still has a token."""
    try:
        name, expires, mac = value.split(".")
        user = base64.urlsafe_b64decode(name + "=" * (-len(name) % 4)).decode()
        deadline = int(expires)
    except ValueError:  # also binascii.Error and UnicodeDecodeError
        return None
    if not hmac.compare_digest(mac.encode(), _mac(access.key, "session", user, expires).encode()):
        return None
    return user if deadline > time.time() and user in access.tokens else None


def _mac(key: bytes, *parts: str) -> str:
    digest = hmac.new(key, "|".join(parts).encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _https(request: Request | None) -> bool:
    return request is not None and request.url.scheme == "https"


def _own_origin(request: Request) -> str:
    host = request.headers.get("host") or request.url.netloc
    return f"{request.url.scheme}://{host}"
