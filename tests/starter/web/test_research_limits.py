"""Research one user may have running at once and start in a minute, counted
from Temporal (the real dev server), enforced where research starts for every client: 429 with
Retry-After over the API, exit 2 in the CLI; another user is never held back by them."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.starter.cli.test_starter import REPO, error_line, starter
from tests.starter.web.conftest import (
    QUESTION,
    WebWorker,
    one_line_error,
    running_app,
    web_config,
)


@asynccontextmanager
async def two_users(
    worker: WebWorker, running: int, per_minute: int
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """A server with these limits and two users of this test only (the session's server keeps
    other tests' research running), as two clients; their research is cancelled after."""
    tag = uuid.uuid4().hex[:6]
    tokens = {f"{name}-{tag}": f"{name}-token-{tag}-0123456789" for name in ("one", "two")}
    config = web_config(
        worker, tokens, research_running_per_user=running, research_starts_per_minute=per_minute
    )
    with running_app(config, tokens) as server:
        first, second = (server.client(user) for user in tokens)
        async with first, second:
            try:
                yield first, second
            finally:
                for client in (first, second):
                    for row in (await client.get("/api/research")).json():
                        await client.post(f"/api/research/{row['id']}/cancel")


async def _start(client: httpx.AsyncClient) -> httpx.Response:
    return await client.post("/api/research", json={"question": QUESTION, "review_plan": True})


async def test_one_user_at_their_running_limit_does_not_hold_back_another(
    web_worker: WebWorker,
) -> None:
    """Six starts at once by one user with a limit of 2: two start, four are 429 with
    Retry-After; another user's start is taken meanwhile; when one ends, the first may start again."""
    async with two_users(web_worker, running=2, per_minute=100) as (mine, other):
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
            if (await mine.get(f"/api/research/{first}")).json().get("status") != "running":
                break
            await asyncio.sleep(0.1)
        assert (await _start(mine)).status_code == 201


async def test_starts_per_minute_are_limited_per_user(web_worker: WebWorker) -> None:
    async with two_users(web_worker, running=100, per_minute=3) as (mine, other):
        for _ in range(3):
            assert (await _start(mine)).status_code == 201
        over = await _start(mine)
        assert "last minute" in one_line_error(over, 429)
        assert 1 <= int(over.headers["retry-after"]) <= 60
        assert (await _start(other)).status_code == 201


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


@pytest.mark.usefixtures("dev_env")
async def test_the_mcp_server_meets_the_same_running_limit_as_a_tool_error(
    subprocess_env: dict[str, str],
) -> None:
    env = {**subprocess_env, "RESEARCH_RUNNING_PER_USER": "1"}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        first = await mcp.call_tool("research", {"question": QUESTION})
        assert not first.is_error, first
        second = await mcp.call_tool("research", {"question": QUESTION})
    assert second.is_error
    [content] = second.content
    assert "running" in content.text and "\n" not in content.text
    started = first.structured_content or {}
    assert (await starter("cancel", str(started.get("id")), env=env)).code == 0
