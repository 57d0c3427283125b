"""A whole research over a hostile little web: the real worker process searches a SearxNG-shaped
API whose results are half good pages and half hostile ones (tests/support/hostile_web.py), reads them
with the real crawler and extraction, and must come back with a report built only from the good
pages, without ever asking for a disallowed path.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from temporalio.client import Client

from tests.conftest import REPO
from tests.support.hostile_web import BOILERPLATE_MARKERS, HostileWeb
from tests.support.http_doubles import local_server, send_json, serving
from workflows.models import Depth, ResearchRequest, Stage
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

GOOD = [
    "/article",
    "/latin1",
    "/doc.pdf",
    "/plain.txt",
    "/notes.md",
    "/chain/2",
    "/latin1-header",
    "/no-type",
]
HOSTILE = [
    "/slow",
    "/huge",
    "/binary",
    "/loop",
    "/missing",
    "/redirect-to-metadata",
    "/pdf-bomb",
    "/bomb",
]


class FakeSearxng:
    """GET /search?q=...&format=json. Each search gets the next slice of the results (a real
    engine answers different queries differently), so the steps meet every page in turn."""

    def __init__(self, results: list[dict[str, str]]) -> None:
        self.queries: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                params = parse_qs(url.query)
                fake.queries.append(params.get("q", [""])[0])
                status = 200 if url.path == "/search" and params.get("format") == ["json"] else 403
                start = 3 * (len(fake.queries) - 1) % len(results)
                rotated = results[start:] + results[:start]
                send_json(self, status, {"query": params.get("q", [""])[0], "results": rotated})

            def log_message(self, *args: Any) -> None:
                pass

        self.server = local_server(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def web() -> Iterator[HostileWeb]:
    with HostileWeb() as server:
        yield server


@pytest.fixture
def searxng(web: HostileWeb) -> Iterator[FakeSearxng]:
    interleaved = [path for pair in zip(GOOD, HOSTILE, strict=False) for path in pair]
    results = [
        {
            "url": web.url(path),
            "title": f"Result {path}",
            "content": f"About aqueducts and tide pools {path}",
        }
        for path in interleaved
    ]
    fake = FakeSearxng(results)
    with serving(fake.server):
        yield fake


async def test_a_research_over_a_half_hostile_web_uses_only_the_good_pages(
    dev_client: Client,
    subprocess_env: dict[str, str],
    web: HostileWeb,
    searxng: FakeSearxng,
    tmp_path: Path,
) -> None:
    env = {
        **subprocess_env,
        "SEARCH_PROVIDER": "searxng",
        "SEARXNG_URL": searxng.url,
        "CRAWL_ALLOW_PRIVATE": "1",
        "CRAWL_PAGE_TIMEOUT_S": "3",
        "CRAWL_MAX_BYTES": str(2 << 20),
    }
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "worker.py"], cwd=REPO, env=env, stdout=out, stderr=out
        )
    try:
        started = time.monotonic()
        handle = await dev_client.start_workflow(
            DeepResearchWorkflow.run,
            # review_report=never: which good pages a run reaches varies with the fake search's
            # order and the machine's load; a run whose report cites nothing is escalated to a
            # person (auto), which is right for a user and not what this test is about.
            ResearchRequest(
                query="How did Roman aqueducts keep water flowing over long distances?",
                depth=Depth.EXTENDED,
                max_clarifications=0,
                review_report="never",
            ),
            id=f"web-{uuid.uuid4().hex[:8]}",
            task_queue=env["TEMPORAL_TASK_QUEUE"],
        )
        # A report the critic escalates would wait an hour for a person: fail instead of hanging.
        result = await asyncio.wait_for(handle.result(), timeout=180)
        elapsed = time.monotonic() - started
        assert worker.poll() is None, "the worker died"
        peak_mib = _peak_rss_mib(worker.pid)
    finally:
        worker.terminate()
        worker.wait(timeout=30)

    print(
        f"research over a half-hostile web: {elapsed:.1f} s, {result.stats.pages_fetched} pages read, "
        f"{len(result.plan.steps) if result.plan else 0} steps, {sorted(set(h.path for h in web.hits))}, "
        f"{len(result.sources)} sources"
    )
    assert result.outcome is Stage.COMPLETED, log.read_text()
    asked = {h.path for h in web.hits}
    assert len(set(HOSTILE) & asked) >= 5, f"the research met too few hostile pages: {asked}"
    source_paths = {urlparse(s.url).path for s in result.sources}
    assert source_paths and source_paths <= set(GOOD), source_paths
    assert "/private/secret" not in web.paths()
    assert not any(marker in result.report_markdown for marker in BOILERPLATE_MARKERS)
    assert all(s.provider == "searxng" for s in result.sources)
    if "/pdf-bomb" in asked:
        print(f"the worker read a PDF bomb; its own peak RSS: {peak_mib} MiB")
        assert peak_mib < 600


def _peak_rss_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0
