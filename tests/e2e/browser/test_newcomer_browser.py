"""In a real browser: a research whose worker is busy reads "still working" (a quiet
status line, no red alert, no advice to start a worker) at 1300 and 400 px.

Screenshots go to the test's folder (and to SCREENSHOTS_DIR when set).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from tests.e2e.browser.support import Seen, in_browser, shoot
from tests.starter.web.conftest import WebServer, start
from tests.starter.web.test_slow_status import busy_research

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
WIDTHS = {"1300": {"width": 1300, "height": 900}, "400": {"width": 400, "height": 860}}


@pytest.mark.parametrize("width", list(WIDTHS))
async def test_a_busy_research_says_still_working_not_a_red_error(
    open_web_server: WebServer, dev_client: Client, tmp_path: Path, width: str
) -> None:
    research_id = await busy_research(dev_client)

    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(f"{open_web_server.url}/research/{research_id}")
        note = page.locator("#status-note")
        note.wait_for(state="visible")
        page.wait_for_timeout(12_000)  # the page asks again: still a note, never the alert
        shoot(page, f"busy-{width}", tmp_path, full_page=True)
        return {
            "note": note.inner_text(),
            "alert": page.locator("#status-error").is_visible(),
            "debug": page.evaluate(
                '() => [document.getElementById("status-error").outerHTML, document.getElementById("status-note").outerHTML, document.getElementById("log-state").outerHTML]'
            ),
            "text": page.locator("body").inner_text(),
            "errors": [p for p in seen.problems() if "503" not in p],
        }

    seen = await in_browser(scenario, viewport=WIDTHS[width])
    assert "still working" in seen["note"], seen["debug"]
    assert seen["text"].count("still working") == 1, seen["text"]  # said once, not in the log too
    assert not seen["alert"] and "worker.py" not in seen["text"]
    assert seen["errors"] == []


@pytest.mark.parametrize("width", list(WIDTHS))
async def test_the_focus_ring_is_not_an_error_colour_and_the_sources_fit(
    open_web_server: WebServer, tmp_path: Path, width: str
) -> None:
    """Edges: the orange focus ring read like a validation error; the Sources chooser,
    now saying what each choice searches, must still fit a 400 px phone."""

    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(f"{open_web_server.url}/")
        question = page.get_by_role("textbox", name="Question")
        page.keyboard.press("Tab")
        question.focus()
        page.keyboard.type("Tides")
        shoot(page, f"home-focus-{width}", tmp_path)
        ring = question.evaluate("e => getComputedStyle(e).outlineColor")
        chooser = page.get_by_role("combobox", name="Sources").bounding_box()
        form = page.locator("form").first.bounding_box()
        return {
            "ring": ring,
            "overflow": chooser["x"] + chooser["width"] - form["x"] - form["width"],
        }

    seen = await in_browser(scenario, viewport=WIDTHS[width])
    red, green, blue = (int(n) for n in seen["ring"].split("(")[1].split(")")[0].split(",")[:3])
    assert blue > red, seen["ring"]  # not the red-orange of an error
    assert seen["overflow"] <= 0


@pytest.mark.parametrize("width", list(WIDTHS))
async def test_the_plan_follows_the_events_while_the_status_is_busy(
    open_web_server: WebServer, tmp_path: Path, width: str
) -> None:
    """ "No plan yet" stood beside 3 steps done while the status query was slow.
    Here every status answer is "still working" (503 with Retry-After); the plan card and the bar
    follow the plan and step events of the live log."""
    async with open_web_server.client(None) as http:
        research_id = await start(http, question="A slow look at how lighthouse keepers lived")
    busy = {"error": f"research {research_id} is still working: its worker is busy"}

    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.route(
            re.compile(rf".*/api/research/{research_id}$"),
            lambda route: route.fulfill(status=503, headers={"retry-after": "5"}, json=busy),
        )
        page.goto(f"{open_web_server.url}/research/{research_id}")
        page.locator("#log li.kind-step_done").first.wait_for(timeout=30_000)
        page.wait_for_timeout(300)
        shoot(page, f"busy-plan-{width}", tmp_path, full_page=True)
        return {
            "steps": page.locator("#plan-steps li.step").count(),
            "done": page.locator("#plan-steps li.step-completed").count(),
            "none": page.locator("#plan-steps .step-none").count(),
            "bar": page.locator("#progress-text").inner_text(),
            "note": page.locator("#status-note").inner_text(),
        }

    seen = await in_browser(scenario, viewport=WIDTHS[width])
    assert seen["none"] == 0 and seen["steps"] >= 1 and seen["done"] >= 1, seen
    assert f"{seen['done']} of {seen['steps']} steps done" in seen["bar"]
    assert "still working" in seen["note"]
