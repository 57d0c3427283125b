"""Sign-in with an OpenID Connect provider, against a real one (oidc-provider on Node, started
here: tests/support/oidc_provider.py), through the real redirects and login form with an HTTP
client that keeps cookies as a browser does (the browser itself: test_oidc_browser.py).

What a person notices: signing in as ada@example.org opens a session whose research is hers; a
forged, expired or misaddressed ID token, a replayed answer, a provider that is down, someone the
team did not let in: the sign-in page with one line and no session. API clients may send the
provider's access token; a forged one is refused in one line.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from joserfc import jwk, jwt

from settings import ConfigError
from starter.web.app import create_app
from starter.web.identity import auth
from tests.starter.web.conftest import WebServer, WebWorker, one_line_error, running_app, web_config
from tests.support.oidc_provider import IdentityProvider, provider_missing, sign_in

ADA, GRACE, MALLORY = "ada@example.org", "grace@example.org", "mallory@example.org"


@dataclass
class Team:
    provider: IdentityProvider
    #: Everyone the provider knows may sign in.
    app: WebServer
    #: Only the `analysts` group (ada) may sign in; its issuer setting ends in a `/`.
    analysts_only: WebServer


@pytest.fixture(scope="module")
def team(web_worker: WebWorker) -> Iterator[Team]:
    if reason := provider_missing():
        pytest.skip(reason)
    socks = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    urls = [f"http://127.0.0.1:{s.getsockname()[1]}" for s in socks]
    provider = IdentityProvider.start(*urls)
    try:
        with (
            running_app(_config(web_worker, provider, urls[0]), sock=socks[0]) as app,
            running_app(
                _config(
                    web_worker,
                    provider,
                    urls[1],
                    research_oidc_allowed="group:analysts",
                    research_oidc_issuer=provider.issuer + "/",  # as people paste it
                ),
                sock=socks[1],
            ) as analysts_only,
        ):
            yield Team(provider, app, analysts_only)
    finally:
        provider.stop()


def _config(worker: WebWorker, provider: IdentityProvider, url: str, **extra: str):  # type: ignore[no-untyped-def]
    return web_config(worker, research_public_url=url, **(provider.settings() | extra))


def refusal(answer: httpx.Response, status: int) -> str:
    """The sign-in page's one line, checked to come with STATUS and without a session."""
    assert answer.status_code == status, (answer.status_code, answer.text[:300])
    assert auth.COOKIE not in answer.cookies
    assert 'role="alert"' in answer.text and "Traceback" not in answer.text
    line = answer.text.split('role="alert">', 1)[1].split("</p>", 1)[0]
    assert line and "\n" not in line
    return line


def browser() -> httpx.Client:
    return httpx.Client(timeout=20)


def test_signing_in_opens_a_session_as_the_email_the_provider_vouches_for(team: Team) -> None:
    with browser() as client:
        answer = sign_in(team.provider, client, team.app.url, ADA)
        assert answer.status_code == 200 and 'url=/library"' in answer.text
        assert auth.COOKIE in client.cookies
        library = client.get(f"{team.app.url}/library")
        assert library.status_code == 200
        assert f"Signed in as {ADA}" in library.text
        assert client.get(f"{team.app.url}/api/research").status_code == 200


def test_the_signin_page_offers_the_provider_and_no_token_form(team: Team) -> None:
    page = httpx.get(f"{team.app.url}/signin?next=/library")
    assert "Sign in with localhost" in page.text
    assert 'href="/auth/login?next=/library"' in page.text
    assert "Access token" not in page.text  # no RESEARCH_API_TOKENS here


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("forged", "not signed by the identity provider"),
        ("expired", "has expired"),
        ("wrong-audience", "another application"),
    ],
)
def test_a_bad_id_token_is_one_line_and_no_session(team: Team, mode: str, said: str) -> None:
    team.provider.tamper(mode)
    try:
        with browser() as client:
            line = refusal(sign_in(team.provider, client, team.app.url, ADA), 401)
            assert said in line and "ID token" in line
            assert client.get(f"{team.app.url}/api/research").status_code == 401
    finally:
        team.provider.tamper("none")


def test_a_replayed_answer_is_refused(team: Team) -> None:
    with browser() as client:
        first = client.get(f"{team.app.url}/auth/login")
        pending = client.cookies[auth_pending()]
        back = team.provider.log_in(client, first, ADA)
        answer = back.headers["location"]
        assert client.get(answer).status_code == 200  # the real sign-in
    with browser() as thief:  # the same answer and pending cookie, again
        thief.cookies.set(auth_pending(), pending, domain="127.0.0.1", path="/auth/callback")
        line = refusal(thief.get(answer), 401)
        assert "already used" in line


def test_an_answer_this_browser_did_not_ask_for_is_refused(team: Team) -> None:
    with browser() as client:
        line = refusal(client.get(f"{team.app.url}/auth/callback?code=x&state=y"), 401)
        assert "not started here" in line


def test_someone_outside_the_allowed_group_is_refused(team: Team) -> None:
    with browser() as client:
        line = refusal(sign_in(team.provider, client, team.analysts_only.url, GRACE), 401)
        assert line == f"{GRACE} may not sign in here: ask your administrator"
    with browser() as client:
        assert sign_in(team.provider, client, team.analysts_only.url, ADA).status_code == 200
        assert auth.COOKIE in client.cookies


def test_a_provider_that_is_down_is_one_line(web_worker: WebWorker) -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    config = web_config(
        web_worker,
        research_oidc_issuer=f"http://localhost:{port}",
        research_oidc_client_id="app",
        research_oidc_client_secret="secret-secret-secret",
    )
    with running_app(config) as app, browser() as client:
        line = refusal(client.get(f"{app.url}/auth/login"), 503)
        assert line.startswith(
            f"the identity provider at http://localhost:{port} cannot be reached"
        )


def test_a_half_done_configuration_is_one_line_at_start(web_worker: WebWorker) -> None:
    with pytest.raises(ConfigError) as raised:
        create_app(web_config(web_worker, research_oidc_issuer="https://id.example.org"))
    assert "RESEARCH_OIDC_CLIENT_ID" in str(raised.value) and "\n" not in str(raised.value)


async def test_the_providers_access_token_works_on_the_api_and_a_forged_one_does_not(
    team: Team,
) -> None:
    token = await asyncio.to_thread(team.provider.access_token, ADA, team.app.url)
    async with httpx.AsyncClient(base_url=team.app.url, timeout=30) as api:
        ada = {"Authorization": f"Bearer {token}"}
        created = await api.post("/api/research", json={"question": "x" * 20}, headers=ada)
        assert created.status_code == 201, created.text
        mine = await api.get("/api/research", headers=ada)
        assert created.json()["id"] in [r["id"] for r in mine.json()]
        forged = {"Authorization": f"Bearer {forged_access_token(team.provider.issuer)}"}
        message = one_line_error(await api.get("/api/research", headers=forged), 401)
        assert message == "the access token is not valid"


def forged_access_token(issuer: str) -> str:
    """What a forger makes: the right claims, signed with a key of the forger's own."""
    key = jwk.RSAKey.generate_key(2048, parameters={"kid": "test-signing-key"})
    now = int(time.time())
    claims = {"iss": issuer, "aud": "deep-research-web", "sub": ADA, "email": ADA}
    claims |= {"iat": now, "exp": now + 600}
    return jwt.encode({"alg": "RS256", "kid": "test-signing-key"}, claims, key)


def auth_pending() -> str:
    from starter.web.pages.oidc_signin import PENDING

    return PENDING


def test_groups_are_asked_for_only_when_a_group_decides(team: Team) -> None:
    def scope(app: WebServer) -> str:
        answer = httpx.get(f"{app.url}/auth/login")
        assert answer.status_code == 302
        query = httpx.URL(answer.headers["location"]).params
        assert query["code_challenge_method"] == "S256" and query["nonce"] and query["state"]
        return query["scope"]

    assert scope(team.app) == "openid email profile"
    assert scope(team.analysts_only) == "openid email profile groups"


def test_signing_out_ends_the_session_here_and_moves_on_to_the_provider(team: Team) -> None:
    with browser() as client:
        sign_in(team.provider, client, team.app.url, GRACE)
        cookie = client.cookies[auth.COOKIE]
        page = client.get(f"{team.app.url}/library").text
        csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        out = client.post(f"{team.app.url}/signout", data={"csrf": csrf})
        assert out.status_code == 200
        onward = httpx.URL(out.text.split("url=", 1)[1].split('"', 1)[0].replace("&amp;", "&"))
        assert str(onward).startswith(f"{team.provider.issuer}/session/end?")
        assert onward.params["post_logout_redirect_uri"] == f"{team.app.url}/signin"
        assert onward.params["id_token_hint"].count(".") == 2
    with httpx.Client(cookies={auth.COOKIE: cookie}) as copy:  # a copy of the cookie
        assert copy.get(f"{team.app.url}/api/research").status_code == 401


def test_token_users_sign_in_beside_the_provider(web_worker: WebWorker, team: Team) -> None:
    tokens = {"carol": "carol-token-0123456789abcdef"}
    url = team.app.url  # registered at the provider; this app is only asked for its pages
    config = web_config(web_worker, tokens, research_public_url=url, **team.provider.settings())
    with running_app(config, tokens) as app, browser() as client:
        page = client.get(f"{app.url}/signin")
        assert "Sign in with localhost" in page.text and "Access token" in page.text
        answer = client.post(
            f"{app.url}/signin", data={"token": tokens["carol"], "next": "/library"}
        )
        assert answer.status_code == 303 and auth.COOKIE in client.cookies
        assert "Signed in as carol" in client.get(f"{app.url}/library").text


async def test_a_token_users_research_is_no_provider_users_of_the_same_name(
    web_worker: WebWorker, team: Team
) -> None:
    """Token user `ada@example.org` and the provider's ada@example.org are two people;
    neither reads the other's research, by the provider's access token or its sign-in."""
    tokens = {ADA: "ada-the-token-user-0123456789abcdef"}
    config = web_config(
        web_worker, tokens, research_public_url=team.app.url, **team.provider.settings()
    )
    token = await asyncio.to_thread(team.provider.access_token, ADA, team.app.url)
    people = {
        ADA: {"Authorization": f"Bearer {tokens[ADA]}"},
        f"oidc:{ADA}": {"Authorization": f"Bearer {token}"},
    }
    with running_app(config, tokens) as app:
        async with httpx.AsyncClient(base_url=app.url, timeout=30) as api:
            ids = {}
            for owner, header in people.items():
                made = await api.post("/api/research", json={"question": "y" * 20}, headers=header)
                assert made.status_code == 201, made.text
                ids[owner] = made.json()["id"]
                mine = await api.get(f"/api/research/{ids[owner]}", headers=header)
                assert mine.json()["owner"] == owner
            for owner, header in people.items():
                other = next(o for o in people if o != owner)
                gone = await api.get(f"/api/research/{ids[other]}", headers=header)
                assert gone.status_code == 404, gone.text
                listed = [r["id"] for r in (await api.get("/api/research", headers=header)).json()]
                assert ids[other] not in listed and ids[owner] in listed
    with browser() as client:  # signed in through the provider, on its registered app
        assert sign_in(team.provider, client, team.app.url, ADA).status_code == 200
        assert client.get(f"{team.app.url}/api/research/{ids[ADA]}").status_code == 404
        page = client.get(f"{team.app.url}/research/{ids[ADA]}")
        assert page.status_code == 404 and f"Signed in as {ADA}<" in page.text


def test_the_providers_no_is_one_line_of_text(team: Team) -> None:
    said = "<script>alert(1)</script> The user said no"
    with browser() as client:
        answer = client.get(
            f"{team.app.url}/auth/callback",
            params={"error": "access_denied", "error_description": said},
        )
        line = refusal(answer, 401)
        # its code, never its text
        assert line == "the identity provider did not sign you in (access_denied): try again"
        assert "alert(1)" not in answer.text and "The user said no" not in answer.text


def test_a_provider_that_goes_down_during_a_sign_in_is_one_line(web_worker: WebWorker) -> None:
    sock = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider = IdentityProvider.start(url)
    try:
        with running_app(_config(web_worker, provider, url), sock=sock) as app, browser() as client:
            back = provider.log_in(client, client.get(f"{app.url}/auth/login"), ADA)
            provider.stop()  # after its login form, before the app exchanges the code
            line = refusal(client.get(back.headers["location"]), 503)
            assert line.startswith("the identity provider cannot be reached")
    finally:
        provider.stop()


def test_a_code_the_provider_did_not_give_is_refused(team: Team) -> None:
    with browser() as client:
        started = client.get(f"{team.app.url}/auth/login")
        state = httpx.URL(started.headers["location"]).params["state"]
        answer = client.get(
            f"{team.app.url}/auth/callback",
            params={"code": "made-up", "state": state, "iss": team.provider.issuer},
        )
        line = refusal(answer, 401)
        assert line == "the identity provider refused the sign-in (invalid_grant)"


@pytest.mark.parametrize("iss", [None, "http://127.0.0.1:9/another-provider"])
def test_an_answer_without_the_issuer_the_provider_promised_is_refused(
    team: Team, iss: str | None
) -> None:
    """RFC 9207: oidc-provider says it names itself in its answers (discovery's
    `authorization_response_iss_parameter_supported`); an answer without `iss`, or with another,
    is a mix-up attack's, and opens no session."""
    with browser() as client:
        back = team.provider.log_in(client, client.get(f"{team.app.url}/auth/login"), ADA)
        answer = httpx.URL(back.headers["location"])
        assert answer.params["iss"] == team.provider.issuer  # the real answer names it
        params = {k: v for k, v in answer.params.items() if k != "iss"}
        if iss is not None:
            params["iss"] = iss
        line = refusal(client.get(answer.copy_with(params=params)), 401)
        assert line == "the answer came from another identity provider (iss)"
