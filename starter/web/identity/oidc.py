"""Sign-in with the team's OpenID Connect provider (Keycloak, Entra ID, Google, Okta, Dex...):
who may sign in, what the provider says about itself, and whether a token it signed is good.

The flow itself (`/auth/login`, `/auth/callback`, signing out there too) is pages/oidc_signin.py; the
session it opens is the one a token sign-in opens (starter/web/identity/auth.py), so owners, isolation,
sign-out and revocation are the same for both.

- `OidcSettings.from_settings(cfg)`: the RESEARCH_OIDC_* settings, or None when the issuer is
  unset; a half-done configuration is a one-line `ConfigError` at start.
- `Provider`: the provider's discovery document and signing keys (JWKS), fetched when first
  needed, kept for KEYS_TTL_S, fetched again (at most every REFETCH_S) when a token names a key
  it does not know (the provider rotated its keys). One fetch at a time, whatever the number of
  requests waiting on it, and a failed one is not tried again for RETRY_S: requests without a
  good token never make the web app ask the provider each time.
- `Provider.verify(token, ...)`: the claims of an ID token or a JWT access token whose signature
  (an asymmetric algorithm only: never `none`, never a shared-secret HMAC), issuer, audience,
  expiry and (for an ID token) nonce are right, with CLOCK_SKEW_S of tolerance; else `Refused`,
  one line for the person. Token checks are joserfc's (Authlib's JOSE library), not ours.

Why the user is a claim: the research's owner is a name people recognise in the library and in
notifications; `email` by default, `preferred_username` or `upn` where a team prefers. An `email`
is taken only with `email_verified` true (OpenID Connect Core 5.7: an unverified address is
anyone's), and in lower case, so one address is one user however the provider spells it.

Why provider users are `oidc:NAME` (`owner_of`): token users and provider users are two namespaces.
Without the prefix, a provider account whose claim is `alice` would be token user alice and read
her research; a token's name cannot hold `:` (auth.USER_NAME), so no token user is ever a provider
user. The pages show the claim alone (`shown_user`); the API's `owner` is the whole name, and
RESEARCH_OIDC_ALLOWED names claims, without the prefix.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

import httpx
from joserfc import jws, jwt
from joserfc.errors import (
    BadSignatureError,
    ExpiredTokenError,
    InvalidClaimError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwk import KeySet

from settings import DEFAULT_USER, ConfigError, Settings

#: Tolerated difference between our clock and the provider's (expiry, issued-at, not-before).
CLOCK_SKEW_S = 60
#: How long the discovery document and keys are trusted before they are fetched again.
KEYS_TTL_S = 3600
#: A token naming an unknown key fetches the keys again, but not more often than this.
REFETCH_S = 30
#: After a fetch failed, requests are refused with its line for this long before it is tried
#: again: a provider that is down is not asked once per request.
RETRY_S = 10
#: Every call to the provider (discovery, keys, the code exchange) ends within this.
PROVIDER_TIMEOUT_S = 10.0
#: Signatures made with the provider's private key only.
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"]
ALGORITHMS += ["EdDSA", "Ed25519"]
#: Where an access token names the client it was issued to, when its audience is an API's
#: (RFC 9068 `client_id`; `azp` in Keycloak's and Entra ID's; `cid` in Okta's).
CLIENT_CLAIMS = ("client_id", "azp", "cid")
#: What the discovery document must name for a sign-in.
NEEDED = ("authorization_endpoint", "token_endpoint", "jwks_uri")
#: What every provider user's name begins with: a namespace apart from the token users'.
USER_PREFIX = "oidc:"
#: A claim's value longer than this is not a user's name (with the prefix, an owner is at most
#: the library's 200 characters).
MAX_USER_CHARS = 200 - len(USER_PREFIX)


def shown_user(user: str) -> str:
    """USER as a person reads it: a provider user's claim without the prefix."""
    return user.removeprefix(USER_PREFIX)


def provider_user(user: str) -> bool:
    """Whether USER is a provider user (else a token user, or the one user without access control)."""
    return user.startswith(USER_PREFIX)


class Refused(Exception):
    """A sign-in or a token that is not accepted: one line for the person, never the token;
    STATUS 503 when the provider could not be asked, else 401."""

    def __init__(self, message: str, status: int = 401) -> None:
        super().__init__(message)
        self.status = status


def unreachable(what: str, err: Exception) -> Refused:
    return Refused(f"{what} cannot be reached ({type(err).__name__}): try again later", 503)


@dataclass(frozen=True)
class OidcSettings:
    issuer: str
    client_id: str
    client_secret: str = field(repr=False)
    redirect_uri: str
    #: Where the provider sends people back after signing out there.
    signed_out_uri: str
    user_claim: str = "email"
    groups_claim: str = "groups"
    allowed_users: frozenset[str] = frozenset()
    allowed_groups: frozenset[str] = frozenset()

    @classmethod
    def from_settings(cls, cfg: Settings) -> OidcSettings | None:
        issuer = (cfg.access.oidc_issuer or "").strip().rstrip("/")
        if not issuer:
            return None
        secret = cfg.access.oidc_client_secret
        client_id = (cfg.access.oidc_client_id or "").strip()
        if not client_id or secret is None or not secret.get_secret_value().strip():
            raise ConfigError(
                "RESEARCH_OIDC_ISSUER is set: set RESEARCH_OIDC_CLIENT_ID and "
                "RESEARCH_OIDC_CLIENT_SECRET too (the client registered at the provider)"
            )
        parts = urlsplit(issuer)
        local = parts.hostname in ("localhost", "127.0.0.1", "::1")
        if parts.scheme != "https" and not (parts.scheme == "http" and local):
            raise ConfigError(
                "RESEARCH_OIDC_ISSUER must be an https:// URL (http only on localhost)"
            )
        rules = [r.strip() for r in cfg.access.oidc_allowed.split(",") if r.strip()]
        public = cfg.notify.public_url.rstrip("/")
        return cls(
            issuer=issuer,
            client_id=client_id,
            client_secret=secret.get_secret_value().strip(),
            redirect_uri=f"{public}/auth/callback",
            signed_out_uri=f"{public}/signin",
            user_claim=cfg.access.oidc_user_claim.strip() or "email",
            groups_claim=cfg.access.oidc_groups_claim.strip() or "groups",
            allowed_users=frozenset(r for r in rules if not r.startswith("group:")),
            allowed_groups=frozenset(r[6:].strip() for r in rules if r.startswith("group:")),
        )

    @property
    def fingerprint(self) -> str:
        """What a session opened through the provider is bound to: changing the provider, the
        client, the user claim or who is allowed ends those sessions."""
        rules = ",".join(sorted(self.allowed_users)) + "|" + ",".join(sorted(self.allowed_groups))
        text = f"oidc|{self.issuer}|{self.client_id}|{self.user_claim}|{self.groups_claim}|{rules}"
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def name(self) -> str:
        """The provider as the sign-in button names it."""
        host = urlsplit(self.issuer).hostname or self.issuer
        known = {
            "accounts.google.com": "Google",
            "login.microsoftonline.com": "Microsoft",
        }
        if host in known:
            return known[host]
        if host.endswith((".okta.com", ".oktapreview.com")):
            return "Okta"
        return "Keycloak" if "/realms/" in self.issuer else host

    def lacks(self, claims: dict[str, Any]) -> bool:
        """Whether CLAIMS miss what decides who signs in (many providers put only `sub` in an
        ID token issued with an access token: the rest is at their userinfo endpoint)."""
        return (
            self.user_claim not in claims
            or (self.user_claim == "email" and "email_verified" not in claims)
            or bool(self.allowed_groups and self.groups_claim not in claims)
        )

    def owner_of(self, claims: dict[str, Any]) -> str:
        """The provider user the claims name (`oidc:CLAIM`), if they may sign in; else `Refused`."""
        return USER_PREFIX + self.user_of(claims)

    def user_of(self, claims: dict[str, Any]) -> str:
        """The claim that names the person, if they may sign in; else `Refused` saying why."""
        user = claims.get(self.user_claim)
        if not isinstance(user, str) or not user.strip() or len(user) > MAX_USER_CHARS:
            raise Refused(
                f"the provider did not say who you are (no {self.user_claim} claim): "
                "ask your administrator"
            )
        if any(c.isspace() or not c.isprintable() for c in user):
            raise Refused(f"the provider's {self.user_claim} claim is not a user name")
        if self.user_claim == "email":
            # an account at the provider may carry anyone's address unverified; as the
            # user it would read that person's research. One address in any case is one user.
            verified = claims.get("email_verified")
            if verified is not True and verified != "true":  # 1 == True: not a JSON boolean
                raise Refused(
                    f"the identity provider has not verified the e-mail address {user}: "
                    "verify it there, or ask your administrator"
                )
            user = user.lower()
        if user.casefold() == DEFAULT_USER:  # its holder would own the CLI's and MCP's research
            raise Refused(f"the user name {user} is reserved here: ask your administrator")
        allowed = self.allowed_users
        if self.user_claim == "email":
            allowed = frozenset(u.lower() for u in allowed)
        if not (self.allowed_users or self.allowed_groups) or user in allowed:
            return user
        groups = claims.get(self.groups_claim)
        mine = {groups} if isinstance(groups, str) else set(groups or ())
        if self.allowed_groups & {g for g in mine if isinstance(g, str)}:
            return user
        raise Refused(f"{user} may not sign in here: ask your administrator")


@dataclass
class Provider:
    """The provider's metadata and keys, as last fetched (shared by every request of the app)."""

    settings: OidcSettings
    metadata: dict[str, Any] = field(default_factory=dict)
    keys: KeySet | None = None
    fetched_at: float = 0.0
    refetched_at: float = 0.0
    #: The last fetch's refusal and when it came (answered again until RETRY_S have passed).
    failed: Refused | None = None
    failed_at: float = 0.0
    _lock: asyncio.Lock | None = field(default=None, repr=False)

    @property
    def scope(self) -> str:
        """The scopes asked for: `groups` only when a group decides who may sign in and the
        provider says it has that scope (Entra ID and Google refuse a scope they do not know;
        Okta's and Keycloak's `groups` scope is what puts the claim in the ID token)."""
        offered = self.metadata.get("scopes_supported") or ()
        wanted = self.settings.allowed_groups and "groups" in offered
        return "openid email profile" + (" groups" if wanted else "")

    @property
    def issuer(self) -> str:
        """The issuer exactly as the provider states it (tokens' `iss` match it to the letter;
        some end in `/`, the setting may not)."""
        return str(self.metadata.get("issuer") or self.settings.issuer)

    def endpoint(self, name: str) -> str | None:
        value = self.metadata.get(name)
        return value if isinstance(value, str) and value else None

    async def ready(self) -> None:
        """Discovery and keys, fetched unless fresh; `Refused` (one line) when the provider cannot
        be reached or does not describe itself as the configured issuer."""
        if not self._fresh():
            await self._fetch_once(self._fresh)

    def _fresh(self) -> bool:
        return self.keys is not None and time.monotonic() - self.fetched_at < KEYS_TTL_S

    async def _fetch_once(self, done: Callable[[], bool]) -> None:
        """One fetch for every request waiting: those that waited find it DONE; a fetch that
        failed lately is answered with its refusal, not tried again."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if done():
                return
            if self.failed is not None and time.monotonic() - self.failed_at < RETRY_S:
                raise self.failed
            try:
                await self._fetch()
            except Refused as err:
                self.failed, self.failed_at = err, time.monotonic()
                raise
            self.failed = None

    async def refresh_for(self, token: str) -> None:
        """Fetches the keys again when TOKEN names a key we do not have (the provider rotated)."""
        try:
            kid = jws.extract_compact(token.encode()).protected.get("kid")
        except (JoseError, ValueError):
            return
        if self._knows(kid) or time.monotonic() - self.refetched_at <= REFETCH_S:
            return
        self.refetched_at = time.monotonic()
        await self._fetch_once(lambda: self._knows(kid))

    def _knows(self, kid: object) -> bool:
        return self.keys is not None and any(k.kid == kid for k in self.keys.keys)

    async def _fetch(self) -> None:
        issuer = self.settings.issuer
        try:
            async with httpx.AsyncClient(timeout=PROVIDER_TIMEOUT_S) as client:
                found = await _json(client, f"{issuer}/.well-known/openid-configuration")
                if str(found.get("issuer", "")).rstrip("/") != issuer:
                    raise Refused(
                        f"the identity provider at {issuer} describes another issuer: "
                        "check RESEARCH_OIDC_ISSUER"
                    )
                missing = [n for n in NEEDED if not isinstance(found.get(n), str)]
                if missing:
                    raise Refused(
                        f"the identity provider at {issuer} does not name its {missing[0]}"
                    )
                keys = KeySet.import_key_set(cast(Any, await _json(client, found["jwks_uri"])))
        except httpx.HTTPError as err:
            raise unreachable(f"the identity provider at {issuer}", err) from None
        except (JoseError, ValueError, TypeError):
            raise Refused(
                f"the identity provider at {issuer} sent a description or keys we cannot read"
            ) from None
        self.metadata, self.keys, self.fetched_at = found, keys, time.monotonic()

    async def userinfo(self, access_token: str, subject: object) -> dict[str, Any]:
        """The provider's userinfo for ACCESS_TOKEN: it must be about SUBJECT (the ID token's
        `sub`); `Refused` when it cannot be had."""
        endpoint = self.endpoint("userinfo_endpoint")
        if endpoint is None:
            return {}
        try:
            async with httpx.AsyncClient(timeout=PROVIDER_TIMEOUT_S) as client:
                response = await client.get(
                    endpoint,
                    headers={
                        "Authorization": f"Bearer {access_token}",
                        "Accept": "application/json",
                    },
                )
                found = await _read(response)
        except httpx.HTTPError as err:
            raise unreachable("the identity provider's userinfo", err) from None
        except ValueError:
            raise Refused("the identity provider's userinfo is not JSON we can read") from None
        if found.get("sub") != subject:
            raise Refused("the identity provider's userinfo is about someone else (sub)")
        return found

    def verify(self, token: str, what: str, nonce: str | None = None) -> dict[str, Any]:
        """The claims of TOKEN (an ID token when NONCE is given, else an access token), checked;
        `Refused` naming WHAT failed the check."""
        if self.keys is None:
            raise Refused(f"the identity provider's keys are not loaded: the {what} is refused")
        client_id = self.settings.client_id
        try:
            claims = dict(jwt.decode(token, self.keys, algorithms=ALGORITHMS).claims)
            issuer: jwt.ClaimsOption = {"essential": True, "value": self.issuer}
            essential: jwt.ClaimsOption = {"essential": True}
            if nonce is None:  # an access token: whose it is, below
                registry = jwt.JWTClaimsRegistry(leeway=CLOCK_SKEW_S, iss=issuer, exp=essential)
            else:
                registry = jwt.JWTClaimsRegistry(
                    leeway=CLOCK_SKEW_S,
                    iss=issuer,
                    exp=essential,
                    aud={"essential": True, "value": client_id},
                    nonce={"essential": True, "value": nonce},
                )
            registry.validate(claims)
        except BadSignatureError:
            raise Refused(f"the {what} is not signed by the identity provider") from None
        except ExpiredTokenError:
            raise Refused(f"the {what} has expired: sign in again") from None
        except (InvalidClaimError, MissingClaimError) as err:
            raise Refused(_claim_problem(what, getattr(err, "claim", ""))) from None
        except (JoseError, ValueError, TypeError):
            raise Refused(f"the {what} is not a token the identity provider signed") from None
        found = claims.get("aud")
        audiences = found if isinstance(found, list) else [found]
        if nonce is not None and len(audiences) > 1 and claims.get("azp") != client_id:
            raise Refused(_claim_problem(what, "aud"))
        if nonce is None and "nonce" in claims:  # an ID token is no access token
            raise Refused(f"the {what} is an ID token, not an access token")
        if nonce is None and client_id not in audiences + [claims.get(c) for c in CLIENT_CLAIMS]:
            raise Refused(_claim_problem(what, "aud"))
        return claims


def _claim_problem(what: str, claim: str) -> str:
    return {
        "aud": f"the {what} was issued for another application (audience)",
        "iss": f"the {what} was issued by another provider",
        "nonce": f"the {what} does not belong to this sign-in (nonce)",
    }.get(claim, f"the {what} has a missing or wrong {claim or 'claim'}")


async def _json(client: httpx.AsyncClient, url: str) -> dict[str, Any]:
    return await _read(await client.get(url, headers={"Accept": "application/json"}))


async def _read(response: httpx.Response) -> dict[str, Any]:
    response.raise_for_status()
    found = response.json()
    if not isinstance(found, dict):
        raise ValueError("not a JSON object")
    return found
