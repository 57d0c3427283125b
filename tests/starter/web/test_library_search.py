"""The library finds research by what it is about: a research that began as
"Tell me more about it" and was clarified as lighthouse keepers is found by "lighthouse", and a
report's own words find it too; and with Temporal away the home page still lists the library's
research (item 17)."""

from __future__ import annotations

import html

from tests.starter.web.conftest import WebServer, WebWorker, running_app, web_config
from tests.starter.web.reports import showcase_result, store_research
from tests.starter.web.test_api import closed_port
from workflows.models import Clarification


def vague_then_clarified():  # type: ignore[no-untyped-def]
    return showcase_result().model_copy(
        update={
            "query": "Tell me more about it",
            "clarifications": [
                Clarification(question="What do you mean by it?", answer="Lighthouse keepers")
            ],
            "report_markdown": "# Keepers\n\nThey trimmed the wicks every four hours and "
            "logged the weather [1].\n",
        }
    )


async def test_the_library_finds_by_the_clarified_topic_and_the_report_text(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    research_id = store_research(web_worker.db_url, vague_then_clarified(), "keepers")
    async with open_web_server.client(None) as client:
        by_topic = await client.get("/api/library", params={"q": "lighthouse"})
        by_words = await client.get("/api/library", params={"q": "trimmed the WICKS"})
        page = await client.get("/library", params={"q": "LIGHTHOUSE keepers"})
        nothing = await client.get("/api/library", params={"q": "zebra crossings"})
    assert research_id in [e["id"] for e in by_topic.json()]
    assert research_id in [e["id"] for e in by_words.json()]
    assert f'href="/research/{research_id}"' in page.text
    assert research_id not in [e["id"] for e in nothing.json()]


async def test_with_temporal_away_the_home_page_lists_the_library(web_worker: WebWorker) -> None:
    research_id = store_research(web_worker.db_url, showcase_result(), "away")
    config = web_config(web_worker, temporal_address=f"127.0.0.1:{closed_port()}")
    with running_app(config) as server:
        async with server.client(None) as client:
            home = await client.get("/")
    assert home.status_code == 200
    assert f'href="/research/{research_id}"' in home.text
    assert "cannot reach Temporal" in html.unescape(home.text)
