"""Signing in with the team's identity provider in a real browser (Debian's chromium through
Playwright), against a real OpenID Connect provider (oidc-provider on Node, on `localhost` while
the app is on `127.0.0.1`: another site, as a real provider is, so the redirects cross sites and
the SameSite cookies behave as they will in production).

Ada signs in with the provider's login form, starts a research and finds it in her library; she
signs out, which ends her session here and at the provider (the next sign-in asks for a login
again); Grace signs in and sees none of Ada's work, not even by its address.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.e2e.browser.support import Seen, in_browser
from tests.e2e.browser.test_browser import serious
from tests.starter.web.conftest import WebServer, WebWorker, running_app, web_config
from tests.support.oidc_provider import IdentityProvider, provider_missing

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
ADA, GRACE = "ada@example.org", "grace@example.org"
QUESTION = "How do lighthouses keep their lenses turning at night?"


@pytest.fixture(scope="module")
def signed_by_provider(web_worker: WebWorker) -> Iterator[tuple[WebServer, IdentityProvider]]:
    if reason := provider_missing():
        pytest.skip(reason)
    sock = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider = IdentityProvider.start(url, id_token_claims=True)
    try:
        config = web_config(web_worker, research_public_url=url, **provider.settings())
        with running_app(config, sock=sock) as app:
            yield app, provider
    finally:
        provider.stop()


def sign_in_at_provider(page: Any, app: WebServer, email: str) -> None:
    page.goto(app.url + "/library")
    assert urlparse(page.url).path == "/signin"
    assert serious(page) == []  # axe-core: the sign-in page with the provider's button
    page.get_by_role("link", name="Sign in with localhost").click()
    page.wait_for_url(re.compile(r"^http://localhost:\d+/interaction/"))
    page.get_by_placeholder("Enter any login").fill(email)
    page.locator("input[name=password]").fill("any password")
    page.get_by_role("button", name="Sign-in").click()
    page.wait_for_url(app.url + "/library")
    assert page.get_by_text(f"Signed in as {email}").is_visible()


def ask(page: Any, app: WebServer, question: str) -> str:
    page.goto(app.url + "/")
    page.get_by_role("textbox", name="Question").fill(question)
    page.get_by_role("checkbox", name="Review the plan before research starts").set_checked(False)
    page.get_by_role("button", name="Start research").click()
    page.wait_for_url(re.compile(r"/research/[^/]+$"))
    return page.url.rsplit("/", 1)[1]


async def test_two_people_sign_in_with_the_provider_and_see_only_their_own_work(
    signed_by_provider: tuple[WebServer, IdentityProvider],
) -> None:
    app, _ = signed_by_provider

    def scenario(page: Any, seen: Seen) -> None:
        sign_in_at_provider(page, app, ADA)
        research_id = ask(page, app, QUESTION)
        page.get_by_role("region", name="Report").wait_for(
            timeout=60_000
        )  # finished: in the library
        page.goto(app.url + "/library")
        assert page.get_by_text(QUESTION).first.is_visible()

        page.get_by_role("button", name="Sign out").click()  # here, then at the provider
        page.get_by_role("button", name="Yes, sign me out").click()
        page.wait_for_url(re.compile(re.escape(app.url) + r"/signin"))
        page.goto(app.url + "/library")
        assert urlparse(page.url).path == "/signin"  # the session is gone here

        sign_in_at_provider(page, app, GRACE)  # the provider asked for a login again
        assert page.get_by_text(QUESTION).count() == 0
        page.goto(f"{app.url}/research/{research_id}")
        assert page.get_by_text("There is no research with that id among yours.").is_visible()
        ours = [e for e in seen.errors if "fonts.googleapis" not in e]
        assert ours == []

    await in_browser(scenario)
