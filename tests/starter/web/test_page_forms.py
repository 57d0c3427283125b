"""The pages without JavaScript and the API through curl: the
forms post and do what the page's script does (start, answer, review, cancel, follow up), a
running research has a **Cancel research** control, a research cancelled at its plan is not a
full bar, a JSON body is JSON whatever its content type, `{}` names the missing question, and a
cancelled research reads `cancelled`."""

from __future__ import annotations

import html
import re

import httpx

from tests.starter.web.conftest import WebServer, csrf_for, one_line_error, start, wait_for
from tests.starter.web.test_pages import Page


def visible(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


async def form_post(server: WebServer, path: str, **fields: str) -> httpx.Response:
    async with server.client(None) as client:
        return await client.post(path, data={"csrf": csrf_for(server), **fields})


async def test_the_question_form_starts_a_research_without_javascript(
    open_web_server: WebServer,
) -> None:
    async with open_web_server.client(None) as client:
        home = Page.of((await client.get("/")).text)
    form = home.all("form")[0]
    assert form.get("method") == "post" and form.get("action") == "/research"
    started = await form_post(
        open_web_server,
        "/research",
        question="Clarify: a slow look at lighthouse lamps",
        depth="light",
        review_report="always",
    )
    assert started.status_code == 303, started.text
    page_path = started.headers["location"]
    assert re.fullmatch(r"/research/[^/]+", page_path)
    research_id = page_path.rsplit("/", 1)[1]
    async with open_web_server.client(None) as client:
        status = await wait_for(
            client, f"/api/research/{research_id}", lambda s: s.get("pending_question")
        )
        page = html.unescape((await client.get(page_path)).text)
    # the question asked and a form to answer it, for a browser without JavaScript
    noscript = page.split("<noscript>", 2)[2] if page.count("<noscript>") > 1 else page
    assert status["pending_question"] in page
    assert 'action="/research/' + research_id + '/answer"' in noscript
    assert "Your answer" in noscript and "Send answer" in noscript
    assert "JavaScript is off" in page  # what needs it, said plainly
    answered = await form_post(
        open_web_server, f"/research/{research_id}/answer", answer="Their oil lamps"
    )
    assert answered.status_code == 303 and answered.headers["location"] == page_path
    async with open_web_server.client(None) as client:
        await wait_for(
            client, f"/api/research/{research_id}", lambda s: not s.get("pending_question")
        )
    stopped = await form_post(open_web_server, f"/research/{research_id}/cancel")
    assert stopped.status_code == 303
    async with open_web_server.client(None) as client:
        closed = await wait_for(
            client, f"/api/research/{research_id}", lambda s: not s.get("running"), timeout=60
        )
    assert closed["status"] == "cancelled" and closed["outcome"] == "cancelled"


async def test_a_form_from_elsewhere_or_without_its_token_is_refused_in_one_line(
    open_web_server: WebServer,
) -> None:
    async with open_web_server.client(None) as client:
        forged = await client.post("/research", data={"question": "How do lighthouses work?"})
        cross = await client.post(
            "/research",
            data={"csrf": csrf_for(open_web_server), "question": "How do lighthouses work?"},
            headers={"Sec-Fetch-Site": "cross-site"},
        )
        short = await client.post(
            "/research", data={"csrf": csrf_for(open_web_server), "question": "x"}
        )
    assert forged.status_code == 403 and "Refused" in forged.text
    assert cross.status_code == 403
    assert short.status_code == 422 and "too short" in visible(short.text)
    assert "Traceback" not in short.text


async def test_a_running_research_has_a_cancel_control_and_a_plan_cancelled_is_no_full_bar(
    open_web_server: WebServer,
) -> None:
    async with open_web_server.client(None) as client:
        research_id = await start(client, question="A slow look at lighthouse keepers")
        running = Page.of((await client.get(f"/research/{research_id}")).text)
        reviewed = await start(client, question="How did lighthouse lamps work?", review_plan=True)
        await wait_for(client, f"/api/research/{reviewed}", lambda s: s.get("pending_review"))
        at_plan = (await client.get(f"/research/{reviewed}")).text
        await client.post(f"/api/research/{reviewed}/review", json={"decision": "cancel"})
        await client.post(f"/api/research/{research_id}/cancel")
        closed = await wait_for(
            client, f"/api/research/{reviewed}", lambda s: not s.get("running"), timeout=60
        )
        cancelled_page = (await client.get(f"/research/{reviewed}")).text
    stop = [f for f in running.all("form") if f.get("action", "").endswith("/cancel")]
    assert stop and stop[0].get("method") == "post" and "hidden" not in stop[0]
    # at a plan review the review's own Cancel research is the one (no second control)
    assert re.search(r'<form id="stop"[^>]*hidden', at_plan)
    planned = len(closed["plan"]["steps"])
    assert closed["status"] == "cancelled"
    said = re.search(r'id="progress-text"[^>]*>([^<]*)<', cancelled_page).group(1)
    assert said.startswith(f"0 of {planned} steps done"), said
    assert f"{planned} of {planned} steps done" not in cancelled_page


async def test_a_json_body_is_json_whatever_its_content_type(open_web_server: WebServer) -> None:
    async with open_web_server.client(None) as client:
        typed_form = await client.post(
            "/api/research",
            content=b'{"question": "How did lighthouse keepers live?", "review_plan": true}',
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        untyped = await client.post(
            "/api/research",
            content=b'{"question": "How were lighthouse lamps lit?", "review_plan": true}',
            headers={"Content-Type": ""},
        )
        empty = await client.post("/api/research", json={})
        garbage = await client.post(
            "/api/research", content=b"question=hi", headers={"Content-Type": "text/plain"}
        )
        for made in (typed_form, untyped):
            assert made.status_code == 201, made.text
            await client.post(f"/api/research/{made.json()['id']}/cancel")
    assert one_line_error(empty, 422).startswith("question is required")
    assert one_line_error(garbage, 422) == "the body is not valid JSON"


async def test_without_javascript_the_plan_review_form_revises_and_approves_the_plan(
    open_web_server: WebServer,
) -> None:
    async with open_web_server.client(None) as client:
        research_id = await start(client, review_plan=True)
        path = f"/api/research/{research_id}"
        await wait_for(client, path, lambda s: s.get("pending_review") == "plan")
        page = html.unescape((await client.get(f"/research/{research_id}")).text)
    noscript = page.split("<noscript>", 2)[2] if page.count("<noscript>") > 1 else page
    form = Page.of(noscript).all("form")[0]
    assert form.get("action") == f"/research/{research_id}/review"
    assert "Review round 1 of 3" in visible(noscript)
    assert [b for b in ("Approve plan", "Revise plan", "Cancel research") if b in noscript] == [
        "Approve plan",
        "Revise plan",
        "Cancel research",
    ]
    assert '<label for="plan-feedback">Feedback</label>' in noscript
    revised = await form_post(
        open_web_server,
        f"/research/{research_id}/review",
        decision="revise",
        feedback="Add a step on the keepers' food",
    )
    assert revised.status_code == 303
    async with open_web_server.client(None) as client:
        again = await wait_for(client, path, lambda s: s.get("review_rounds") == 2)
        assert again["pending_review"] == "plan"
        approved = await form_post(
            open_web_server, f"/research/{research_id}/review", decision="approve"
        )
        assert approved.status_code == 303
        done = await wait_for(client, path, lambda s: not s.get("running"), timeout=60)
    assert done["outcome"] == "completed"
    assert [r["decision"] for r in done["reviews"]] == ["revise", "approve"]
