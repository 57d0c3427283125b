"""The pages in a real browser (Debian's chromium through Playwright), driven by the names a person
sees: ask, answer the question, edit and approve the plan, watch the log, read the cited report,
download it, reload, follow up, find it in the library; a reload and a dropped stream in the
middle of a research; hostile text that must stay text; an accessibility scan.

Each scenario is a plain function of a page, run in a thread (`in_browser`): the worker of
tests/starter/web/conftest.py runs in this event loop and must keep working while the browser does.
`SCREENSHOTS_DIR=docs/screenshots` also writes the README's screenshots.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.e2e.browser.support import Proxy, Seen, in_browser, shoot
from tests.starter.web.conftest import WebServer, WebWorker, start
from tests.starter.web.reports import PWNED, hostile_result, showcase_result, store_research
from tests.support.hostile_web import HostileWeb

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
QUESTION = "Clarify first: a slow look at how asyncio runs coroutines"
ANSWER = "How asyncio.gather runs several coroutines at once"
STEP_1 = "How the event loop schedules coroutines"
STEP_2 = "What gather returns when one coroutine fails"


def log_seqs(page: Any) -> list[int]:
    return [
        int(n)
        for n in page.locator("#log li").evaluate_all("items => items.map(i => i.dataset.seq)")
    ]


def sign_in(page: Any, server: WebServer, user: str = "alice") -> None:
    page.goto(server.url + "/library")
    assert urlparse(page.url).path == "/signin"
    page.get_by_role("textbox", name="Access token").fill(server.tokens[user])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(server.url + "/library")


def ask(page: Any, question: str, review_plan: bool = True, depth: str = "light") -> str:
    page.get_by_role("textbox", name="Question").fill(question)
    page.get_by_role("combobox", name="Depth").select_option(depth)
    page.get_by_role("checkbox", name="Review the plan before research starts").set_checked(
        review_plan
    )
    page.get_by_role("button", name="Start research").click()
    page.wait_for_url(re.compile(r"/research/[^/]+$"))
    return page.url.rsplit("/", 1)[1]


def edit_and_approve_plan(page: Any) -> None:
    page.get_by_role("textbox", name="Step 1 title").fill(STEP_1)
    page.get_by_role("button", name="Add step").click()
    page.get_by_role("textbox", name="Step 2 title").fill("A step to remove")
    page.get_by_role("button", name="Add step").click()
    page.get_by_role("textbox", name="Step 3 title").fill(STEP_2)
    page.get_by_role("textbox", name="Step 3 description").fill("errors and cancellation")
    page.get_by_role("button", name="Remove step 2").click()
    assert page.get_by_role("textbox", name="Step 2 title").input_value() == STEP_2  # renumbered
    page.get_by_role("button", name="Approve plan").click()


def downloads(page: Any, base: str) -> dict[str, tuple[str, bytes]]:
    got = {}
    for name in ("Download Markdown", "Download HTML", "Download Word", "Download PDF"):
        href = page.get_by_role("link", name=name).get_attribute("href")
        response = page.request.get(base + href)
        assert response.status == 200, (name, response.status, response.text()[:200])
        got[name] = (response.headers["content-type"], response.body())
    return got


def read_report(page: Any) -> dict[str, Any]:
    """The finished report: its plan, and a citation's popover by mouse, then by keyboard."""
    report = page.get_by_role("region", name="Report")
    report.wait_for(timeout=60_000)
    citation = report.locator("a.cite").first
    citation.hover()
    card = page.locator(".source-card:popover-open")
    card.wait_for()
    hovered = card.text_content()
    page.mouse.move(5, 5)
    card.wait_for(state="hidden")
    citation.focus()  # the keyboard shows it too
    page.locator(".source-card:popover-open").wait_for()
    page.keyboard.press("Escape")
    return {"steps": page.locator("#plan-steps .step-title").all_inner_texts(), "hovered": hovered}


def follow_up_and_find(page: Any, server: WebServer, folder: Path) -> dict[str, Any]:
    first = page.url
    page.get_by_role("textbox", name="Ask a follow-up").fill(
        "And how does asyncio.TaskGroup differ?"
    )
    page.get_by_role("button", name="Ask").click()
    page.wait_for_url(lambda url: url != first)
    follow_up = page.get_by_role("heading", level=1).inner_text()
    page.goto(server.url + "/library")
    page.get_by_role("searchbox", name="Search the library").fill("asyncio runs coroutines")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/library\?q="))
    shoot(page, "library", folder)
    return {"follow_up": follow_up, "found": page.locator(".research-list a").all_inner_texts()}


def journey(server: WebServer, folder: Path) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(server.url + "/")
        shoot(page, "home", folder)
        research_id = ask(page, QUESTION)
        page.evaluate("window.notReloaded = true")
        asked = page.get_by_role("textbox", name="Your answer")
        asked.wait_for()
        shoot(page, "clarification", folder)
        asked.fill(ANSWER)
        page.get_by_role("button", name="Send answer").click()

        page.get_by_role("textbox", name="Step 1 title").wait_for()
        shoot(page, "plan-review", folder)
        logged_before = len(log_seqs(page))
        edit_and_approve_plan(page)
        page.locator("#log li.kind-step_started").first.wait_for()
        shoot(page, "running", folder)
        got = read_report(page)
        assert page.evaluate("window.notReloaded") is True  # all of it live, no reload
        assert len(log_seqs(page)) > logged_before

        got["files"] = downloads(page, server.url)
        got["api"] = page.request.get(f"{server.url}/api/research/{research_id}").json()
        page.reload()
        page.get_by_role("region", name="Report").wait_for()
        page.locator("#log li.kind-done").wait_for()
        got["seqs"] = log_seqs(page)
        got.update(follow_up_and_find(page, server, folder))
        return {**got, "problems": seen.problems(), "requests": seen.requests}

    return scenario


async def test_the_whole_journey_in_the_browser(open_web_server: WebServer, tmp_path: Path) -> None:
    got = await in_browser(journey(open_web_server, tmp_path))

    assert got["steps"] == [STEP_1, STEP_2]
    assert "Evidence quoted from it" in got["hovered"] or "Claims citing it" in got["hovered"]
    assert "local" in got["hovered"]
    files = got["files"]
    assert (
        files["Download Markdown"][0].startswith("text/markdown")
        and b"[1]" in files["Download Markdown"][1]
    )
    assert files["Download HTML"][0].startswith("text/html")
    assert files["Download Word"][1][:2] == b"PK" and files["Download PDF"][1][:5] == b"%PDF-"
    assert got["api"]["outcome"] == "completed"
    assert got["seqs"] == list(range(1, len(got["seqs"]) + 1)) and got["seqs"][-1] >= 10
    assert got["follow_up"] == "And how does asyncio.TaskGroup differ?"
    assert QUESTION in got["found"]
    assert got["problems"] == []
    assert all(url.startswith(open_web_server.url) for url in got["requests"]), got["requests"]


# --- a reload and a dropped stream in the middle ----------------------------------------------------


def interrupted(server: WebServer, proxy: Proxy) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        resumed: list[Any] = []  # the requests for the event stream
        page.on("request", lambda r: resumed.append(r) if "/events" in r.url else None)
        page.goto(proxy.url + "/")
        ask(page, "A slow look at how asyncio.gather runs coroutines")
        page.get_by_role("textbox", name="Step 1 title").wait_for()
        before = log_seqs(page)
        page.reload()  # mid-research: everything from the first event again, once
        page.get_by_role("textbox", name="Step 1 title").wait_for()
        page.locator(f'#log li[data-seq="{before[-1]}"]').wait_for()
        reloaded = log_seqs(page)
        streams = len(resumed)
        dropped = proxy.drop()  # the network fails: the page's stream dies while the research waits
        for _ in range(150):  # the browser reconnects by itself (its retry delay is a few seconds)
            if len(resumed) > streams:
                break
            page.wait_for_timeout(100)
        page.get_by_role("button", name="Approve plan").click()
        page.get_by_role("region", name="Report").wait_for(timeout=60_000)
        page.locator("#log li.kind-done").wait_for()
        return {
            "before": before,
            "reloaded": reloaded,
            "after": log_seqs(page),
            "dropped": dropped,
            "resumed": [(r.url, r.header_value("last-event-id")) for r in resumed[streams:]],
            "problems": [p for p in seen.problems() if "net::ERR_" not in p],
        }  # the drop's own

    return scenario


async def test_a_reload_and_a_dropped_stream_mid_research_show_every_event_once(
    open_web_server: WebServer,
) -> None:
    proxy = Proxy(int(urlparse(open_web_server.url).port or 0)).start()
    try:
        got = await in_browser(interrupted(open_web_server, proxy))
    finally:
        proxy.stop()

    assert (
        got["reloaded"][: len(got["before"])]
        == got["before"]
        == list(range(1, len(got["before"]) + 1))
    )
    assert got["after"] == list(range(1, len(got["after"]) + 1)) and len(got["after"]) > len(
        got["reloaded"]
    )
    assert got["dropped"] >= 2  # the stream's connection (both ends) at least
    url, last_event_id = got["resumed"][
        0
    ]  # the browser reconnected by itself, after the last event it had
    assert last_event_id == str(got["reloaded"][-1]) or url.endswith(
        f"since={got['reloaded'][-1]}"
    ), got["resumed"]
    assert got["problems"] == []


# --- hostile text stays text ---------------------------------------------------------------------------


def hostile(server: WebServer, research_id: str) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(f"{server.url}/research/{research_id}")
        report = page.get_by_role("region", name="Report")
        report.wait_for()
        page.locator("#log li.kind-done, #log-state:not([hidden])").first.wait_for()
        for citation in report.locator("a.cite").all():
            citation.hover()
            citation.focus()
        shown = page.locator(".source-card:popover-open").text_content()
        page.goto(f"{server.url}/library?q=Aqueducts")
        page.goto(f"{server.url}/")
        page.wait_for_timeout(300)
        return {
            "pwned": page.evaluate(f"typeof window.{PWNED}"),
            "shown": shown,
            "problems": seen.problems(),
            "requests": seen.requests,
        }

    return scenario


async def test_hostile_pages_quoted_in_a_report_run_nothing_and_load_nothing(
    open_web_server: WebServer,
    web_worker: WebWorker,
) -> None:
    with HostileWeb() as web:
        research_id = store_research(web_worker.db_url, hostile_result(web.base_url), "hostile")
        got = await in_browser(hostile(open_web_server, research_id))
        hits = web.paths()

    assert (
        hits == []
    )  # nothing of the hostile origin was asked for: no image, frame, style, refresh
    assert got["pwned"] == "undefined"
    assert got["problems"] == []  # no dialog, no error, not even a refused inline script
    assert all(url.startswith(open_web_server.url) for url in got["requests"]), got["requests"]
    assert "onerror" in got["shown"]  # the evidence's markup is there, as text


# --- a report review ----------------------------------------------------------------------------------


def review_report(server: WebServer, research_id: str, folder: Path) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(f"{server.url}/research/{research_id}")
        approve = page.get_by_role("button", name="Approve report")
        approve.wait_for(timeout=30_000)
        page.get_by_role("textbox", name="Feedback").fill("Good enough for me.")
        page.locator(".draft > *").first.wait_for()
        shoot(page, "report-review", folder)
        got = {
            "panel": page.locator("#waiting").text_content(),
            "axe": serious(page),
            "revise": page.get_by_role("button", name="Revise report").is_enabled(),
        }
        approve.click()
        page.get_by_role("region", name="Report").wait_for(timeout=30_000)
        page.locator("#log li.kind-done").wait_for()
        return {
            **got,
            "log": page.locator("#log li.kind-review").all_text_contents(),
            "problems": seen.problems(),
        }

    return scenario


async def test_a_report_review_is_answered_in_the_page(
    open_web_server: WebServer, tmp_path: Path
) -> None:
    async with open_web_server.client(None) as client:
        research_id = await start(client, review_report="always")
    got = await in_browser(review_report(open_web_server, research_id, tmp_path))

    assert (
        "Review the report" in got["panel"]
        and "The critic's issues" in got["panel"]
        and got["revise"]
    )
    assert got["axe"] == [] and got["problems"] == []
    assert any("report review: approve Good enough for me." in line for line in got["log"]), got[
        "log"
    ]


# --- signing in, and a page's POST under a session ------------------------------------------------------


def signed_in(server: WebServer, folder: Path) -> dict[str, Any]:
    def scenario(page: Any, seen: Seen) -> dict[str, Any]:
        page.goto(server.url + "/library")
        signin_url = page.url
        page.get_by_role("textbox", name="Access token").fill("not-a-token-at-all-0000")
        page.get_by_role("button", name="Sign in").click()
        refused = page.get_by_role("alert").inner_text()
        shoot(page, "signin", folder)
        page.get_by_role("textbox", name="Access token").fill(server.tokens["alice"])
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(server.url + "/library")
        page.goto(server.url + "/")
        research_id = ask(
            page, "A slow look at how asyncio.gather runs coroutines"
        )  # a POST with the CSRF token
        page.get_by_role("textbox", name="Step 1 title").wait_for()
        page.get_by_role("button", name="Cancel research").click()
        page.get_by_role("region", name="Report").wait_for(timeout=30_000)
        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(re.compile(r"/signin"))
        page.goto(f"{server.url}/research/{research_id}")
        return {
            "signin_url": signin_url,
            "refused": refused,
            "after_signout": page.url,
            "problems": [p for p in seen.problems() if "401" not in p],
        }

    return scenario


async def test_pages_ask_for_a_token_once_and_post_with_the_session(
    web_server: WebServer, tmp_path: Path
) -> None:
    got = await in_browser(signed_in(web_server, tmp_path))

    assert urlparse(got["signin_url"]).path == "/signin" and "next=%2Flibrary" in got["signin_url"]
    assert "not valid" in got["refused"]
    assert urlparse(got["after_signout"]).path == "/signin"
    assert got["problems"] == []


# --- accessibility -------------------------------------------------------------------------------------


def serious(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


def axe_scan(server: WebServer, showcase_id: str, folder: Path) -> dict[str, list[str]]:
    def scenario(page: Any, seen: Seen) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        page.goto(server.url + "/")
        found["home"] = serious(page)
        page.goto(f"{server.url}/library?q=aqueducts")
        found["library"] = serious(page)
        page.goto(f"{server.url}/research/{showcase_id}")
        report = page.get_by_role("region", name="Report")
        report.locator("a.cite").nth(1).hover()
        page.locator(".source-card:popover-open").wait_for()
        shoot(page, "report", folder)
        found["report"] = serious(page)
        page.mouse.move(5, 5)
        page.emulate_media(media="print")
        shoot(page, "report-print", folder, full_page=True)
        page.emulate_media(media="screen")
        page.goto(server.url + "/")
        ask(page, "Clarify this: a slow look at asyncio")
        page.get_by_role("textbox", name="Your answer").fill("How asyncio.gather runs coroutines")
        found["clarification"] = serious(page)
        page.get_by_role("button", name="Send answer").click()
        page.get_by_role("textbox", name="Step 1 title").wait_for()
        found["plan review"] = serious(page)
        page.get_by_role("button", name="Cancel research").click()
        page.get_by_role("region", name="Report").wait_for(timeout=30_000)
        found["cancelled"] = serious(page)
        return found

    return scenario


async def test_no_page_has_a_serious_or_critical_accessibility_violation(
    open_web_server: WebServer,
    web_worker: WebWorker,
    tmp_path: Path,
) -> None:
    showcase_id = store_research(web_worker.db_url, showcase_result(), "showcase")
    found = await in_browser(axe_scan(open_web_server, showcase_id, tmp_path))

    assert set(found) == {"home", "library", "report", "clarification", "plan review", "cancelled"}
    assert {page: problems for page, problems in found.items() if problems} == {}
