"""The research page as people use it, in a real browser: a Stop button on any running
research (3); the stage, plan and report change together at the end, never a stale plan beside
"completed" (5); the keyboard: focus lands where the page asks something and after Approve plan,
Ctrl+Enter sends, stage names are words (15); a phone: one header line, whole steps, a tap on a
citation shows its card (12, 16); without JavaScript the forms still start and answer (4).

Screenshots of the changed pages at 1300 and 400 px go to docs/screenshots/ (`*-1300.png`,
`*-400.png`) when SCREENSHOTS_DIR is set, as the README's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.support import Seen, in_browser, shoot
from tests.starter.web.conftest import WebServer, WebWorker, start
from tests.starter.web.reports import showcase_result, store_research

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
PHONE = {"viewport": {"width": 400, "height": 860}, "has_touch": True, "is_mobile": True}
WIDE = {"viewport": {"width": 1300, "height": 900}}
#: Whenever the stage line changes: what else the page shows at that moment.
WATCH_STAGE = """
window.stages = [];
document.addEventListener("DOMContentLoaded", () => {
  const stage = document.getElementById("stage");
  if (!stage) return;
  new MutationObserver(() => window.stages.push({
    stage: stage.textContent,
    report: Boolean(document.querySelector("[data-report]")),
    inProgress: document.querySelectorAll("#plan-steps .step-in_progress").length,
    progress: document.getElementById("progress-text").textContent,
  })).observe(stage, { childList: true, characterData: true, subtree: true });
});
"""


def ask(page: Any, question: str, review_plan: bool = False) -> str:
    page.get_by_role("textbox", name="Question").fill(question)
    page.get_by_role("combobox", name="Depth").select_option("light")
    page.get_by_role("checkbox", name="Review the plan before research starts").set_checked(
        review_plan
    )
    page.get_by_role("button", name="Start research").click()
    page.wait_for_url(re.compile(r"/research/[^/]+$"))
    return page.url.rsplit("/", 1)[1]


def stop_and_finish(server: WebServer, folder: Path) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.add_init_script(WATCH_STAGE)
        page.goto(server.url + "/")
        ask(page, "A slow look at how lighthouse keepers lived")
        stop = page.get_by_role("button", name="Cancel research")
        stop.wait_for()
        page.locator("#log li.kind-step_started").first.wait_for(timeout=30_000)
        shoot(page, "running-1300", folder)
        stop.click()
        page.get_by_role("region", name="Report").wait_for(timeout=60_000)
        from playwright.sync_api import expect  # only where the browser runs (it may be absent)

        # A locator's wait, not wait_for_function: a string predicate is eval'd, which the page's
        # CSP (script-src 'self') refuses whenever the first check is not already true.
        expect(page.locator("#stage")).to_have_text("cancelled", timeout=30_000)
        got: dict[str, Any] = {
            "cancelled_stop": stop.is_visible(),
            "cancelled_progress": page.locator("#progress-text").inner_text(),
        }
        page.goto(server.url + "/")
        ask(page, "A slow look at how lighthouse lamps were lit")
        page.get_by_role("region", name="Report").wait_for(timeout=60_000)
        expect(page.locator("#stage")).to_have_text("completed", timeout=30_000)
        got["stages"] = page.evaluate("window.stages")
        got["stop_after"] = page.get_by_role("button", name="Cancel research").count()
        got["problems"] = seen.problems()
        return got

    return scenario


async def test_a_running_research_stops_and_a_finished_one_changes_all_at_once(
    open_web_server: WebServer, tmp_path: Path
) -> None:
    got = await in_browser(stop_and_finish(open_web_server, tmp_path), **WIDE)

    assert got["cancelled_stop"] is False
    assert re.match(r"\d+ of \d+ steps done", got["cancelled_progress"])
    completed = [s for s in got["stages"] if s["stage"] == "completed"]
    assert completed, got["stages"]
    assert all(s["report"] and s["inProgress"] == 0 for s in completed), completed
    assert got["stop_after"] == 0 and got["problems"] == []


def keyboard(server: WebServer) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(server.url + "/")
        page.get_by_role("checkbox", name="Review the plan before research starts").check()
        question = page.get_by_role("textbox", name="Question")
        question.focus()
        page.keyboard.type("Clarify first: how did lighthouse keepers live?")
        page.keyboard.press("Control+Enter")
        page.wait_for_url(re.compile(r"/research/[^/]+$"))
        answer = page.get_by_role("textbox", name="Your answer")
        answer.wait_for()
        page.locator("#clarification-answer:focus").wait_for()
        page.keyboard.type("Their daily work and food")
        page.keyboard.press("Control+Enter")
        page.get_by_role("textbox", name="Step 1 title").wait_for()
        page.locator("#step-1-title:focus").wait_for()
        page.get_by_role("button", name="Approve plan").focus()
        page.keyboard.press("Enter")
        page.get_by_role("button", name="Approve plan").wait_for(state="detached")
        page.locator("#log:focus").wait_for()
        page.get_by_role("region", name="Report").wait_for(timeout=60_000)
        page.locator("#log li.kind-done").wait_for()  # the log's whole story, not its first lines
        return {
            "stages": page.locator("#log li.kind-stage .text").all_inner_texts(),
            "problems": seen.problems(),
        }

    return scenario


async def test_the_keyboard_sends_with_ctrl_enter_and_focus_follows_what_is_asked(
    open_web_server: WebServer,
) -> None:
    got = await in_browser(keyboard(open_web_server), **WIDE)

    assert "awaiting plan review" in got["stages"], got["stages"]
    assert not [text for text in got["stages"] if "_" in text.split(":")[0]]
    assert got["problems"] == []


def phone(server: WebServer, research_id: str, folder: Path) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(server.url + "/")
        shoot(page, "home-400", folder, full_page=True)
        header = page.locator("header.site").bounding_box()
        page.goto(f"{server.url}/research/{research_id}")
        report = page.get_by_role("region", name="Report")
        report.wait_for()
        page.locator("#log-state").wait_for(state="visible")  # the stream ended: nothing redraws
        status, title = page.evaluate(
            """() => ["status", "title"].map((part) => {
              const box = document.querySelector(`#plan-steps .step-${part}`).getBoundingClientRect();
              return { y: box.y, height: box.height, width: box.width };
            })"""
        )
        citation = report.locator("a.cite").first
        citation.scroll_into_view_if_needed()
        before = page.url
        citation.tap()
        card = page.locator(".source-card:popover-open")
        card.wait_for()
        shoot(page, "report-400", folder)
        got = {
            "header": header["height"],
            "title_below_status": title["y"] >= status["y"] + status["height"] - 1,
            "title_width": title["width"],
            "card": card.inner_text(),
            "url_kept": page.url == before,
            "height": page.evaluate("document.documentElement.scrollHeight"),
            "sideways": page.evaluate(
                "document.documentElement.scrollWidth > document.documentElement.clientWidth"
            ),
        }
        page.locator("h1").tap()
        card.wait_for(state="hidden")
        shoot(page, "research-400-full", folder, full_page=True)
        return {**got, "problems": seen.problems()}

    return scenario


async def test_a_phone_has_one_header_line_whole_steps_and_citation_cards_on_tap(
    open_web_server: WebServer, web_worker: WebWorker, tmp_path: Path
) -> None:
    research_id = store_research(web_worker.db_url, showcase_result(), "phone")
    got = await in_browser(phone(open_web_server, research_id, tmp_path), **PHONE)

    assert got["header"] < 60, got["header"]
    assert got["title_below_status"] and got["title_width"] > 300
    assert "Evidence quoted from it" in got["card"] and got["url_kept"]
    assert not got["sideways"] and got["problems"] == []


def without_javascript(server: WebServer, folder: Path) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(server.url + "/")
        page.get_by_role("textbox", name="Question").fill("Clarify: how were lighthouse lamps lit?")
        page.get_by_role("button", name="Start research").click()
        page.wait_for_url(re.compile(r"/research/[^/?]+$"))
        answer = page.get_by_role("textbox", name="Your answer")
        for _ in range(100):  # nothing updates by itself: a person reloads
            if answer.count():
                break
            page.wait_for_timeout(200)
            page.reload()
        asked = page.locator(".asked").inner_text()
        shoot(page, "clarification-nojs-1300", folder)
        answer.fill("Oil and later electric lamps")
        page.get_by_role("button", name="Send answer").click()
        page.wait_for_url(re.compile(r"/research/[^/?]+$"))
        stop = page.get_by_role("button", name="Cancel research")
        return {
            "asked": asked,
            "note": page.locator("noscript, .notice").all_inner_texts(),
            "stop": stop.count(),
            "url": page.url,
        }

    return scenario


async def test_without_javascript_the_forms_start_and_answer(
    open_web_server: WebServer, tmp_path: Path
) -> None:
    got = await in_browser(
        without_javascript(open_web_server, tmp_path), java_script_enabled=False, **WIDE
    )

    assert "Clarify: how were lighthouse lamps lit?" in got["asked"]
    assert any("JavaScript is off" in text for text in got["note"]), got["note"]
    assert "?" not in got["url"]


# --- a report reviewed again after its revision ------------------------------


def report_review_rounds(server: WebServer, research_id: str, folder: Path) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(f"{server.url}/research/{research_id}")
        page.get_by_role("button", name="Approve report").wait_for(timeout=30_000)
        first = page.get_by_role("region", name="Review the report").locator(".round").inner_text()
        page.get_by_role("textbox", name="Feedback").fill("Say what is missing")
        page.get_by_role("button", name="Revise report").click()
        page.locator("#waiting .round", has_text="Review round 2 of 3").wait_for(timeout=30_000)
        page.locator(".draft blockquote", has_text="Revised after review").wait_for()
        panel = page.get_by_role("region", name="Review the report").inner_text()
        shoot(page, "report-review-round2-1300", folder)
        page.set_viewport_size({"width": 400, "height": 860})
        page.locator("#waiting").scroll_into_view_if_needed()
        shoot(page, "report-review-round2-400", folder)
        page.set_viewport_size(WIDE["viewport"])
        page.get_by_role("button", name="Approve report").click()
        report = page.get_by_role("region", name="Report")
        report.wait_for(timeout=30_000)
        page.locator("#log li.kind-done").wait_for()
        # Once seen missing in a full run on a busy machine (not reproduced alone, nor under two
        # CPU burners): wait for it a moment, and say what the page showed if it never comes.
        from playwright.sync_api import TimeoutError as NotSeen

        try:
            report.locator(".notice").first.wait_for(timeout=10_000)
        except NotSeen:  # the assertion below says what the page showed instead
            pass
        return {
            "first": first,
            "panel": panel,
            "notice": report.locator(".notice").all_inner_texts(),
            "report": report.inner_text(),
            "log": page.locator("#log li.kind-review").all_text_contents(),
            "problems": seen.problems(),
        }

    return scenario


async def test_a_revised_report_comes_back_for_round_two_and_its_approval_completes_it(
    open_web_server: WebServer, tmp_path: Path
) -> None:
    async with open_web_server.client(None) as client:
        research_id = await start(client, review_report="always")
    got = await in_browser(report_review_rounds(open_web_server, research_id, tmp_path), **WIDE)

    assert got["first"] == "Review round 1 of 3"
    assert "The draft below is the revision you asked for, but it came out the same" in got["panel"]
    assert "Revised after review: “Say what is missing”" in got["panel"]
    assert "shows you the revision for another review round" in got["panel"]
    assert got["notice"] == [
        # the doubles rewrite it as it was: never "rewritten with your feedback"
        "You asked for a revision, but the rewrite came out the same as the draft: the engine "
        "that writes this report could not act on your feedback."
    ], got["report"][:800]
    assert "Revised after review: “Say what is missing”" in got["report"]
    assert any("report review: revise Say what is missing" in line for line in got["log"])
    assert any(line.endswith("report review: approve") for line in got["log"]), got["log"]
    assert got["problems"] == []


def report_rounds_without_javascript(
    server: WebServer, research_id: str, folder: Path
) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        def reload_until(name: str, text: str = "") -> None:
            for _ in range(150):  # nothing updates by itself: a person reloads
                if page.get_by_role("button", name=name).count() and text in page.content():
                    return
                page.wait_for_timeout(200)
                page.reload()
            raise AssertionError(f"no {name!r} {text!r} on the page")

        page.goto(f"{server.url}/research/{research_id}")
        reload_until("Approve report")
        first = page.get_by_role("region", name="Review the report").locator(".round").inner_text()
        page.get_by_role("textbox", name="Feedback").fill("Say what is missing")
        page.get_by_role("button", name="Revise report").click()
        page.wait_for_url(re.compile(r"/research/[^/?]+$"))
        reload_until("Approve report", "Review round 2 of 3")
        panel = page.get_by_role("region", name="Review the report").inner_text()
        shoot(page, "report-review-nojs-1300", folder, full_page=True)
        page.set_viewport_size({"width": 400, "height": 860})
        shoot(page, "report-review-nojs-400", folder, full_page=True)
        page.set_viewport_size(WIDE["viewport"])
        page.get_by_role("button", name="Approve report").click()
        page.wait_for_url(re.compile(r"/research/[^/?]+$"))
        for _ in range(150):
            if page.locator("[data-report]").count():
                break
            page.wait_for_timeout(200)
            page.reload()
        return {
            "first": first,
            "panel": panel,
            "notice": page.locator("[data-report] .notice").all_inner_texts(),
        }

    return scenario


async def test_without_javascript_a_revised_report_is_reviewed_again_and_approved(
    open_web_server: WebServer, tmp_path: Path
) -> None:
    async with open_web_server.client(None) as client:
        research_id = await start(client, review_report="always")
    got = await in_browser(
        report_rounds_without_javascript(open_web_server, research_id, tmp_path),
        java_script_enabled=False,
        **WIDE,
    )

    assert got["first"] == "Review round 1 of 3"
    assert (
        "Review round 2 of 3" in got["panel"]
        and "The draft below is the revision you asked for, but it came out the same"
        in got["panel"]
    )
    assert "Revised after review: “Say what is missing”" in got["panel"]
    assert got["notice"] == [
        # the doubles rewrite it as it was: never "rewritten with your feedback"
        "You asked for a revision, but the rewrite came out the same as the draft: the engine "
        "that writes this report could not act on your feedback."
    ]
