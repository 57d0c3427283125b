"""The web app's /metrics: for a scraper with a token, or a caller on the same machine; anyone else
gets one line and a 401, whatever address the proxy headers claim."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from settings import Settings
from starter.web.app import create_app
from tests.telemetry.processes import TOKEN, web_app
from tests.telemetry.scrape import get, total

ELSEWHERE = ("10.1.2.3", 40000)
HERE = ("127.0.0.1", 40000)


BOB = "bob-token-0123456789abcdef"


@pytest.fixture
def app() -> object:
    return create_app(
        Settings(research_api_tokens=f"alice:{TOKEN},bob:{BOB}", research_metrics_users="alice")
    )


def test_a_scraper_from_elsewhere_needs_a_token(app: object) -> None:
    with TestClient(app, client=ELSEWHERE) as client:  # type: ignore[arg-type]
        refused = client.get("/metrics")
        wrong = client.get("/metrics", headers={"Authorization": "Bearer not-the-token-at-all"})
        allowed = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 401
    assert refused.json() == {
        "error": "metrics: send Authorization: Bearer TOKEN (a token of RESEARCH_API_TOKENS)"
    }
    assert wrong.status_code == 401
    assert allowed.status_code == 200
    assert allowed.headers["content-type"].startswith("text/plain; version=0.0.4")


def test_a_users_token_reads_no_metrics_unless_the_operator_named_its_user(app: object) -> None:
    """Bob signs in with a good token, and is no scraper."""
    with TestClient(app, client=ELSEWHERE) as client:  # type: ignore[arg-type]
        bobs = client.get("/metrics", headers={"Authorization": f"Bearer {BOB}"})
        signed_in = client.get("/api/research", headers={"Authorization": f"Bearer {BOB}"})
        assert signed_in.status_code != 401  # (no Temporal here: 503)
    assert bobs.status_code == 403
    assert bobs.json() == {"error": "metrics: bob may not read them (RESEARCH_METRICS_USERS)"}
    unnamed = create_app(Settings(research_api_tokens=f"alice:{TOKEN}"))
    with TestClient(unnamed, client=ELSEWHERE) as client:  # type: ignore[arg-type]
        alices = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert alices.status_code == 403  # unset: no token reads them, only this machine


def test_a_caller_on_this_machine_needs_none_unless_a_proxy_forwarded_it(app: object) -> None:
    with TestClient(app, client=HERE) as client:  # type: ignore[arg-type]
        assert client.get("/metrics").status_code == 200
        forwarded = client.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"})
    assert forwarded.status_code == 401


@pytest.mark.e2e
def test_the_served_app_reports_its_temporal_client(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    with web_app(subprocess_env, tmp_path / "web.log") as base:
        assert get(f"{base}/api/research/{uuid.uuid4().hex}")[0] == 401  # not signed in
        get(f"{base}/api/health")  # asks Temporal for its system info
        status, text = get(f"{base}/metrics")
    assert status == 200
    assert total(text, "temporal_request_total", operation="GetSystemInfo") >= 1
