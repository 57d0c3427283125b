"""Who is asking: API tokens, signed session cookies and the cross-site checks of the web app.

Access control is off when RESEARCH_API_TOKENS and RESEARCH_OIDC_ISSUER are unset: one user,
RESEARCH_USER (default `local`), and `serve` only binds a loopback address. With tokens
(`NAME:TOKEN,NAME:TOKEN`) every API call needs `Authorization: Bearer TOKEN` or the session
cookie a page got by signing in with a token. With an OpenID Connect provider (oidc.py,
pages/oidc_signin.py) people sign in there and get the same session cookie; API clients may
also send the provider's access token (a JWT, checked like an ID token) as their Bearer token.
User names are compared without case: two names that differ only in case are refused at start (one
line), so `alice` and `Alice` are never two users; `local` is reserved (the CLI's and MCP's user).
A provider's user is `oidc:CLAIM` (oidc.py says why), a namespace no token's name can enter: a
session the provider vouched for is never a token user's, and a token's never a provider user's.

For the pages (starter/web/pages/), each takes the request (or, without it, the request being
served, which the app's middleware binds):

- `user_from_request(request) -> str | None`: the user of a Bearer token or a session cookie
  (RESEARCH_USER when access control is off); None: not signed in, or a token that is not known.
- `check_token(token) -> str | None`: the user a token belongs to (the sign-in form).
- `start_session(response, user)`: sets the session cookie: HttpOnly, SameSite=Strict, Secure
  when the request came over https, valid for SESSION_TTL_S.
- `end_session(response)`: removes it.
- `csrf_token(request) -> str`: the token a page embeds in `<meta name="csrf-token">`; its
  JavaScript sends it as the header `X-CSRF-Token` on every POST.

A session cookie is `user.expiry.id.mac`, the MAC an HMAC-SHA256 over user, expiry, a random
session id and a fingerprint of the user's token, with a key derived from RESEARCH_SESSION_SECRET,
else from the configured tokens (without tokens: a random secret of this install, kept under
RESEARCH_DATA_DIR), so any replica verifies it. A user whose token is removed or replaced is
signed out at once (with or without a secret); signing out records the session id in the
library's database (starter/web/identity/sessions.py), so a copy of the cookie fails on every replica.
Wrong tokens (sign-in form or Bearer) are counted per client: past the limit, 429 until the
window passes; past the limit of all clients together, wrong tokens are 429 but a right one passes. `POST /signin` refuses a post another site made (`cross_site_signin`: login CSRF).
The CSRF token is an HMAC of the session cookie (or of the user, without one).

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
import secrets
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from settings import DEFAULT_USER, ConfigError, Settings, settings
from starter.web.identity.oidc import OidcSettings, Provider, Refused, provider_user, shown_user
from starter.web.identity.sessions import Attempts, Revocations, open_secret

COOKIE = "research_session"
CSRF_HEADER = "X-CSRF-Token"
#: How long a sign-in lasts.
SESSION_TTL_S = 7 * 24 * 3600
#: Shorter tokens are refused at start: they could be guessed.
MIN_TOKEN_CHARS = 16
USER_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
#: What a token may hold: no separators (`,` `:` `;`), no spaces, no quotes.
TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~+/=-]+")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: The CLI's and the MCP server's user by default (RESEARCH_USER): no token may be named so (in
#: any case), or its holder would own all their research.
RESERVED_USER = DEFAULT_USER

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
    #: Sessions signed out before they expired (shared through the library's database).
    revocations: Revocations | None = field(default=None, compare=False)
    #: Failed sign-ins and Bearer tokens, per client.
    attempts: Attempts = field(default_factory=Attempts, compare=False)
    #: The OpenID Connect provider people sign in with (starter/web/identity/oidc.py), if one is set.
    oidc: Provider | None = field(default=None, compare=False)

    @property
    def on(self) -> bool:
        return bool(self.tokens) or self.oidc is not None

    @classmethod
    def from_settings(cls, cfg: Settings) -> Access:
        """Raises `ConfigError` in one line for malformed tokens (never showing one)."""
        tokens = parse_tokens(
            cfg.access.api_tokens.get_secret_value() if cfg.access.api_tokens else ""
        )
        secret = cfg.access.session_secret.get_secret_value() if cfg.access.session_secret else ""
        provider = OidcSettings.from_settings(cfg)
        material = secret or ",".join(f"{name}:{token}" for name, token in sorted(tokens.items()))
        if provider is not None and not secret:  # every replica knows the client's secret
            material += f"|oidc:{provider.client_secret}"
        if not material:  # no tokens, no secret: this install's own random key (CSRF tokens)
            material = open_secret(cfg.library.data_dir)
        key = hmac.new(material.encode(), b"deep-research web session v2", hashlib.sha256).digest()
        user = cfg.access.user.strip() or "local"
        return cls(
            tokens=tokens,
            key=key,
            open_user=user,
            revocations=Revocations(cfg.library.db_url) if tokens or provider else None,
            oidc=Provider(provider) if provider else None,
        )


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
        if not TOKEN_CHARS.fullmatch(token):
            raise ConfigError(
                f"RESEARCH_API_TOKENS: the token of {name} holds a character a token may not "
                "(a ; or a space?): separate NAME:TOKEN pairs with commas"
            )
        if len(token) < MIN_TOKEN_CHARS:
            raise ConfigError(
                f"RESEARCH_API_TOKENS: the token of {name} is shorter than {MIN_TOKEN_CHARS} "
                "characters; make one with: python -c 'import secrets; print(secrets.token_urlsafe(24))'"
            )
        if name.casefold() == RESERVED_USER:
            raise ConfigError(
                f"RESEARCH_API_TOKENS: the name {name} is reserved for the research of the CLI "
                "and the MCP server (RESEARCH_USER's default): choose another name"
            )
        twice = [known for known in tokens if known.casefold() == name.casefold()]
        if twice:
            raise ConfigError(
                f"RESEARCH_API_TOKENS: {name} is named twice ({twice[0]} and {name}: names are "
                "compared without case)"
            )
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
    request = request or current_request.get()
    access = _access(request)
    client = _client(request)
    wait = access.attempts.wait_s(client)
    if wait > 0:
        raise too_many(wait, "too many wrong access tokens from this address")
    owner = _token_owner(access, token)
    if owner is None:
        _failed(access, client)
    return owner


def _token_owner(access: Access, token: str) -> str | None:
    given = token.strip().encode()
    owner = None
    for name, known in access.tokens.items():
        if hmac.compare_digest(given, known.encode()):
            owner = name
    return owner


def _failed(access: Access, client: str) -> None:
    """Counts a wrong token from CLIENT; past the backstop of all clients together, this one is
    refused (429). Only failures are: a right token is never held back by other addresses'."""
    access.attempts.failed(client)
    wait = access.attempts.everyone_wait_s()
    if wait > 0:
        raise too_many(wait, "too many wrong access tokens lately")


def too_many(wait: float, what: str) -> HTTPException:
    seconds = max(1, int(wait + 0.999))
    return HTTPException(
        429, f"{what}: try again in {seconds} s", headers={"Retry-After": str(seconds)}
    )


def signed_in(user: str, request: Request | None = None) -> None:
    """Counts a sign-in of USER; 429 when the user signed in too often lately."""
    wait = _access(request).attempts.signed_in(user)
    if wait > 0:
        raise too_many(wait, f"too many sign-ins as {shown_user(user)}")


CROSS_SITE_SIGNIN = "cross-site sign-in refused: sign in from this site's own page"


def cross_site_signin(request: Request) -> str | None:
    """Why a sign-in form post may not go ahead (it came from another site: login CSRF), or None.
    A browser says where a post comes from (Sec-Fetch-Site, Origin); a script that says nothing
    passes. Sec-Fetch-Site decides when it is sent: the pages' `no-referrer` policy makes a
    browser send `Origin: null` with its own form posts, so Origin is compared only without it
    (and `null` is then refused: it is no origin of ours)."""
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    if site is not None:
        return None if site in ("same-origin", "none") else CROSS_SITE_SIGNIN
    if origin is not None and origin != _own_origin(request):
        return CROSS_SITE_SIGNIN
    return None


def start_session(
    response: Response, user: str, request: Request | None = None, by_provider: bool = False
) -> None:
    """BY_PROVIDER: the identity provider vouched for USER (pages/oidc_signin.py), not a token."""
    request = request or current_request.get()
    access = _access(request)
    expires = int(time.time()) + SESSION_TTL_S
    bound = _fingerprints(access, user)[-1] if by_provider else None
    response.set_cookie(
        COOKIE,
        _session_value(access, user, expires, secrets.token_urlsafe(16), bound),
        max_age=SESSION_TTL_S,
        path="/",
        httponly=True,
        samesite="strict",
        secure=_https(request),
    )


def end_session(response: Response, request: Request | None = None) -> None:
    """Removes the cookie and ends the session it held, on every replica (a copy of the cookie
    no longer works either)."""
    request = request or current_request.get()
    access = _access(request)
    cookie = request.cookies.get(COOKIE) if request is not None else None
    if cookie and access.revocations is not None and _session_user(access, cookie):
        _, expires, session_id, _ = cookie.split(".")
        access.revocations.revoke(session_id, int(expires))
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
    return signature(access.key, "csrf", bound)


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
        user = (
            _bearer_user(token, request) if scheme.lower() == "bearer" and token.strip() else None
        )
        return Identity(user, "bearer") if user else None
    cookie = request.cookies.get(COOKIE)
    user = _session_user(access, cookie) if cookie else None
    return Identity(user, "cookie") if user else None


async def bearer_keys(request: Request) -> None:
    """Before `identify` checks a provider's access token: the provider's keys, fetched when
    not yet (or when the token names a new one). An unreachable provider refuses the token."""
    provider = _access(request).oidc
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if provider is None or scheme.lower() != "bearer" or token.count(".") != 2:
        return
    try:
        await provider.ready()
        await provider.refresh_for(token.strip())
    except Refused:
        pass  # verify() then refuses it in one line


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


def _bearer_user(token: str, request: Request) -> str | None:
    """A configured token's user, or the user of the identity provider's access token (a JWT:
    three dot-separated parts) when a provider is set. Both count against the client's failures."""
    access = _access(request)
    if access.oidc is None or token.count(".") != 2:
        return check_token(token, request)
    client = _client(request)
    wait = access.attempts.wait_s(client)
    if wait > 0:
        raise too_many(wait, "too many wrong access tokens from this address")
    if owner := _token_owner(access, token):
        return owner
    try:
        claims = access.oidc.verify(token.strip(), "access token")
        return access.oidc.settings.owner_of(claims)
    except Refused:
        _failed(access, client)
        return None


def access_of(request: Request | None) -> Access:
    """The users and keys of the app serving REQUEST (for pages/oidc_signin.py)."""
    return _access(request)


def _access(request: Request | None) -> Access:
    request = request or current_request.get()
    state = (
        getattr(request.app.state, "backend", None)
        if request is not None and "app" in request.scope
        else None
    )
    return state.access if state is not None else Access.from_settings(settings())


def _session_value(
    access: Access, user: str, expires: int, session_id: str, bound: str | None = None
) -> str:
    """`user.expiry.id.mac`: the MAC also covers what vouched for the user (BOUND: a fingerprint
    of the user's token, or of the provider's settings), so replacing a token ends the sessions
    opened with the old one (with or without a session secret), and changing the provider or
    who it lets in ends the sessions it opened."""
    name = base64.urlsafe_b64encode(user.encode()).decode().rstrip("=")
    bound = bound if bound is not None else _fingerprints(access, user)[0]
    mac = signature(access.key, "session", user, str(expires), session_id, bound)
    return f"{name}.{expires}.{session_id}.{mac}"


def _fingerprints(access: Access, user: str) -> list[str]:
    """What may vouch for USER: the user's token for a token user, the identity provider for a
    provider user (`oidc:NAME`), never both: a provider session is never a token user's."""
    if provider_user(user):
        return [access.oidc.settings.fingerprint] if access.oidc is not None else []
    token = access.tokens.get(user, "")
    return [hashlib.sha256(b"token|" + token.encode()).hexdigest()] if token else []


def _session_user(access: Access, value: str) -> str | None:
    """The user of a cookie that is well formed, signed by our key, unexpired, and whose user
    still has a token."""
    try:
        name, expires, session_id, mac = value.split(".")
        user = base64.urlsafe_b64decode(name + "=" * (-len(name) % 4)).decode()
        deadline = int(expires)
    except ValueError:  # also binascii.Error and UnicodeDecodeError
        return None
    expected = [
        signature(access.key, "session", user, expires, session_id, bound)
        for bound in _fingerprints(access, user)
    ]
    if not any([hmac.compare_digest(mac.encode(), e.encode()) for e in expected]):
        return None  # also: the user has no token any more, and no provider vouches
    if deadline <= time.time():
        return None
    if access.revocations is not None and access.revocations.revoked(session_id):
        return None
    return user


def signature(key: bytes, *parts: str) -> str:
    digest = hmac.new(key, "|".join(parts).encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _client(request: Request | None) -> str:
    client = request.client if request is not None else None
    return client.host if client else "unknown"


def _https(request: Request | None) -> bool:
    return request is not None and request.url.scheme == "https"


def _own_origin(request: Request) -> str:
    host = request.headers.get("host") or request.url.netloc
    return f"{request.url.scheme}://{host}"
