"""What people who use other research tools expect: choosing the mode and the report's
language on the home form, suggested next questions under a report (each fills "Ask a follow-up",
also without JavaScript), a follow-up page that names the question it follows, a dark theme."""

from __future__ import annotations

import html
import re
from urllib.parse import quote

from tests.starter.web.conftest import WebServer, WebWorker, wait_for
from tests.starter.web.reports import SHOWCASE_QUESTION, showcase_result, store_research
from tests.starter.web.test_pages import Page


async def test_the_home_form_chooses_mode_language_and_report_review(
    open_web_server: WebServer,
) -> None:
    async with open_web_server.client(None) as client:
        page = Page.of((await client.get("/")).text)
    selects = {s["id"] for s in page.all("select")}
    labels = {label["for"] for label in page.all("label")}
    assert {"depth", "mode", "language", "review-report"} <= selects <= labels


async def test_a_report_suggests_next_questions_and_a_follow_up_names_what_it_follows(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    research_id = store_research(web_worker.db_url, showcase_result(), "suggest")
    async with open_web_server.client(None) as client:
        page = html.unescape((await client.get(f"/research/{research_id}")).text)
        asked = "Tell me more about distribution"
        assert asked in page
        prefilled = (await client.get(f"/research/{research_id}?ask={quote(asked)}")).text
        assert re.search(rf'id="follow-up-question"[^>]*>{asked}</textarea>', prefilled)
        made = await client.post(
            "/api/research", json={"question": asked, "follow_up_of": research_id}
        )
        follow_up = made.json()["id"]
        await wait_for(client, f"/api/research/{follow_up}", lambda s: True)
        shown = html.unescape((await client.get(f"/research/{follow_up}")).text)
        await client.post(f"/api/research/{follow_up}/cancel")
    assert f'A follow-up to <a href="/research/{research_id}">“{SHOWCASE_QUESTION}”' in shown
