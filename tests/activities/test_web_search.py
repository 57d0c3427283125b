"""Web search against real local HTTP servers that behave like SearxNG, Tavily and Brave (checking
keys and parameters as the real APIs do), and DuckDuckGo with `ddgs.DDGS` replaced, since it is
the one provider that cannot be pointed at a double. No test touches the internet.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import ddgs
import pytest
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException
from temporalio.exceptions import ApplicationError

from activities.providers import http as provider_http
from activities.providers.brave import Brave
from activities.providers.duckduckgo import DuckDuckGo
from activities.providers.searxng import Searxng
from activities.providers.strategies import (
    build_provider,
    canonical_url,
    check_search_config,
    run_search,
)
from activities.providers.tavily import Tavily
from settings import Settings, settings
from workflows.models import SNIPPET_LIMIT

TAVILY_KEY = "tvly-test-0123456789"
BRAVE_KEY = "BSA-test-9876543210"

# --- doubles --------------------------------------------------------------------------------------


@dataclass
class Request:
    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]
    body: Any


Reply = tuple[int, dict[str, str], Any]


@dataclass
class Api:
    """A real HTTP server on 127.0.0.1: `answer` decides each reply unless `fault` is set."""

    answer: Callable[[Request], Reply]
    fault: Reply | None = None
    delay_s: float = 0.0
    requests: list[Request] = field(default_factory=list)
    url: str = ""

    def serve(self) -> ThreadingHTTPServer:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def handle_one(self, method: str) -> None:
                url = urlparse(self.path)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = Request(
                    method,
                    url.path,
                    {k: v[0] for k, v in parse_qs(url.query).items()},
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw) if raw else None,
                )
                api.requests.append(request)
                time.sleep(api.delay_s)
                status, headers, body = api.fault or api.answer(request)
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                try:
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): no traceback in the run's output

            def do_GET(self) -> None:
                self.handle_one("GET")

            def do_POST(self) -> None:
                self.handle_one("POST")

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return server


@pytest.fixture
def serve() -> Iterator[Callable[[Api], Api]]:
    servers: list[ThreadingHTTPServer] = []

    def start(api: Api) -> Api:
        servers.append(api.serve())
        return api

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def searxng_api(results: list[dict[str, Any]]) -> Callable[[Request], Reply]:
    def answer(request: Request) -> Reply:
        if not request.path.endswith("/search") or request.params.get("format") != "json":
            return (
                403,
                {"Content-Type": "text/html"},
                "<h1>403 Forbidden</h1>",
            )  # a format not in search.formats
        return 200, {}, {"query": request.params["q"], "results": results}

    return answer


def tavily_api(results: list[dict[str, Any]]) -> Callable[[Request], Reply]:
    def answer(request: Request) -> Reply:
        if (request.method, request.path) != ("POST", "/search"):
            return 404, {}, {"detail": "Not Found"}
        if request.headers.get("authorization") != f"Bearer {TAVILY_KEY}":
            return 401, {}, {"detail": {"error": "Unauthorized: missing or invalid API key."}}
        body = request.body or {}
        if not (
            isinstance(body.get("query"), str) and isinstance(body.get("max_results"), int)
        ) or (body.get("search_depth") != "basic"):
            return 400, {}, {"detail": {"error": f"invalid request {body}"}}
        return 200, {}, {"query": body["query"], "results": results[: body["max_results"]]}

    return answer


def brave_api(results: list[dict[str, Any]]) -> Callable[[Request], Reply]:
    def answer(request: Request) -> Reply:
        if (request.method, request.path) != ("GET", "/res/v1/web/search"):
            return 404, {}, {"message": "Not Found"}
        if request.headers.get("x-subscription-token") != BRAVE_KEY:
            return (
                401,
                {},
                {
                    "type": "ErrorResponse",
                    "error": {"code": "SUBSCRIPTION_TOKEN_INVALID", "status": 401},
                },
            )
        count = request.params.get("count", "")
        if not request.params.get("q") or not count.isdigit() or int(count) > 20:
            return (
                422,
                {},
                {"type": "ErrorResponse", "error": {"code": "VALIDATION", "status": 422}},
            )
        if request.headers.get("accept") != "application/json":
            return 406, {}, "Not Acceptable"
        return 200, {}, {"type": "search", "web": {"results": results[: int(count)]}}

    return answer


def hit(
    url: str, title: str = "A page", text: str = "About it.", text_field: str = "content"
) -> dict[str, Any]:
    return {"url": url, "title": title, text_field: text}


@dataclass
class Web:
    searxng: Api
    tavily: Api
    brave: Api

    def config(
        self, provider: str, fallbacks: str = "", strategy: str = "fallback", **overrides: Any
    ) -> Settings:
        values = {
            "search_provider": provider,
            "search_fallback_providers": fallbacks,
            "search_strategy": strategy,
            "searxng_url": self.searxng.url,
            "tavily_api_key": TAVILY_KEY,
            "brave_api_key": BRAVE_KEY,
            "research_corpus_dir": None,
            "tavily_base_url": self.tavily.url,
            "brave_base_url": self.brave.url,
        }
        return Settings(_env_file=None, **(values | overrides))


@pytest.fixture
def web(serve: Callable[[Api], Api], monkeypatch: pytest.MonkeyPatch) -> Web:
    """The three HTTP APIs, with the worker pointed at them as an end-to-end test would do it."""
    searx = serve(
        Api(
            searxng_api([hit("https://searx.example/one", "One"), hit("https://searx.example/two")])
        )
    )
    tavily = serve(
        Api(
            tavily_api(
                [hit("https://tavily.example/one", "Tavily one"), hit("https://tavily.example/two")]
            )
        )
    )
    brave = serve(Api(brave_api([hit("https://brave.example/one", text_field="description")])))
    return Web(searx, tavily, brave)


async def failure(search: Any) -> ApplicationError:
    with pytest.raises(ApplicationError) as raised:
        await search
    return raised.value


def urls(hits: list[Any]) -> list[str]:
    return [h.url for h in hits]


# --- one page, one canonical URL ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://Example.com/a/?utm_source=x#frag", "https://example.com/a"),
        ("HTTP://EXAMPLE.com:80/a", "http://example.com/a"),
        ("https://example.com:443/", "https://example.com"),
        ("https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2"),
        ("https://example.com/a?fbclid=1&gclid=2&UTM_Medium=y&id=7", "https://example.com/a?id=7"),
    ],
)
def test_links_to_the_same_page_share_a_canonical_url(a: str, b: str) -> None:
    assert canonical_url(a) == canonical_url(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://example.com/a", "https://example.com/b"),
        ("https://example.com/A", "https://example.com/a"),
        ("https://example.com/a?id=1", "https://example.com/a?id=2"),
        ("https://example.com:8443/a", "https://example.com/a"),
        ("http://example.com/a", "https://example.com/a"),
    ],
)
def test_links_to_different_pages_keep_different_canonical_urls(a: str, b: str) -> None:
    assert canonical_url(a) != canonical_url(b)


def test_a_malformed_link_is_its_own_canonical_url() -> None:
    assert canonical_url("http://[broken/a") == "http://[broken/a"


# --- the providers --------------------------------------------------------------------------------


async def test_searxng_hits_come_from_its_json_api(web: Web) -> None:
    hits = await Searxng(web.searxng.url + "/searx/").search("tidal locking", 5)

    assert [(h.url, h.title, h.snippet, h.provider) for h in hits] == [
        ("https://searx.example/one", "One", "About it.", "searxng"),
        ("https://searx.example/two", "A page", "About it.", "searxng"),
    ]
    [request] = web.searxng.requests
    assert (request.path, request.params) == (
        "/searx/search",
        {"q": "tidal locking", "format": "json"},
    )
    assert request.headers["user-agent"] == settings().crawl.user_agent


async def test_a_provider_gives_web_pages_only_one_per_page_with_short_snippets(web: Web) -> None:
    web.searxng.answer = searxng_api(
        [
            hit("file:///etc/passwd"),
            hit("https://example.com/a?utm_source=feed", "First", "word " * 400),
            hit("https://example.com/a/"),
            hit("https://example.com/b"),
            hit("https://example.com/c"),
        ]
    )

    hits = await Searxng(web.searxng.url).search("q", 2)

    assert urls(hits) == ["https://example.com/a?utm_source=feed", "https://example.com/b"]
    assert len(hits[0].snippet) <= SNIPPET_LIMIT and hits[0].snippet.endswith("…")


async def test_a_searxng_without_the_json_format_fails_for_good_saying_how_to_enable_it(
    web: Web,
) -> None:
    web.searxng.fault = (403, {"Content-Type": "text/html"}, "<h1>403 Forbidden</h1>")

    error = await failure(Searxng(web.searxng.url).search("q", 5))

    assert error.non_retryable and error.type == "SearchConfigError"
    assert "search.formats: [html, json]" in error.message


async def test_tavily_gets_the_key_as_a_bearer_token_and_the_query_in_the_body(web: Web) -> None:
    hits = await Tavily(TAVILY_KEY, base_url=web.tavily.url).search("tidal locking", 1)

    assert [(h.url, h.title, h.provider) for h in hits] == [
        ("https://tavily.example/one", "Tavily one", "tavily")
    ]
    assert web.tavily.requests[0].body == {
        "query": "tidal locking",
        "max_results": 1,
        "search_depth": "basic",
    }


async def test_brave_gets_the_token_and_count_and_its_markup_is_removed(web: Web) -> None:
    web.brave.answer = brave_api(
        [
            hit(
                f"https://brave.example/{i}",
                "<strong>Rust</strong> &amp; Go",
                "Why <b>Rust</b> &amp; Go",
                "description",
            )
            for i in range(30)
        ]
    )

    hits = await Brave(BRAVE_KEY, base_url=web.brave.url).search("rust go", 50)

    assert (hits[0].title, hits[0].snippet, hits[0].provider) == (
        "Rust & Go",
        "Why Rust & Go",
        "brave",
    )
    assert len(hits) == 20  # Brave's most per request
    assert web.brave.requests[0].params == {"q": "rust go", "count": "20"}


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        (
            lambda web: Tavily("tvly-wrong-key", base_url=web.tavily.url),
            "tavily rejected the API key (401): check TAVILY_API_KEY",
        ),
        (
            lambda web: Brave("BSA-wrong-key", base_url=web.brave.url),
            "brave rejected the API key (401): check BRAVE_API_KEY",
        ),
    ],
)
async def test_a_rejected_key_fails_for_good_without_showing_the_key(
    web: Web, provider: Any, expected: str
) -> None:
    error = await failure(provider(web).search("q", 5))

    assert (error.non_retryable, error.type, error.message) == (True, "SearchAuthError", expected)
    assert "wrong-key" not in str(error)


async def test_a_server_that_echoes_the_key_in_an_error_never_gets_it_into_the_message(
    web: Web,
) -> None:
    web.tavily.fault = (400, {}, {"detail": f"query too long for key {TAVILY_KEY}"})

    error = await failure(Tavily(TAVILY_KEY, base_url=web.tavily.url).search("q", 5))

    assert error.non_retryable and error.type == "SearchRequestError"
    assert (
        "tavily rejected the request (400)" in error.message and "query too long" in error.message
    )
    assert TAVILY_KEY not in str(error)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (
            (401, {}, "Unauthorized"),
            ("SearchRequestError", "searxng rejected the request (401): Unauthorized"),
        ),
        (
            (404, {}, "Not Found"),
            ("SearchRequestError", "searxng rejected the request (404): Not Found"),
        ),
        (
            (301, {"Location": "https://s.example/search"}, ""),
            (
                "SearchConfigError",
                "searxng redirects to https://s.example/search (301); configure that address instead",
            ),
        ),
    ],
    ids=["behind a login", "wrong path", "moved"],
)
async def test_a_searxng_that_refuses_the_request_fails_for_good(
    web: Web, fault: Reply, expected: tuple[str, str]
) -> None:
    web.searxng.fault = fault

    error = await failure(Searxng(web.searxng.url).search("q", 5))

    assert (error.non_retryable, error.type, error.message) == (True, *expected)


@pytest.mark.parametrize(
    ("retry_after", "expected_s"),
    [
        ("2", (2, 2)),
        ("3600", (60, 60)),
        (lambda: email.utils.formatdate(time.time() + 5, usegmt=True), (3.5, 5)),
        (None, None),
    ],
)
async def test_rate_limiting_is_retried_after_the_wait_the_server_asks_for(
    web: Web, retry_after: Any, expected_s: tuple[float, float] | None
) -> None:
    value = retry_after() if callable(retry_after) else retry_after
    web.tavily.fault = (429, {"Retry-After": value} if value else {}, {"detail": "slow down"})

    error = await failure(Tavily(TAVILY_KEY, base_url=web.tavily.url).search("q", 5))

    assert (error.non_retryable, error.type) == (False, "SearchRateLimited")
    if expected_s is None:
        assert error.next_retry_delay is None
    else:
        assert expected_s[0] <= error.next_retry_delay.total_seconds() <= expected_s[1]


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors_are_retried(web: Web, status: int) -> None:
    web.brave.fault = (
        status,
        {"Content-Type": "text/html"},
        "<html><body>\n<h1>Bad Gateway</h1>\n</body></html>",
    )

    error = await failure(Brave(BRAVE_KEY, base_url=web.brave.url).search("q", 5))

    assert (error.non_retryable, error.type) == (False, "SearchUnavailable")
    assert error.message == f"brave is unavailable ({status}): Bad Gateway"


async def test_a_slow_provider_times_out_as_a_retryable_failure(web: Web) -> None:
    web.searxng.delay_s = 4.0
    started = time.monotonic()

    error = await failure(Searxng(web.searxng.url, timeout_s=0.2).search("q", 5))

    assert time.monotonic() - started < 2.5  # not the provider's 4 s
    assert (error.non_retryable, error.message) == (False, "searxng did not answer within 0.2 s")


async def test_an_unreachable_provider_is_a_retryable_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    error = await failure(Searxng(f"http://127.0.0.1:{port}").search("q", 5))

    assert (error.non_retryable, error.type) == (False, "SearchUnavailable")
    assert error.message.startswith(
        f"could not connect to searxng at http://127.0.0.1:{port}/search"
    )


async def test_an_answer_that_is_not_json_is_a_retryable_failure(web: Web) -> None:
    web.searxng.fault = (200, {"Content-Type": "text/html"}, "<html>maintenance</html>")

    error = await failure(Searxng(web.searxng.url).search("q", 5))

    assert (error.non_retryable, error.message) == (
        False,
        "searxng answered with something that is not a JSON object",
    )


async def test_a_proxy_in_the_environment_is_ignored(
    web: Web, monkeypatch: pytest.MonkeyPatch
) -> None:
    await provider_http.close_http()  # the next client is made with this environment
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    try:
        assert len(await Searxng(web.searxng.url).search("q", 5)) == 2
    finally:
        await provider_http.close_http()


# --- duckduckgo, through a stand-in for ddgs.DDGS --------------------------------------------------


class FakeDDGS:
    rows: ClassVar[list[dict[str, Any]]] = []
    error: ClassVar[Exception | None] = None
    calls: ClassVar[list[tuple[str, int]]] = []
    wait_s: ClassVar[float] = 0.0

    def __init__(self, timeout: int | None = 5) -> None:
        pass

    def text(self, query: str, max_results: int = 10) -> list[dict[str, Any]]:
        FakeDDGS.calls.append((query, max_results))
        time.sleep(FakeDDGS.wait_s)  # ddgs blocks while it asks its engines
        if FakeDDGS.error:
            raise FakeDDGS.error
        return FakeDDGS.rows


@pytest.fixture
def fake_ddgs(monkeypatch: pytest.MonkeyPatch) -> type[FakeDDGS]:
    monkeypatch.setattr(ddgs, "DDGS", FakeDDGS)
    monkeypatch.setattr(FakeDDGS, "calls", [])
    monkeypatch.setattr(FakeDDGS, "error", None)
    monkeypatch.setattr(FakeDDGS, "wait_s", 0.0)
    monkeypatch.setattr(
        FakeDDGS, "rows", [{"href": "https://ddg.example/one", "title": "One", "body": "First."}]
    )
    return FakeDDGS


async def test_duckduckgo_hits_come_from_ddgs_without_blocking_the_worker(
    fake_ddgs: type[FakeDDGS],
) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    fake_ddgs.wait_s = 0.3
    ticker = asyncio.create_task(tick())
    hits = await DuckDuckGo().search("tidal locking", 4)
    ticker.cancel()

    assert [(h.url, h.title, h.snippet, h.provider) for h in hits] == [
        ("https://ddg.example/one", "One", "First.", "duckduckgo")
    ]
    assert fake_ddgs.calls == [("tidal locking", 4)]
    assert ticks >= 5  # the event loop kept running while ddgs waited


async def test_duckduckgo_finding_nothing_is_an_empty_answer(fake_ddgs: type[FakeDDGS]) -> None:
    fake_ddgs.error = DDGSException("No results found.")

    assert await DuckDuckGo().search("q", 4) == []


@pytest.mark.parametrize(
    ("raised", "expected_type"),
    [
        (RatelimitException("202 Ratelimit"), "SearchRateLimited"),
        (TimeoutException("timed out"), "SearchUnavailable"),
        (DDGSException("ConnectError: dns"), "SearchUnavailable"),
    ],
)
async def test_duckduckgo_failures_are_retried(
    fake_ddgs: type[FakeDDGS], raised: Exception, expected_type: str
) -> None:
    fake_ddgs.error = raised

    error = await failure(DuckDuckGo().search("q", 4))

    assert (error.non_retryable, error.type) == (False, expected_type)
    assert error.message.startswith("duckduckgo")


# --- the strategies -------------------------------------------------------------------------------


async def test_conservative_asks_only_the_first_provider_even_when_it_fails(web: Web) -> None:
    web.searxng.fault = (503, {}, "down")

    error = await failure(
        run_search("q", 5, web.config("searxng", "tavily,brave", strategy="conservative"))
    )

    assert (error.non_retryable, error.type) == (False, "SearchUnavailable")
    assert (len(web.searxng.requests), len(web.tavily.requests), len(web.brave.requests)) == (
        1,
        0,
        0,
    )


async def test_fallback_stops_at_the_first_provider_with_hits(web: Web) -> None:
    hits = await run_search("q", 5, web.config("searxng", "tavily"))

    assert {h.provider for h in hits} == {"searxng"}
    assert web.tavily.requests == []


@pytest.mark.parametrize(
    "trouble",
    [(500, {}, "boom"), (200, {}, {"results": []}), (403, {}, "Forbidden")],
    ids=["fails", "finds nothing", "is misconfigured"],
)
async def test_fallback_moves_on_when_a_provider_fails_or_finds_nothing(
    web: Web, trouble: Reply
) -> None:
    web.searxng.fault = trouble

    hits = await run_search("q", 5, web.config("searxng", "tavily, brave"))

    assert urls(hits) == ["https://tavily.example/one", "https://tavily.example/two"]
    assert (len(web.searxng.requests), len(web.tavily.requests), len(web.brave.requests)) == (
        1,
        1,
        0,
    )


async def test_fallback_fails_for_good_only_when_every_provider_failed_for_good(web: Web) -> None:
    web.searxng.fault = (403, {}, "Forbidden")
    web.tavily.fault = (401, {}, {"detail": "bad key"})

    error = await failure(run_search("q", 5, web.config("searxng", "tavily")))

    assert error.non_retryable and error.type == "SearchFailed"
    assert (
        "searxng refused format=json" in error.message
        and "tavily rejected the API key (401)" in error.message
    )


async def test_fallback_is_retried_when_any_provider_may_recover(web: Web) -> None:
    web.searxng.fault = (403, {}, "Forbidden")
    web.tavily.fault = (429, {"Retry-After": "2"}, {"detail": "slow down"})

    error = await failure(run_search("q", 5, web.config("searxng", "tavily")))

    assert not error.non_retryable
    assert error.next_retry_delay.total_seconds() == 2


async def test_fallback_answers_nothing_found_when_a_provider_found_nothing_and_the_rest_failed(
    web: Web,
) -> None:
    web.searxng.fault = (200, {}, {"results": []})
    web.tavily.fault = (500, {}, "boom")

    assert await run_search("q", 5, web.config("searxng", "tavily")) == []


async def test_fallback_reaches_the_local_corpus(web: Web, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "moon.md").write_text(
        "# Tidal locking\n\nThe Moon is tidally locked: one face always points at us.\n"
    )
    (docs / "volcano.md").write_text("# Volcanoes\n\nMagma rises through the crust.\n")
    web.searxng.fault = (503, {}, "down")
    config = web.config(
        "searxng", "local", research_corpus_dir=docs, research_index_dir=tmp_path / "index"
    )

    hits = await run_search("tidally locked moon", 5, config)

    assert [(h.url, h.provider) for h in hits] == [((docs / "moon.md").as_uri(), "local")]


# --- hybrid research: your documents first, the web as well ---------------------------------------


def _documents(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "moon.md").write_text(
        "# Tidal locking\n\nThe Moon is tidally locked: one face always points at us.\n"
    )
    (docs / "volcano.md").write_text("# Volcanoes\n\nMagma rises through the crust.\n")
    return docs


async def test_local_with_web_fallback_asks_the_web_only_for_what_the_documents_lack(
    web: Web, tmp_path: Path
) -> None:
    docs = _documents(tmp_path)
    config = web.config(
        "local", "searxng", research_corpus_dir=docs, research_index_dir=tmp_path / "index"
    )

    local = await run_search("tidally locked moon", 5, config)
    assert [(h.url, h.provider) for h in local] == [((docs / "moon.md").as_uri(), "local")]
    assert web.searxng.requests == []  # the documents answered: the web was not asked

    elsewhere = await run_search("quasar redshift", 5, config)
    assert [(h.url, h.provider) for h in elsewhere] == [
        ("https://searx.example/one", "searxng"),
        ("https://searx.example/two", "searxng"),
    ]


async def test_local_exploratory_mixes_your_documents_and_the_web_by_rank(
    web: Web, tmp_path: Path
) -> None:
    docs = _documents(tmp_path)
    config = web.config(
        "local",
        "searxng",
        strategy="exploratory",
        research_corpus_dir=docs,
        research_index_dir=tmp_path / "index",
    )

    hits = await run_search("moon tidally locked", 5, config)

    assert [(h.url, h.provider) for h in hits] == [
        ((docs / "moon.md").as_uri(), "local"),
        ("https://searx.example/one", "searxng"),
        ("https://searx.example/two", "searxng"),
    ]


async def test_local_exploratory_still_answers_from_the_documents_when_the_web_is_down(
    web: Web, tmp_path: Path
) -> None:
    docs = _documents(tmp_path)
    web.searxng.fault = (503, {}, "down")
    config = web.config(
        "local",
        "searxng",
        strategy="exploratory",
        research_corpus_dir=docs,
        research_index_dir=tmp_path / "index",
    )

    hits = await run_search("magma crust", 5, config)

    assert [(h.url, h.provider) for h in hits] == [((docs / "volcano.md").as_uri(), "local")]


async def test_exploratory_merges_every_provider_by_rank_and_counts_each_page_once(
    web: Web,
) -> None:
    web.searxng.answer = searxng_api(
        [
            hit("https://Example.com/a/?utm_source=x#frag"),
            hit("https://example.com/b"),
            hit("https://example.com/c"),
        ]
    )
    web.tavily.answer = tavily_api([hit("https://example.com/a"), hit("https://example.com/d")])
    web.brave.fault = (500, {}, "boom")

    hits = await run_search("q", 5, web.config("searxng", "tavily,brave", strategy="exploratory"))

    assert [(h.url, h.provider) for h in hits] == [
        ("https://Example.com/a/?utm_source=x#frag", "searxng"),
        ("https://example.com/b", "searxng"),
        ("https://example.com/d", "tavily"),
        ("https://example.com/c", "searxng"),
    ]
    assert len(web.brave.requests) == 1


async def test_exploratory_asks_every_provider_at_once(web: Web) -> None:
    for api in (web.searxng, web.tavily, web.brave):
        api.delay_s = 1.0
    started = time.monotonic()

    hits = await run_search("q", 5, web.config("searxng", "tavily,brave", strategy="exploratory"))

    assert time.monotonic() - started < 2.5  # one after the other would take 3 s
    assert {h.provider for h in hits} == {"searxng", "tavily", "brave"}


async def test_exploratory_fails_only_when_every_provider_failed(web: Web) -> None:
    web.searxng.fault = (500, {}, "boom")
    web.tavily.fault = (429, {"Retry-After": "3"}, {})

    error = await failure(
        run_search("q", 5, web.config("searxng", "tavily", strategy="exploratory"))
    )

    assert (error.non_retryable, error.next_retry_delay.total_seconds()) == (False, 3)
    assert (
        "searxng is unavailable (500)" in error.message
        and "tavily is rate limiting (429)" in error.message
    )


# --- configuration --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings_", "expected"),
    [
        (
            {"search_provider": "google"},
            (
                "search provider 'google' does not exist; SEARCH_PROVIDER and SEARCH_FALLBACK_PROVIDERS take: "
                "duckduckgo, searxng, tavily, brave, local"
            ),
        ),
        (
            {
                "search_provider": "duckduckgo",
                "search_fallback_providers": "searxng, bing",
                "searxng_url": "http://s",
            },
            "'bing' does not exist",
        ),
        (
            {"search_strategy": "yolo"},
            (
                "search strategy 'yolo' does not exist; set SEARCH_STRATEGY to one of: conservative, fallback, exploratory"
            ),
        ),
        ({"search_provider": "tavily"}, "the tavily provider needs an API key: set TAVILY_API_KEY"),
        (
            {"search_provider": "brave", "brave_api_key": " "},
            "the brave provider needs an API key: set BRAVE_API_KEY",
        ),
        ({"search_provider": "searxng"}, "the searxng provider needs SEARXNG_URL"),
        (
            {"search_provider": "local", "research_corpus_dir": "/nowhere/docs"},
            "RESEARCH_CORPUS_DIR '/nowhere/docs' is not a folder",
        ),
    ],
)
async def test_a_broken_configuration_fails_the_check_in_one_line(
    settings_: dict[str, Any], expected: str
) -> None:
    unset = {"searxng_url": None, "tavily_api_key": None, "brave_api_key": None}
    config = Settings(_env_file=None, **(unset | settings_))

    with pytest.raises(ApplicationError) as raised:
        check_search_config(config)

    error = raised.value
    assert (error.non_retryable, error.type) == (True, "SearchConfigError")
    assert expected in error.message and "\n" not in error.message


@pytest.mark.parametrize(
    "settings_",
    [
        {},
        {"search_provider": "duckduckgo"},
        {
            "search_provider": " SearxNG ",
            "search_fallback_providers": " Tavily , brave,",
            "searxng_url": "http://s",
            "tavily_api_key": "k",
            "brave_api_key": "k",
        },
        {
            "search_provider": "duckduckgo",
            "search_fallback_providers": "tavily",
            "search_strategy": "conservative",
        },
    ],
    ids=[
        "defaults",
        "duckduckgo",
        "names in any case and spacing",
        "conservative ignores the fallbacks",
    ],
)
def test_a_working_configuration_passes_the_check(settings_: dict[str, Any]) -> None:
    check_search_config(Settings(_env_file=None, **({"tavily_api_key": None} | settings_)))


async def test_a_misconfigured_fallback_stops_the_search_before_any_request(web: Web) -> None:
    error = await failure(run_search("q", 5, web.config("searxng", "brave", brave_api_key=None)))

    assert error.message == "the brave provider needs an API key: set BRAVE_API_KEY"
    assert web.searxng.requests == []


# --- no secret in any message ---------------------------------------------------------------------

PASSWORD = "Hunter2-S3cret-Pass"
QUERY_KEY = "qk-5ecret-0123456789"
URL_SETTINGS = {"searxng": "searxng_url", "tavily": "tavily_base_url", "brave": "brave_base_url"}


def leaking(status: int) -> Callable[[Request], Reply]:
    """An endpoint that fails with `status` and, like a careless proxy, echoes the credentials it
    was sent (decoded from Basic auth) and the URL it was configured with."""

    def answer(request: Request) -> Reply:
        auth = request.headers.get("authorization", "")
        sent = base64.b64decode(auth[6:]).decode() if auth.startswith("Basic ") else auth
        echo = f"denied {sent} at http://searcher:{PASSWORD}@proxy.example{request.path}?api_key={QUERY_KEY}"
        location = f"http://searcher:{PASSWORD}@elsewhere.example/search?api_key={QUERY_KEY}"
        return status, {"Content-Type": "text/plain", "Location": location}, echo

    return answer


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def assert_no_secret(error: ApplicationError, logs: str) -> None:
    for secret in (PASSWORD, QUERY_KEY):
        assert secret not in error.message and secret not in str(error), error.message
        assert secret not in repr(error.details) and secret not in repr(error.__cause__)
        assert secret not in logs


@pytest.mark.parametrize("provider", list(URL_SETTINGS))
@pytest.mark.parametrize("fault", ["refused", 500, 403, 302, 401, 400, "not json", "timeout"])
@pytest.mark.parametrize("with_query", [False, True], ids=["userinfo", "userinfo and api_key"])
async def test_credentials_in_a_configured_url_appear_in_no_error_message_or_log(
    serve: Callable[[Api], Api],
    caplog: pytest.LogCaptureFixture,
    provider: str,
    fault: Any,
    with_query: bool,
) -> None:
    caplog.set_level(logging.DEBUG)
    api = serve(
        Api(
            leaking(fault if isinstance(fault, int) else 200),
            delay_s=1.0 if fault == "timeout" else 0.0,
        )
    )
    if fault == "not json":
        api.fault = (200, {"Content-Type": "text/html"}, f"<p>{PASSWORD} {QUERY_KEY}</p>")
    port = closed_port() if fault == "refused" else int(api.url.rsplit(":", 1)[1])
    url = f"http://searcher:{PASSWORD}@127.0.0.1:{port}" + (
        f"/?api_key={QUERY_KEY}" if with_query else ""
    )
    config = Settings(
        _env_file=None,
        tavily_api_key=TAVILY_KEY,
        brave_api_key=BRAVE_KEY,
        **{setting: url for setting in URL_SETTINGS.values()},
    )
    instance = build_provider(provider, config)
    instance.timeout_s = 0.3

    error = await failure(instance.search("q", 5))

    assert_no_secret(error, caplog.text)
    if fault not in ("refused", "timeout"):
        assert api.requests, "the request reached the double"
        assert "searcher:" not in api.requests[0].path  # the credentials travel as Basic auth only
        assert (
            base64.b64decode(api.requests[0].headers["authorization"][6:]).decode()
            == f"searcher:{PASSWORD}"
        )


async def test_every_provider_failing_with_credentials_in_their_urls_leaks_none(
    serve: Callable[[Api], Api], caplog: pytest.LogCaptureFixture
) -> None:
    """Fallback and exploratory: each failure is logged and all are joined into one message."""
    caplog.set_level(logging.DEBUG)
    apis = {
        name: serve(Api(leaking(status)))
        for name, status in zip(URL_SETTINGS, (500, 302, 503), strict=False)
    }
    urls = {
        URL_SETTINGS[name]: api.url.replace("://", f"://searcher:{PASSWORD}@")
        + f"/?api_key={QUERY_KEY}"
        for name, api in apis.items()
    }

    for strategy in ("fallback", "exploratory"):
        config = Settings(
            _env_file=None,
            search_provider="searxng",
            search_fallback_providers="tavily,brave",
            search_strategy=strategy,
            tavily_api_key=TAVILY_KEY,
            brave_api_key=BRAVE_KEY,
            **urls,
        )

        error = await failure(run_search("q", 5, config))

        assert error.message.startswith("every search provider failed: ")
        assert_no_secret(error, caplog.text)
    assert "failed" in caplog.text  # the per-provider warnings were logged, redacted
