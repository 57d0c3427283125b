"""The **Check citations** page in Chromium, at 1300 and 400 px: reached from the home
page, the product's own report pasted into **Text**, **Check citations** pressed, the verdicts in
place with their evidence; with JavaScript off too (the page needs none)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.e2e.browser.support import Seen, in_browser, shoot
from tests.starter.web.conftest import running_app
from tests.starter.web.test_check_page import REPORT, settings


async def test_a_report_is_checked_on_the_page(tmp_path: Path) -> None:
    folder = Path(os.environ.get("SHOTS_DIR", tmp_path))

    def at(width: int) -> Any:
        def scenario(page: Any, seen: Seen) -> str:
            page.goto(url)
            page.get_by_role("link", name="Check citations").click()
            page.get_by_role("textbox", name="Text").fill(REPORT)
            shoot(page, f"check-form-{width}", folder, full_page=True)
            page.get_by_role("button", name="Check citations").click()
            page.get_by_role("status").wait_for()
            shoot(page, f"check-{width}", folder, full_page=True)
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            assert not seen.problems(), seen.problems()
            return str(page.get_by_role("status").inner_text())

        return scenario

    with running_app(settings(tmp_path)) as server:
        url = server.url
        wide = await in_browser(at(1300), viewport={"width": 1300, "height": 900})
        narrow = await in_browser(
            at(400), viewport={"width": 400, "height": 800}, java_script_enabled=False
        )
    assert wide.startswith("2 cited sentences: 1 supported, 1 unsupported")
    assert narrow == wide
