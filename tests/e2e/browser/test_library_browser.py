"""Renaming in the library in a browser, with and without JavaScript (the library's own tests:
tests/starter/web/test_library_rename.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.browser.support import Seen, in_browser, shoot
from tests.starter.web.conftest import WebServer, WebWorker
from tests.starter.web.reports import showcase_result, store_research

PHONE = {"viewport": {"width": 400, "height": 860}, "has_touch": True, "is_mobile": True}
WIDE = {"viewport": {"width": 1300, "height": 900}}


def rename_in_library(server: WebServer, tag: str, title: str, shot: str, folder: Path) -> Any:
    """Search the library for TAG, rename the first entry TITLE with its form, and say what the
    page showed: its notice, the entry's link, after a reload too, and the research's heading."""

    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(f"{server.url}/library?q={tag}")
        entry = page.get_by_role("listitem").filter(has_text="water stay clean")
        entry.get_by_role("textbox", name="New title", exact=True).fill(title)
        entry.get_by_role("button", name="Rename", exact=True).click()
        notice = page.get_by_role("status")
        notice.filter(has_text="Renamed").wait_for()
        shoot(page, shot, folder, full_page=True)
        got = {"notice": notice.inner_text(), "url": page.url}
        got["link"] = page.get_by_role("link", name=title, exact=True).count()
        page.reload()
        got["kept"] = page.get_by_role("link", name=title, exact=True).count()
        page.get_by_role("link", name=title, exact=True).click()
        got["heading"] = page.get_by_role("heading", level=1).inner_text()
        got["problems"] = seen.problems()
        return got

    return scenario


def two_researches(db_url: str, tag: str) -> None:
    for question in (f"Did aqueduct water stay clean ({tag})?", f"Who paid for aqueducts ({tag})?"):
        store_research(db_url, showcase_result().model_copy(update={"query": question}), tag)


async def test_a_research_is_renamed_in_the_browser_with_and_without_javascript(
    open_web_server: WebServer, web_worker: WebWorker, tmp_path: Path
) -> None:
    two_researches(web_worker.db_url, "renamejs")
    two_researches(web_worker.db_url, "renamenojs")
    scripted = await in_browser(
        rename_in_library(
            open_web_server, "renamejs", "Aqueduct water quality", "library-rename-1300", tmp_path
        ),
        **WIDE,
    )
    plain = await in_browser(
        rename_in_library(
            open_web_server, "renamenojs", "Clean water, Rome", "library-rename-400", tmp_path
        ),
        java_script_enabled=False,
        **PHONE,
    )
    assert scripted["notice"] == "Renamed to “Aqueduct water quality”."
    assert "renamed=1" not in scripted["url"]  # renamed in place, through the API
    assert (scripted["link"], scripted["kept"]) == (1, 1)
    assert scripted["heading"] == "Aqueduct water quality" and scripted["problems"] == []
    assert plain["notice"] == "Renamed." and plain["url"].endswith("q=renamenojs&renamed=1")
    assert (plain["link"], plain["kept"]) == (1, 1) and plain["heading"] == "Clean water, Rome"
