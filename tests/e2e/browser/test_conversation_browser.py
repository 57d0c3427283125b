"""The conversation view in a browser at 1300 and 400 px: it reads in order and each turn leads
back to its research (the page's own tests: tests/starter/web/test_conversation.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.support import Seen, in_browser, shoot
from tests.e2e.browser.test_browser_use import PHONE, WIDE
from tests.starter.web.conftest import WebServer, WebWorker
from tests.starter.web.reports import SHOWCASE_QUESTION, showcase_result, store_research
from tests.starter.web.test_conversation import SECOND


def read_thread(
    server: WebServer, research_id: str, first: str, name: str, folder: Path
) -> Callable[[Any, Seen], dict[str, Any]]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(f"{server.url}/research/{research_id}")
        thread = page.get_by_role("navigation", name="Conversation")
        thread.wait_for()
        current = thread.locator('[aria-current="page"]').inner_text()
        shoot(page, name, folder)
        sideways = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        thread.get_by_role("link", name=SHOWCASE_QUESTION).click()
        page.wait_for_url(f"**/research/{first}")
        return {
            "current": current,
            "sideways": sideways,
            "arrived": page.get_by_role("heading", level=1).inner_text(),
            "problems": seen.problems(),
        }

    return scenario


@pytest.mark.parametrize("size, options", [("1300", WIDE), ("400", PHONE)])
async def test_the_conversation_reads_and_leads_back_in_a_browser(
    open_web_server: WebServer, web_worker: WebWorker, tmp_path: Path, size: str, options: Any
) -> None:
    first = store_research(web_worker.db_url, showcase_result(), "thread")
    follows = showcase_result().model_copy(update={"query": SECOND, "follow_up_of": first})
    second = store_research(web_worker.db_url, follows, "thread")

    got = await in_browser(
        read_thread(open_web_server, second, first, f"conversation-{size}", tmp_path), **options
    )

    assert got["current"] == SECOND
    assert got["sideways"] is False
    assert got["arrived"] == SHOWCASE_QUESTION
    assert got["problems"] == []
