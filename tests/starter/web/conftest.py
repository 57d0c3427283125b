"""The web app as users reach it: a real uvicorn server on a free loopback port (in a thread of
the test process), bound to the Temporal dev server, with a worker running the real workflow over
the activity doubles of tests/support/doubles.py, and a real research library (SQLite).

Fixtures, for these tests and the pages' and browser tests alike:
- `web_server`: access control on; `.url`, `.tokens` ({"alice": ..., "bob": ...}), `.auth(user)`
  (the Bearer header), `.app` (the FastAPI app, to look inside), `.config`;
- `open_web_server`: no tokens (one user, `local`), same worker and library;
- `web_worker`: the worker's task queue, its `Script` and the library's URL;
- `running_app(config)`: any other app (e.g. pointed at a closed port) as a `WebServer`;
- helpers: `start`, `wait_for`, `read_stream` (SSE), `one_line_error`, `session_cookie` and
  `csrf_for` (what a signed-in page holds).

The worker's doubles take cues from the question: "clarify" asks one clarification question
first; "slow" makes planning, each step's observation and reflection take SLOW_S, so events come
over a few seconds. `review_plan: true` in the request keeps a research waiting (an hour) for
its plan review. Finished research is written to the library by the real store.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import pytest_asyncio
import uvicorn
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from settings import Settings
from starter.web.app import create_app
from starter.web.guard.slow_clients import uvicorn_config
from starter.web.identity import auth
from storage import store
from tests.support.doubles import (
    Script,
    default_observe,
    default_plan,
    default_reflect,
    default_route,
    slow,
)
from workflows import activity_models as m
from workflows.models import RoutingDecision
from workflows.research import DeepResearchWorkflow

TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdef"}
SLOW_S = 0.4
QUESTION = "How does asyncio.gather run coroutines concurrently?"


def directed_script(db_url: str) -> Script:
    def route(inp: m.RouteInput) -> m.RouteOutput:
        if inp.clarification_count == 0 and "clarify" in inp.messages[-1].content.lower():
            return m.RouteOutput(decision=RoutingDecision.CLARIFICATION, reasoning="vague")
        return default_route(inp)

    def when_slow(then: Any) -> Any:
        def behaviour(inp: Any) -> Any:
            return slow(SLOW_S, then)(inp) if "slow" in inp.query.lower() else then(inp)

        return behaviour

    async def save(record: m.SaveResearchInput) -> m.SaveResearchOutput:
        return await asyncio.to_thread(store.write, record, db_url)

    return Script(
        route=route,
        plan=when_slow(default_plan),
        observe=when_slow(default_observe),
        reflect=when_slow(default_reflect),
        save_research=save,
    )


@dataclass
class WebServer:
    url: str
    config: Settings
    app: FastAPI
    tokens: dict[str, str] = field(default_factory=dict)

    def auth(self, user: str = "alice") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"} if self.tokens else {}

    def client(self, user: str | None = "alice", **options: Any) -> httpx.AsyncClient:
        headers = self.auth(user) if user else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, **{"timeout": 30, **options})


@dataclass
class WebWorker:
    task_queue: str
    script: Script
    db_url: str
    address: str


@contextmanager
def running_app(
    config: Settings, tokens: dict[str, str] | None = None, sock: socket.socket | None = None
) -> Iterator[WebServer]:
    """CONFIG's app under uvicorn on a free loopback port (or SOCK, when its address must be known
    before: an identity provider's redirect URI), in a thread, until the block ends."""
    app = create_app(config)
    sock = sock or socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn_config(app, log_level="warning", timeout_graceful_shutdown=1))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="web app"
    )
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the web app did not start")
        time.sleep(0.01)
    try:
        yield WebServer(
            url=f"http://127.0.0.1:{sock.getsockname()[1]}",
            config=config,
            app=app,
            tokens=dict(tokens or {}),
        )
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def web_config(worker: WebWorker, tokens: dict[str, str] | None = None, **extra: Any) -> Settings:
    values: dict[str, Any] = dict(
        temporal_address=worker.address,
        temporal_task_queue=worker.task_queue,
        research_db_url=worker.db_url,
        llm_provider="offline",
        research_user="local",
        research_api_tokens=",".join(f"{name}:{token}" for name, token in (tokens or {}).items())
        or None,
        # the session's one server starts hundreds of research as alice across the tests: the
        # per-user limits have tests of their own that set them
        research_running_per_user=10_000,
        research_starts_per_minute=10_000,
    )
    values.update(extra)
    return Settings(_env_file=None, **values)


@pytest_asyncio.fixture(scope="session")
async def web_worker(
    dev_env: WorkflowEnvironment, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[WebWorker]:
    folder = tmp_path_factory.mktemp("web")
    db_url = f"sqlite:///{folder / 'library.sqlite'}"
    task_queue = f"web-{uuid.uuid4().hex[:8]}"
    script = directed_script(db_url)
    async with Worker(
        dev_env.client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow],
        activities=script.activities(),
    ):
        yield WebWorker(
            task_queue=task_queue,
            script=script,
            db_url=db_url,
            address=dev_env.client.service_client.config.target_host,
        )


@pytest.fixture(scope="session")
def web_server(web_worker: WebWorker) -> Iterator[WebServer]:
    with running_app(web_config(web_worker, TOKENS), TOKENS) as server:
        yield server


@pytest.fixture(scope="session")
def open_web_server(web_worker: WebWorker) -> Iterator[WebServer]:
    with running_app(web_config(web_worker)) as server:
        yield server


# --- helpers the tests share ---------------------------------------------------------------------


@dataclass
class SseEvent:
    event: str
    data: Any
    id: int | None = None


async def read_stream(
    client: httpx.AsyncClient,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    until: Any = None,
    timeout: float = 60,
) -> tuple[httpx.Response, list[SseEvent]]:
    """The SSE events of PATH until the stream ends or UNTIL(event) is true (then it is closed)."""
    events: list[SseEvent] = []

    async def read() -> httpx.Response:
        async with client.stream("GET", path, headers=headers) as response:
            if response.status_code != 200:
                await response.aread()
                return response
            fields: dict[str, str] = {}
            async for line in response.aiter_lines():
                if line:
                    name, _, value = line.partition(":")
                    fields[name] = value.removeprefix(" ")
                    continue
                if "event" in fields:
                    event = SseEvent(
                        fields["event"],
                        json.loads(fields.get("data", "null")),
                        int(fields["id"]) if "id" in fields else None,
                    )
                    events.append(event)
                    if until is not None and until(event):
                        return response
                fields = {}
            return response

    response = await asyncio.wait_for(read(), timeout)
    return response, events


async def wait_for(
    client: httpx.AsyncClient, path: str, check: Any, timeout: float = 30
) -> dict[str, Any]:
    """GET PATH until CHECK(json) holds."""
    deadline = time.monotonic() + timeout
    while True:
        response = await client.get(path)
        body = response.json()
        if response.status_code == 200 and check(body):
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never got there: {response.status_code} {body}")
        await asyncio.sleep(0.1)


async def start(client: httpx.AsyncClient, **body: Any) -> str:
    response = await client.post("/api/research", json={"question": QUESTION, **body})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def session_cookie(server: WebServer, user: str) -> str:
    """The session cookie's value a sign-in as USER on SERVER sets."""
    response = Response()
    auth.start_session(response, user, request=_request_for(server))
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Secure" not in cookie
    return cookie.split(";")[0].split("=", 1)[1]


def csrf_for(server: WebServer, cookie: str = "") -> str:
    """The CSRF token a page of SERVER embeds for the session COOKIE."""
    return auth.csrf_token(
        _request_for(server, [(b"cookie", f"{auth.COOKIE}={cookie}".encode())] if cookie else [])
    )


def _request_for(server: WebServer, headers: list[tuple[bytes, bytes]] | None = None) -> Request:
    return Request(
        {
            "type": "http",
            "app": server.app,
            "scheme": "http",
            "path": "/",
            "method": "GET",
            "headers": headers or [],
            "server": ("127.0.0.1", 80),
        }
    )


def one_line_error(response: httpx.Response, status: int) -> str:
    """The response's error line, checked to be one line in `{"error": ...}` with STATUS."""
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert list(body) == ["error"], body
    message = body["error"]
    assert message and "\n" not in message and "Traceback" not in message, message
    return message
