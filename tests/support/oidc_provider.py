"""A real OpenID Connect provider for the sign-in tests: tests/support/oidc/provider.js (panva's
certified `oidc-provider`, installed by `make oidc-provider` from its package-lock.json) in a
node process on loopback, with ada@example.org, grace@example.org and mallory@example.org.

`IdentityProvider.start(app_url)` registers the app at APP_URL as its client (redirect URI
APP_URL/auth/callback, signed-out URI APP_URL/signin); `.issuer`, `.client_id`,
`.client_secret`; `.tamper(mode)` makes the next ID tokens forged, expired or for another
audience; `.access_token(email, app_url)` an access token (a JWT) as an API client gets one.
`sign_in(provider, client, app_url, email)` walks the real redirects and login form with an
httpx client (what a browser does, without one), and returns the app's callback's answer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx

FOLDER = Path(__file__).parent / "oidc"
CLIENT_ID = "deep-research-web"
CLIENT_SECRET = "the-client-secret-of-the-tests-0123456789"
#: The API as a resource of the provider: its access tokens are JWTs for the app's client id.
API_RESOURCE = "urn:deep-research"


def provider_missing() -> str | None:
    """Why the provider cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is missing: the OpenID Connect provider of these tests runs on Node.js"
    if not (FOLDER / "node_modules" / "oidc-provider").is_dir():
        return "oidc-provider is not installed: run `make oidc-provider` (npm ci in tests/support/oidc)"
    return None


@dataclass
class IdentityProvider:
    process: subprocess.Popen[str]
    issuer: str
    client_id: str = CLIENT_ID
    client_secret: str = field(default=CLIENT_SECRET, repr=False)

    @classmethod
    def start(cls, *app_urls: str, id_token_claims: bool = False) -> IdentityProvider:
        """ID_TOKEN_CLAIMS: email and groups in the ID token too, not only from userinfo."""
        options = {
            "idTokenClaims": id_token_claims,
            "port": 0,
            "clientId": CLIENT_ID,
            "clientSecret": CLIENT_SECRET,
            "redirectUris": [f"{url}/auth/callback" for url in app_urls],
            "postLogoutRedirectUris": [f"{url}/signin" for url in app_urls],
        }
        process = subprocess.Popen(
            ["node", str(FOLDER / "provider.js"), json.dumps(options)],
            cwd=FOLDER,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("ready "):
                return cls(process=process, issuer=line.split()[1])
        process.wait(5)
        raise RuntimeError(f"the OpenID Connect provider did not start (exit {process.returncode})")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def settings(self) -> dict[str, Any]:
        """The app's settings for this provider."""
        return {
            "research_oidc_issuer": self.issuer,
            "research_oidc_client_id": self.client_id,
            "research_oidc_client_secret": self.client_secret,
        }

    def tamper(self, mode: str) -> None:
        httpx.post(f"{self.issuer}/__test/tamper", json={"mode": mode}).raise_for_status()

    def access_token(self, email: str, app_url: str) -> str:
        """An access token the provider issues to the app for EMAIL (a JWT): the code flow, then
        the token endpoint, as an API client that signed in through the provider would."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        query = {
            "client_id": self.client_id,
            "response_type": "code",
            "scope": "openid email profile",
            "redirect_uri": f"{app_url}/auth/callback",
            "state": "api-client",
            "nonce": "api-client",
            "code_challenge": challenge.decode().rstrip("="),
            "code_challenge_method": "S256",
            "resource": API_RESOURCE,
        }
        with httpx.Client(timeout=10) as browser:
            answer = browser.get(f"{self.issuer}/auth", params=query)
            code = self.log_in(browser, answer, email).headers["location"]
            code = httpx.URL(code).params["code"]
            tokens = browser.post(
                f"{self.issuer}/token",
                auth=(self.client_id, self.client_secret),
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "redirect_uri": f"{app_url}/auth/callback",
                    "code_verifier": verifier,
                    "resource": API_RESOURCE,
                },
            )
            tokens.raise_for_status()
            return str(tokens.json()["access_token"])

    def log_in(self, browser: httpx.Client, answer: httpx.Response, email: str) -> httpx.Response:
        """From the provider's first redirect to its redirect back to the app (not followed)."""
        while answer.is_redirect and not _back_home(answer, self.issuer):
            answer = browser.get(urljoin(str(answer.url), answer.headers["location"]))
        if answer.is_redirect:
            return answer
        action = re.search(r'<form[^>]*action="([^"]+)"', answer.text)
        assert action, answer.text[:500]
        answer = browser.post(
            urljoin(str(answer.url), action.group(1)),
            data={"prompt": "login", "login": email, "password": "any"},
        )
        while answer.is_redirect and not _back_home(answer, self.issuer):
            answer = browser.get(urljoin(str(answer.url), answer.headers["location"]))
        return answer


def _back_home(answer: httpx.Response, issuer: str) -> bool:
    return not urljoin(str(answer.url), answer.headers["location"]).startswith(issuer)


def sign_in(
    provider: IdentityProvider, client: httpx.Client, app_url: str, email: str
) -> httpx.Response:
    """The app's sign-in through the provider with CLIENT (its cookies are the browser's): the
    app's /auth/login, the provider's login form, the app's callback; the callback's answer."""
    first = client.get(f"{app_url}/auth/login?next=/library")
    if not first.is_redirect:
        return first
    back = provider.log_in(client, first, email)
    return client.get(urljoin(str(back.url), back.headers["location"]))
