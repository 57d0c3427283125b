"""/standing in a browser: it fits a phone, reads its next run in words, and asks before Delete
(the page's own tests: tests/starter/web/test_standing_page.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.support import in_browser, shoot
from tests.starter.web.conftest import WebServer, WebWorker
from tests.starter.web.test_standing_page import QUESTION

#: The page's confirm() answers as the test says, and remembers what it was asked.
CONFIRM = "window.__asked = []; window.confirm = (m) => { window.__asked.push(m); return window.__yes === true; };"


def standing_at_two_widths(server: WebServer, folder: Path) -> Any:
    def scenario(page: Any, seen: Any) -> dict[str, Any]:
        page.add_init_script(CONFIRM)
        got: dict[str, Any] = {}
        page.goto(f"{server.url}/standing")
        page.get_by_label("Question").fill(QUESTION + " (browser)")
        page.get_by_label("Every").fill("3d")
        page.get_by_label("Sources").select_option("documents")
        page.get_by_role("button", name="Create standing research").click()
        page.wait_for_url(re.compile(r"/standing\?created=1$"))
        for width in (1300, 400):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{server.url}/standing")
            shoot(page, f"standing-{width}", folder, full_page=True)
            got[width] = page.evaluate(
                "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
            )
        row = page.locator("tr", has_text=QUESTION + " (browser)")
        got["next_run"] = row.locator("time").inner_text()
        row.get_by_role("button", name=re.compile("^Delete")).click()
        got["asked"] = page.evaluate("window.__asked.length")
        got["kept"] = page.locator("tr", has_text=QUESTION + " (browser)").count()
        page.evaluate("window.__yes = true")
        with page.expect_navigation():
            row.get_by_role("button", name=re.compile("^Delete")).click()
        got["after"] = page.locator("tr", has_text=QUESTION + " (browser)").count()
        got["problems"] = seen.problems()
        return got

    return scenario


@pytest.mark.browser
async def test_standing_fits_a_phone_reads_its_times_and_asks_before_delete(
    open_web_server: WebServer, web_worker: WebWorker, tmp_path: Path
) -> None:
    got = await in_browser(standing_at_two_widths(open_web_server, tmp_path))
    assert got[1300] is True and got[400] is True
    assert re.fullmatch(r"\w{3} \d{2} \w{3} \d{4}, \d{2}:\d{2} UTC", got["next_run"])
    assert got["asked"] == 1 and got["kept"] == 1
    assert got["after"] == 0
    assert got["problems"] == []
