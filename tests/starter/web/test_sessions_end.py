"""Sessions that really end (W5 replaced token, W7 sign-out), sign-in that refuses
cross-site posts (W3) and slows down guessing (W8), strict token lists (W13), and an open-mode
CSRF secret of the install's own (W4)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from settings import ConfigError, Settings
from starter.web.identity import auth
from starter.web.identity.sessions import MAX_FAILURES
from tests.starter.web.conftest import TOKENS, WebServer, WebWorker, running_app, web_config


async def _sign_in(server: WebServer, token: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as browser:
        return await browser.post("/signin", data={"token": token, "next": "/"}, headers=headers)


def _cookie(response: httpx.Response) -> str:
    assert response.status_code == 303, (response.status_code, response.text)
    return response.cookies[auth.COOKIE]


async def test_signing_out_ends_the_session_at_once_even_for_a_copy_of_the_cookie(
    web_server: WebServer,
) -> None:
    cookie = _cookie(await _sign_in(web_server, TOKENS["alice"]))
    async with httpx.AsyncClient(
        base_url=web_server.url, cookies={auth.COOKIE: cookie}, timeout=30
    ) as browser:
        assert (await browser.get("/api/research")).status_code == 200
        page = await browser.get("/")
        csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
        assert csrf
        out = await browser.post("/signout", data={"csrf": csrf.group(1)})
        assert out.status_code == 303
    async with httpx.AsyncClient(
        base_url=web_server.url, cookies={auth.COOKIE: cookie}, timeout=30
    ) as copy:
        assert (await copy.get("/api/research")).status_code == 401


async def test_a_sign_out_on_one_replica_ends_the_session_on_another(
    web_server: WebServer, web_worker: WebWorker
) -> None:
    cookie = _cookie(await _sign_in(web_server, TOKENS["bob"]))
    with running_app(web_config(web_worker, TOKENS), TOKENS) as replica:
        async with httpx.AsyncClient(
            base_url=replica.url, cookies={auth.COOKIE: cookie}, timeout=30
        ) as other:
            assert (await other.get("/api/research")).status_code == 200
            async with httpx.AsyncClient(
                base_url=web_server.url, cookies={auth.COOKIE: cookie}, timeout=30
            ) as first:
                page = await first.get("/")
                csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
                assert csrf
                assert (
                    await first.post("/signout", data={"csrf": csrf.group(1)})
                ).status_code == 303
            assert (await other.get("/api/research")).status_code == 401


@pytest.mark.parametrize("secret", [None, "a-shared-session-secret-0123456789"])
async def test_replacing_a_users_token_ends_the_sessions_opened_with_the_old_one(
    web_worker: WebWorker, secret: str | None
) -> None:
    old = {"alice": "alice-old-token-0123456789", "bob": TOKENS["bob"]}
    new = {"alice": "alice-new-token-0123456789", "bob": TOKENS["bob"]}
    with running_app(web_config(web_worker, old, research_session_secret=secret), old) as before:
        alice = _cookie(await _sign_in(before, old["alice"]))
        bob = _cookie(await _sign_in(before, old["bob"]))
    with running_app(web_config(web_worker, new, research_session_secret=secret), new) as after:
        async with (
            httpx.AsyncClient(base_url=after.url, cookies={auth.COOKIE: alice}) as alices,
            httpx.AsyncClient(base_url=after.url, cookies={auth.COOKIE: bob}) as bobs,
        ):
            gone = await alices.get("/api/research", timeout=30)
            kept = await bobs.get("/api/research", timeout=30)
    assert gone.status_code == 401
    # with a session secret, bob's session (his token did not change) goes on; without one the
    # key is derived from every token, so any change ends every session
    assert kept.status_code == (200 if secret else 401)


async def test_a_sign_in_posted_from_another_site_is_refused(web_server: WebServer) -> None:
    for headers in (
        {"Origin": "https://attacker.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site", "Origin": "http://sub.127.0.0.1"},
        {"Origin": "null"},  # an opaque origin (a sandboxed frame) from a browser that says no more
    ):
        response = await _sign_in(web_server, TOKENS["alice"], **headers)
        assert response.status_code == 403, headers
        assert auth.COOKIE not in response.cookies
    own = await _sign_in(
        web_server, TOKENS["alice"], Origin=web_server.url, **{"Sec-Fetch-Site": "same-origin"}
    )
    assert _cookie(own)
    # the sign-in page's own form, as Chromium posts it under the pages' no-referrer policy
    own_form = await _sign_in(
        web_server, TOKENS["alice"], Origin="null", **{"Sec-Fetch-Site": "same-origin"}
    )
    assert _cookie(own_form)


async def test_wrong_tokens_are_rate_limited_per_client_then_even_the_right_one_waits(
    web_worker: WebWorker,
) -> None:
    with running_app(web_config(web_worker, TOKENS), TOKENS) as server:
        for _ in range(MAX_FAILURES):
            assert (await _sign_in(server, "wrong-token-0123456789abc")).status_code == 401
        limited = await _sign_in(server, TOKENS["alice"])
        assert limited.status_code == 429
        assert "too many" in limited.text and "Retry-After" in limited.headers
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as api:
            bearer = await api.get("/api/research", headers=server.auth("bob"))
        assert bearer.status_code == 429
        message = bearer.json()["error"]
        assert "too many" in message and "\n" not in message


async def test_wrong_bearer_tokens_are_rate_limited_too(web_worker: WebWorker) -> None:
    with running_app(web_config(web_worker, TOKENS), TOKENS) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as api:
            wrong = {"Authorization": "Bearer wrong-token-0123456789abc"}
            statuses = [
                (await api.get("/api/research", headers=wrong)).status_code for _ in range(12)
            ]
            assert statuses[:MAX_FAILURES] == [401] * MAX_FAILURES
            assert statuses[-1] == 429


@pytest.mark.parametrize(
    "tokens",
    [
        "alice:alice-token-0123456789;bob:bob-token-0123456789",
        "alice:alice token 0123456789",
        'alice:"alice-token-0123456789"',
    ],
)
def test_a_token_list_that_is_not_name_token_pairs_by_commas_is_one_line(tokens: str) -> None:
    with pytest.raises(ConfigError) as refused:
        auth.Access.from_settings(Settings(_env_file=None, research_api_tokens=tokens))
    message = str(refused.value)
    assert "\n" not in message and "0123456789" not in message


def test_the_open_modes_csrf_secret_is_random_per_install_and_kept(tmp_path: Path) -> None:
    def access(folder: Path) -> auth.Access:
        return auth.Access.from_settings(Settings(_env_file=None, research_data_dir=folder))

    one, again, other = access(tmp_path / "a"), access(tmp_path / "a"), access(tmp_path / "b")
    assert one.key == again.key and one.key != other.key
    secret = tmp_path / "a" / "web-secret"
    assert secret.stat().st_mode & 0o077 == 0
