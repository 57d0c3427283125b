"""Issue 38, R4 and R6: research one user may have running at once and start in a minute, counted
from Temporal (the real dev server), enforced where research starts for every client: 429 with
Retry-After over the API, exit 2 in the CLI; another user is never held back by them."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

from tests.starter.test_starter import error_line, starter
from tests.web.conftest import (
    QUESTION,
    WebServer,
    WebWorker,
    one_line_error,
    running_app,
    web_config,
)


def _users(*names: str) -> dict[str, str]:
    """Users of this test only (the session's server keeps other tests' research running)."""
    tag = uuid.uuid4().hex[:6]
    return {f"{name}-{tag}": f"{name}-token-{tag}-0123456789" for name in names}


async def _start(client: httpx.AsyncClient) -> httpx.Response:
    return await client.post("/api/research", json={"question": QUESTION, "review_plan": True})


async def _cancel_all(server: WebServer, user: str) -> None:
    async with server.client(user) as client:
        for row in (await client.get("/api/research")).json():
            await client.post(f"/api/research/{row['id']}/cancel")


async def test_one_user_at_their_running_limit_does_not_hold_back_another(
    web_worker: WebWorker,
) -> None:
    """Six starts at once by one user with a limit of 2: two start, four are 429 with
    Retry-After; another user's start is taken meanwhile; when one ends, the first may start again."""
    tokens = _users("carol", "dave")
    carol, dave = tokens
    config = web_config(
        web_worker, tokens, research_running_per_user=2, research_starts_per_minute=100
    )
    with running_app(config, tokens) as server:
        try:
            async with server.client(carol) as mine, server.client(dave) as other:
                answers = await asyncio.gather(*(_start(mine) for _ in range(6)))
                taken = [a for a in answers if a.status_code == 201]
                refused = [a for a in answers if a.status_code != 201]
                assert len(taken) == 2, [a.status_code for a in answers]
                for answer in refused:
                    assert "running" in one_line_error(answer, 429)
                    assert int(answer.headers["retry-after"]) >= 1
                assert (await _start(other)).status_code == 201  # R6: not starved
                first = taken[0].json()["id"]
                assert (await mine.post(f"/api/research/{first}/cancel")).status_code == 202
                for _ in range(100):
                    view = (await mine.get(f"/api/research/{first}")).json()
                    if view.get("status") != "running":
                        break
                    await asyncio.sleep(0.1)
                assert (await _start(mine)).status_code == 201
        finally:
            await _cancel_all(server, carol)
            await _cancel_all(server, dave)


async def test_starts_per_minute_are_limited_per_user(web_worker: WebWorker) -> None:
    tokens = _users("erin", "frank")
    erin, frank = tokens
    config = web_config(
        web_worker, tokens, research_running_per_user=100, research_starts_per_minute=3
    )
    with running_app(config, tokens) as server:
        try:
            async with server.client(erin) as mine, server.client(frank) as other:
                for _ in range(3):
                    assert (await _start(mine)).status_code == 201
                over = await _start(mine)
                assert "last minute" in one_line_error(over, 429)
                assert 1 <= int(over.headers["retry-after"]) <= 60
                assert (await _start(other)).status_code == 201
        finally:
            await _cancel_all(server, erin)
            await _cancel_all(server, frank)


@pytest.mark.usefixtures("dev_env")
async def test_the_cli_meets_the_same_running_limit_with_exit_2(
    subprocess_env: dict[str, str],
) -> None:
    env = {**subprocess_env, "RESEARCH_RUNNING_PER_USER": "1"}
    first = await starter("research", QUESTION, "--detach", env=env)
    assert first.code == 0, first.err
    second = await starter("research", QUESTION, "--detach", env=env)
    assert second.code == 2
    assert "running" in error_line(second)
    assert (await starter("cancel", first.out.strip(), env=env)).code == 0
