"""The pages as people see them: a dark system gets a dark page; the home page and the library fit
a phone and a wide window (the pages' own tests: tests/starter/web/test_peers_expect.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.support import Seen, in_browser, shoot
from tests.starter.web.conftest import WebServer, WebWorker
from tests.starter.web.reports import showcase_result, store_research


def dark(server: WebServer, research_id: str, folder: Path) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(f"{server.url}/research/{research_id}")
        page.get_by_role("region", name="Report").wait_for()
        page.get_by_role("link", name="Tell me more about distribution").click()
        filled = page.get_by_role("textbox", name="Ask a follow-up").input_value()
        shoot(page, "report-dark-1300", folder)
        return {
            "background": page.evaluate(
                "getComputedStyle(document.documentElement).backgroundColor"
            ),
            "filled": filled,
            "focused": page.evaluate("document.activeElement.id"),
            "problems": seen.problems(),
        }

    return scenario


@pytest.mark.e2e
async def test_a_dark_system_gets_a_dark_page(
    open_web_server: WebServer, web_worker: WebWorker, tmp_path: Path
) -> None:
    research_id = store_research(web_worker.db_url, showcase_result(), "dark")
    got = await in_browser(
        dark(open_web_server, research_id, tmp_path),
        color_scheme="dark",
        viewport={"width": 1300, "height": 900},
    )
    red, green, blue = (int(n) for n in re.findall(r"\d+", got["background"])[:3])
    assert max(red, green, blue) < 60, got["background"]
    assert got["filled"] == "Tell me more about distribution"
    assert got["focused"] == "follow-up-question" and got["problems"] == []


def library_and_home(server: WebServer, folder: Path) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        got = {}
        for width in (1300, 400):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{server.url}/")
            shoot(page, f"home-{width}", folder, full_page=True)
            page.goto(f"{server.url}/library?q=aqueducts")
            shoot(page, f"library-{width}", folder)
            got[width] = page.evaluate(
                "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
            )
        deletes = page.get_by_role("button", name=re.compile(r"^Delete “"))
        return {"fits": got, "deletes": deletes.count(), "problems": seen.problems()}

    return scenario


@pytest.mark.e2e
async def test_the_home_and_library_fit_a_phone_and_a_wide_window(
    open_web_server: WebServer, web_worker: WebWorker, tmp_path: Path
) -> None:
    store_research(web_worker.db_url, showcase_result(), "shots")
    got = await in_browser(library_and_home(open_web_server, tmp_path))

    assert got["fits"] == {1300: True, 400: True} and got["deletes"] >= 1
    assert got["problems"] == []
