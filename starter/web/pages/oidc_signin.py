"""Signing in with the identity provider: `/auth/login` sends the browser there, `/auth/callback`
brings it back and opens the web app's own session (auth.start_session, as a token sign-in does);
`signed_out_there` sends it on to the provider's end-session endpoint after `/signout`.

Authorization Code with PKCE (S256), through Authlib's httpx client. What the callback must match
(the state, and where to go next) travels in a short-lived cookie signed with the sessions' key;
the nonce and the PKCE verifier are derived from the state with that key; so any replica can
finish a sign-in another began; a state is used once (it is
recorded as used in the library's revocations table, like a signed-out session), so a replayed
callback is refused. Every refusal is the sign-in page with one line, and no session.

Why pages and not redirects at the end: the session cookie is SameSite=Strict, and a browser
does not send it on a redirect chain that began at the provider's site; a page of our own that
moves on (`<meta http-equiv="refresh">`) is a same-site navigation that carries it. Likewise
after sign-out: a form post may not redirect to another origin under the pages' CSP
(`form-action 'self'`), but a page may move on.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import re
import secrets
import time
from typing import Any
from urllib.parse import urlencode

import httpx
from authlib.integrations.base_client.errors import OAuthError  # type: ignore[import-untyped]
from authlib.integrations.httpx_client import AsyncOAuth2Client  # type: ignore[import-untyped]
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException

from starter.web.identity import auth
from starter.web.identity.oidc import PROVIDER_TIMEOUT_S, Provider, Refused, unreachable
from starter.web.pages.frame import local_path, page

try:  # Authlib's client is built on httpx2 where that is installed, else on httpx
    from httpx2 import HTTPError as OAuthClientError
except ImportError:  # pragma: no cover - depends on what else is installed
    from httpx import HTTPError as OAuthClientError  # type: ignore[assignment]

log = logging.getLogger(__name__)
router = APIRouter(include_in_schema=False)
#: The cookie a sign-in in progress keeps, and how long a person has at the provider.
PENDING = "research_oidc_pending"
PENDING_TTL_S = 600
#: The ID token, kept for the provider's end-session request (`id_token_hint`; Okta needs it).
HINT = "research_oidc_hint"
MAX_HINT_CHARS = 3000
#: An OAuth error code as RFC 6749 4.1.2.1 defines them (`access_denied`, `login_required`...).
_ERROR_CODE = re.compile(r"[a-z_]{1,40}")


@router.get("/auth/login")
async def login(request: Request, next: str = "/") -> Response:  # noqa: A002 - the query's name
    provider = _provider(request)
    target = local_path(next)
    try:
        await provider.ready()
    except Refused as err:
        return _refused(request, target, str(err), 503)
    state = secrets.token_urlsafe(24)
    pending = {"state": state, "next": target, "until": int(time.time()) + PENDING_TTL_S}
    async with _client(provider) as client:
        url, _ = client.create_authorization_url(
            provider.endpoint("authorization_endpoint"),
            state=state,
            nonce=_derived(request, "nonce", state),
            code_verifier=_derived(request, "pkce", state),
        )
    response = RedirectResponse(url, status_code=302)
    response.set_cookie(
        PENDING,
        _seal(request, pending),
        max_age=PENDING_TTL_S,
        path="/auth/callback",
        httponly=True,
        samesite="lax",  # sent when the provider sends the browser back (a top-level GET)
        secure=request.url.scheme == "https",
    )
    return response


@router.get("/auth/callback")
async def callback(request: Request) -> Response:
    provider = _provider(request)
    pending = _unseal(request, request.cookies.get(PENDING, ""))
    target = str(pending.get("next", "/")) if pending else "/"
    try:
        user, id_token = await _finish(request, provider, pending)
        auth.signed_in(user, request)  # too many sign-ins as one user: 429
    except Refused as err:
        return _refused(request, target, str(err), err.status)
    except HTTPException as err:
        return _refused(request, target, str(err.detail), err.status_code)
    response = _moving_on(target, "Signed in")
    auth.start_session(response, user, request, by_provider=True)
    response.delete_cookie(PENDING, path="/auth/callback")
    if len(id_token) <= MAX_HINT_CHARS:
        response.set_cookie(
            HINT,
            id_token,
            max_age=auth.SESSION_TTL_S,
            path="/signout",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
    log.info("signed in through the identity provider: %s", user)
    return response


async def signed_out_there(request: Request) -> Response | None:
    """After /signout of a session the provider opened: a page that moves on to the provider's
    end-session endpoint (when it has one), which sends the person back to /signin."""
    provider = auth.access_of(request).oidc
    hint = request.cookies.get(HINT)
    if provider is None or not hint:
        return None
    try:
        await provider.ready()
    except Refused:
        return None  # signed out here; the provider cannot be told
    endpoint = provider.endpoint("end_session_endpoint")
    if endpoint is None:  # Google: nothing to end there
        return None
    query = {
        "client_id": provider.settings.client_id,
        "post_logout_redirect_uri": provider.settings.signed_out_uri,
        "id_token_hint": hint,
    }
    sep = "&" if "?" in endpoint else "?"
    response = _moving_on(f"{endpoint}{sep}{urlencode(query)}", "Signing out at your provider")
    response.delete_cookie(HINT, path="/signout")
    return response


async def _finish(
    request: Request, provider: Provider, pending: dict[str, Any] | None
) -> tuple[str, str]:
    """The user the provider vouches for, and the ID token; `Refused` in one line otherwise."""
    query = request.query_params
    if query.get("error"):  # its code only: error_description is text anyone can put in a link
        code = query["error"] if _ERROR_CODE.fullmatch(query["error"]) else "an error"
        raise Refused(f"the identity provider did not sign you in ({code}): try again")
    if pending is None:
        raise Refused("this sign-in was not started here or took too long: sign in again")
    if not secrets.compare_digest(query.get("state", ""), str(pending["state"])):
        raise Refused("the sign-in's state does not match this browser's: sign in again")
    await provider.ready()
    # RFC 9207: a provider that says it names itself in its answers must; a name given must match
    promised = provider.metadata.get("authorization_response_iss_parameter_supported") is True
    if (promised or "iss" in query) and query.get("iss") != provider.issuer:
        raise Refused("the answer came from another identity provider (iss)")
    state = str(pending["state"])
    _use_once(request, state, int(pending["until"]))
    tokens = await _exchange(provider, query.get("code", ""), _derived(request, "pkce", state))
    id_token, access_token = tokens["id_token"], tokens.get("access_token")
    await provider.refresh_for(id_token)  # signed with a key the provider has just rotated in
    claims = provider.verify(id_token, "ID token", nonce=_derived(request, "nonce", state))
    if provider.settings.lacks(claims) and isinstance(access_token, str):
        claims = {**await provider.userinfo(access_token, claims.get("sub")), **claims}
    return provider.settings.owner_of(claims), id_token


async def _exchange(provider: Provider, code: str, verifier: str) -> dict[str, Any]:
    """The tokens for CODE (an ID token among them), from the provider's token endpoint (client
    secret + PKCE)."""
    if not code:
        raise Refused("the identity provider sent no authorization code: sign in again")
    try:
        async with _client(provider) as client:
            tokens = await client.fetch_token(
                provider.endpoint("token_endpoint"), code=code, code_verifier=verifier
            )
    except OAuthError as err:
        raise Refused(f"the identity provider refused the sign-in ({err.error})") from None
    except (httpx.HTTPError, OAuthClientError) as err:
        raise unreachable("the identity provider", err) from None
    except ValueError:  # not JSON: a proxy's error page, a provider in trouble
        raise Refused("the identity provider's answer to the sign-in cannot be read", 503) from None
    if not isinstance(tokens.get("id_token"), str):
        raise Refused("the identity provider sent no ID token (is `openid` among the scopes?)")
    return dict(tokens)


def _use_once(request: Request, state: str, until: int) -> None:
    """Records STATE as used; `Refused` when it was already (a replayed callback)."""
    revocations = auth.access_of(request).revocations
    if revocations is None:
        return
    key = f"oidc-state-{state}"
    if revocations.revoked(key):
        raise Refused("this sign-in was already used (a replayed answer): sign in again")
    revocations.revoke(key, until)


def _client(provider: Provider) -> AsyncOAuth2Client:
    settings = provider.settings
    return AsyncOAuth2Client(
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        scope=provider.scope,
        redirect_uri=settings.redirect_uri,
        code_challenge_method="S256",
        timeout=PROVIDER_TIMEOUT_S,
    )


def _provider(request: Request) -> Provider:
    provider = auth.access_of(request).oidc
    if provider is None:
        raise HTTPException(404, "sign-in with an identity provider is not set up here")
    return provider


def _derived(request: Request, what: str, state: str) -> str:
    """The nonce and the PKCE verifier of the sign-in STATE began: derived from it with the
    sessions' key, so no cookie carries them (43 URL-safe characters: a valid PKCE verifier)."""
    return auth.signature(auth.access_of(request).key, f"oidc-{what}", state)


def _seal(request: Request, values: dict[str, Any]) -> str:
    body = base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")
    return f"{body}.{auth.signature(auth.access_of(request).key, 'oidc-pending', body)}"


def _unseal(request: Request, value: str) -> dict[str, Any] | None:
    body, _, mac = value.partition(".")
    expected = auth.signature(auth.access_of(request).key, "oidc-pending", body)
    if not body or not secrets.compare_digest(mac.encode(), expected.encode()):
        return None
    values = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return values if int(values.get("until", 0)) > time.time() else None


def _refused(request: Request, target: str, message: str, status: int) -> Response:
    log.info("identity provider sign-in refused: %s", message)
    answer = page(request, "signin.html", None, status=status, next=target, error=message)
    answer.delete_cookie(PENDING, path="/auth/callback")
    return answer


def _moving_on(url: str, title: str) -> HTMLResponse:
    where = html.escape(url, quote=True)
    return HTMLResponse(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0;url={where}"><title>{title}</title></head>'
        f'<body><p>{title}: <a href="{where}">continue</a>.</p></body></html>'
    )
