"""Who the identity provider's claims let in, and what ends a session it opened: the rules of
starter/web/identity/oidc.py without a provider (the provider itself: test_oidc.py)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from joserfc import jwk, jwt

from settings import ConfigError, Settings
from starter.web.identity import auth
from starter.web.identity.oidc import CLOCK_SKEW_S, OidcSettings, Provider, Refused
from tests.conftest import REPO

ISSUER = "https://id.example.org/realms/team"


def settings(**extra: Any) -> Settings:
    values: dict[str, Any] = {
        "research_oidc_issuer": ISSUER,
        "research_oidc_client_id": "deep-research",
        "research_oidc_client_secret": "a-client-secret-0123456789",
        "research_session_secret": "the-same-secret-on-every-replica",
        "research_public_url": "https://research.example.org/",
        **extra,
    }
    return Settings(_env_file=None, **values)


def rules(**extra: Any) -> OidcSettings:
    found = OidcSettings.from_settings(settings(**extra))
    assert found is not None
    return found


def test_the_redirect_uri_is_the_public_url_and_the_button_names_the_provider() -> None:
    oidc = rules()
    assert oidc.redirect_uri == "https://research.example.org/auth/callback"
    assert oidc.signed_out_uri == "https://research.example.org/signin"
    assert oidc.name == "Keycloak"
    assert "a-client-secret" not in repr(oidc)


def test_without_an_issuer_there_is_no_provider_and_access_stays_as_it_was(
    tmp_path: Path,
) -> None:
    plain = Settings(_env_file=None, research_data_dir=tmp_path)
    assert OidcSettings.from_settings(plain) is None
    assert not auth.Access.from_settings(plain).on


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"research_oidc_client_secret": None}, "RESEARCH_OIDC_CLIENT_SECRET"),
        ({"research_oidc_issuer": "http://id.example.org"}, "must be an https:// URL"),
    ],
)
def test_a_wrong_configuration_is_one_line(extra: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as raised:
        auth.Access.from_settings(settings(**extra))
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert "a-client-secret" not in str(raised.value)


#: What a provider says of an address it checked (OpenID Connect Core 5.1).
VERIFIED = {"email_verified": True}


def test_the_user_is_the_configured_claim() -> None:
    assert rules().user_of({"email": "ada@example.org", **VERIFIED}) == "ada@example.org"
    named = rules(research_oidc_user_claim="preferred_username")
    assert named.user_of({"preferred_username": "ada", "email": "x@example.org"}) == "ada"
    with pytest.raises(Refused, match="no preferred_username claim"):
        named.user_of({"email": "ada@example.org"})
    with pytest.raises(Refused, match="not a user name"):
        rules().user_of({"email": "ada lovelace", **VERIFIED})
    for reserved in ("local", "LOCAL"):  # the CLI's and MCP's user
        with pytest.raises(Refused, match="reserved"):
            named.user_of({"preferred_username": reserved})


def test_a_list_or_a_group_decides_who_may_sign_in() -> None:
    listed = rules(research_oidc_allowed="ada@example.org, group:analysts")
    assert listed.user_of({"email": "ada@example.org", **VERIFIED}) == "ada@example.org"
    both = {"email": "grace@example.org", "groups": ["research", "analysts"], **VERIFIED}
    assert listed.user_of(both) == "grace@example.org"
    with pytest.raises(Refused, match="^mallory@example.org may not sign in here"):
        listed.user_of({"email": "mallory@example.org", "groups": ["visitors"], **VERIFIED})
    domain = rules(research_oidc_allowed="group:example.org", research_oidc_groups_claim="hd")
    assert domain.user_of({"email": "ada@example.org", "hd": "example.org", **VERIFIED})


@pytest.mark.parametrize("verified", [None, False, "false", 1, "yes"])
def test_an_email_the_provider_has_not_verified_signs_no_one_in(verified: Any) -> None:
    """An account whose unverified address is another user's signed in as that user."""
    claims = {"email": "victim@example.org", "sub": "x-41"}
    if verified is not None:
        claims["email_verified"] = verified
    with pytest.raises(Refused) as refused:
        rules().user_of(claims)
    assert str(refused.value) == (
        "the identity provider has not verified the e-mail address victim@example.org: "
        "verify it there, or ask your administrator"
    )
    assert rules().lacks({"email": "victim@example.org"})  # asks userinfo for email_verified
    # another claim as the user needs no e-mail verification
    named = rules(research_oidc_user_claim="preferred_username")
    assert named.user_of({"preferred_username": "vic", "email": "v@example.org"}) == "vic"


def test_an_email_is_one_user_in_any_case() -> None:
    listed = rules(research_oidc_allowed="Ada@Example.org")
    for spelled in ("ada@example.org", "ADA@EXAMPLE.ORG", "Ada@example.ORG"):
        assert listed.user_of({"email": spelled, **VERIFIED}) == "ada@example.org"
    assert rules().user_of({"email": "Grace@Example.org", "email_verified": "true"}) == (
        "grace@example.org"
    )


@pytest.mark.parametrize(
    "target",
    [
        "/\t/evil.example",
        "/\n/evil.example",
        "/\r\n/evil.example",
        "/\\evil.example",
        "/\\/evil.example",
        "//evil.example",
        "///evil.example",
        "https://evil.example/",
        "javascript:alert(1)",
        "evil.example",
        "/ /evil.example",
        "/\x00/evil.example",
        "",
    ],
)
def test_only_a_path_of_this_site_is_a_place_to_go_after_sign_in(target: str) -> None:
    from starter.web.pages.frame import local_path

    assert local_path(target) == "/"


def test_a_path_of_this_site_is_kept_as_it_is() -> None:
    from starter.web.pages.frame import local_path

    for target in ("/", "/library", "/research/r-1?tab=sources", "/a/b#x", "/s?u=https://x.y/"):
        assert local_path(target) == target


def test_leaving_the_allowed_list_ends_the_sessions_the_provider_opened(tmp_path: Path) -> None:
    library = f"sqlite:///{tmp_path / 'library.sqlite'}"  # where sign-outs are recorded
    before = auth.Access.from_settings(
        settings(research_oidc_allowed="ada@example.org", research_db_url=library)
    )
    assert before.oidc is not None
    cookie = auth._session_value(
        before,
        "oidc:ada@example.org",
        int(time.time()) + 60,
        "session-1",
        before.oidc.settings.fingerprint,
    )
    assert auth._session_user(before, cookie) == "oidc:ada@example.org"
    after = auth.Access.from_settings(
        settings(research_oidc_allowed="grace@example.org", research_db_url=library)
    )
    assert auth._session_user(after, cookie) is None


def test_provider_users_are_a_namespace_apart_from_token_users(tmp_path: Path) -> None:
    library = f"sqlite:///{tmp_path / 'library.sqlite'}"
    access = auth.Access.from_settings(
        settings(
            research_api_tokens="alice:alice-token-0123456789abcdef",
            research_oidc_user_claim="preferred_username",
            research_oidc_allowed="alice",  # the claim, as the provider gives it
            research_db_url=library,
        )
    )
    assert access.oidc is not None
    vouched, token = access.oidc.settings.fingerprint, auth._fingerprints(access, "alice")[0]
    assert access.oidc.settings.owner_of({"preferred_username": "alice"}) == "oidc:alice"
    until = int(time.time()) + 60

    def user(name: str, bound: str) -> str | None:
        return auth._session_user(access, auth._session_value(access, name, until, "s-1", bound))

    assert user("oidc:alice", vouched) == "oidc:alice"
    assert user("alice", token) == "alice"
    # the provider vouches for no token user (a session an earlier version opened as `alice`),
    # and a token for no provider user
    assert user("alice", vouched) is None
    assert user("oidc:alice", token) is None
    with pytest.raises(ConfigError, match="RESEARCH_API_TOKENS"):  # no token user is `oidc:x`
        auth.parse_tokens("oidc:alice:alice-token-0123456789abcdef")


def test_serve_stops_with_one_line_on_a_half_done_provider(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESEARCH_", "TEMPORAL_"))}
    env |= {"RESEARCH_OIDC_ISSUER": ISSUER, "RESEARCH_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "starter", "serve", "--port", "0"],
        cwd=tmp_path,
        env=env | {"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "RESEARCH_OIDC_CLIENT_ID" in lines[0], done.stderr


SIGNER = jwk.RSAKey.generate_key(2048, parameters={"kid": "k1"})


def provider_with_keys() -> Provider:
    """A provider whose keys are known (as if fetched): SIGNER's public half."""
    public = jwk.RSAKey.import_key(SIGNER.as_dict(private=False))
    return Provider(rules(), metadata={"issuer": ISSUER}, keys=jwk.KeySet([public]))


def signed(**claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "sub": "ada", "email": "ada@example.org", "iat": now, "exp": now + 60}
    return jwt.encode({"alg": "RS256", "kid": "k1"}, body | claims, SIGNER)


@pytest.mark.parametrize(
    "claims",
    [
        {"aud": "deep-research"},
        {"aud": ["https://api.example.org", "deep-research"]},
        {"aud": "https://api.example.org", "client_id": "deep-research"},  # RFC 9068
        {"aud": "api://default", "cid": "deep-research"},  # Okta
    ],
)
def test_an_access_token_for_this_client_is_accepted(claims: dict[str, Any]) -> None:
    assert provider_with_keys().verify(signed(**claims), "access token")["sub"] == "ada"


@pytest.mark.parametrize(
    ("claims", "said"),
    [
        ({"aud": "https://api.example.org"}, "issued for another application"),
        ({"aud": "other", "azp": "other-client"}, "issued for another application"),
        ({"aud": "deep-research", "iss": "https://evil.example.org"}, "another provider"),
        ({"aud": "deep-research", "exp": int(time.time()) - 120}, "has expired"),
        ({"aud": "deep-research", "nonce": "n"}, "an ID token, not an access token"),
    ],
)
def test_an_access_token_for_someone_else_is_refused(claims: dict[str, Any], said: str) -> None:
    with pytest.raises(Refused, match=said):
        provider_with_keys().verify(signed(**claims), "access token")


def test_clocks_may_differ_by_a_minute_and_no_more() -> None:
    late = int(time.time()) - CLOCK_SKEW_S // 2
    assert provider_with_keys().verify(signed(aud="deep-research", exp=late), "access token")
    future = int(time.time()) + 3 * CLOCK_SKEW_S
    with pytest.raises(Refused, match="missing or wrong iat"):
        provider_with_keys().verify(signed(aud="deep-research", iat=future), "access token")


@contextmanager
def counting_provider(up: bool) -> Iterator[tuple[str, Counter[str]]]:
    """A provider on loopback that counts what it is asked: its discovery document and keys
    (SIGNER's), or 503 for everything when not UP."""
    hits: Counter[str] = Counter()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            hits[self.path] += 1
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            found = {
                "/.well-known/openid-configuration": {
                    "issuer": base,
                    "authorization_endpoint": f"{base}/auth",
                    "token_endpoint": f"{base}/token",
                    "jwks_uri": f"{base}/jwks",
                },
                "/jwks": {"keys": [SIGNER.as_dict(private=False)]},
            }.get(self.path)
            body = json.dumps(found).encode()
            self.send_response(200 if up and found else 503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("up", [True, False])
async def test_requests_without_a_good_token_do_not_ask_the_provider_each_time(up: bool) -> None:
    """40 requests at once, then 40 more, each with a token naming a key the provider
    never had (what `auth.bearer_keys` does for a Bearer JWT): one fetch of the provider's
    description and keys (a second for the unknown key), or one failed fetch when it is down."""
    stranger = jwk.RSAKey.generate_key(2048, parameters={"kid": "nobodys-key"})
    token = jwt.encode({"alg": "RS256", "kid": "nobodys-key"}, {"sub": "x"}, stranger)
    with counting_provider(up) as (issuer, hits):
        provider = Provider(rules(research_oidc_issuer=issuer))

        async def one_request() -> None:
            try:
                await provider.ready()
                await provider.refresh_for(token)
            except Refused:
                pass

        for _ in range(2):
            await asyncio.gather(*(one_request() for _ in range(40)))
    discovery = hits["/.well-known/openid-configuration"]
    assert discovery == (2 if up else 1), hits
    assert hits["/jwks"] == (2 if up else 0), hits
