"""The JSON API on a real server over real HTTP, against the Temporal dev server and a worker.

Every refusal is `{"error": "one line"}` with its status; two users never see or touch each other's
research (404, exactly as an unknown id); a page's cross-site write is refused; Temporal down is a
503 within seconds; `serve` will not expose an open app beyond loopback.
"""

from __future__ import annotations

import socket
import time
import uuid
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from settings import Settings
from starter.client import research_client
from starter.web.identity import auth
from starter.web.serve import serve
from tests.starter.web.conftest import (
    QUESTION,
    TOKENS,
    WebServer,
    WebWorker,
    csrf_for,
    one_line_error,
    running_app,
    session_cookie,
    start,
    wait_for,
    web_config,
)
from workflows.models import ResearchRequest

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def waiting_for(what: str) -> Any:
    return lambda body: body.get(what)


def closed(body: dict[str, Any]) -> bool:
    return body.get("status") != "running"


# --- invalid input: one line, 422 ------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "question is required: text of 3 to 5000 characters"),
        ({"question": "ab"}, "the question is empty or too short (at least 3 characters)"),
        ({"question": "x" * 5001}, "the question is too long (5001 characters, at most 5000)"),
        ({"question": 42}, "invalid question 42: use text of 3 to 5000 characters"),
        (
            {"question": QUESTION, "depth": "deep"},
            "invalid depth 'deep': use one of auto, light, medium, extended",
        ),
        (
            {"question": QUESTION, "max_tokens": 0},
            "invalid max_tokens 0: use a whole number from 1 to 100000000",
        ),
        ({"question": QUESTION, "max_cost_usd": -1}, "invalid max_cost_usd -1: use "),
        ({"question": QUESTION, "review_timeout_s": 1e300}, "invalid review_timeout_s "),
        (
            {"question": QUESTION, "language": "Deutsch!"},
            "invalid language 'Deutsch!': use auto or a language code",
        ),
        ({"question": QUESTION, "colour": "blue"}, "unknown option 'colour': use question, "),
        ([QUESTION], "the body must be a JSON object"),
        ("just text", "the body must be a JSON object"),
    ],
)
async def test_a_request_that_cannot_work_is_refused_in_one_line(
    web_server: WebServer, body: Any, message: str
) -> None:
    async with web_server.client() as client:
        response = await client.post("/api/research", json=body)
    assert one_line_error(response, 422).startswith(message)


async def test_a_body_that_is_not_json_is_one_line(web_server: WebServer) -> None:
    async with web_server.client() as client:
        response = await client.post(
            "/api/research", content=b"{oops", headers={"content-type": "application/json"}
        )
        huge = await client.post(
            "/api/research",
            content=b"x" * (300 * 1024),
            headers={"content-type": "application/json"},
        )
    assert one_line_error(response, 422) == "the body is not valid JSON"
    assert one_line_error(huge, 413) == "the request body is larger than 256 KB"


@pytest.mark.parametrize(
    "method, path, body, message",
    [
        ("GET", "/api/research?limit=0", None, "invalid limit: "),
        ("GET", "/api/research?limit=many", None, "invalid limit: "),
        (
            "GET",
            "/api/research?before=yesterday",
            None,
            "invalid before: use the started_at of the last research listed",
        ),
        ("GET", "/api/library?limit=1000", None, "invalid limit: "),
        ("GET", "/api/research/{id}/report?format=exe", None, "invalid format: "),
        ("GET", "/api/research/{id}/events?since=-1", None, "invalid since: "),
        ("POST", "/api/research/{id}/answer", {}, "invalid answer: Field required"),
        ("POST", "/api/research/{id}/answer", {"answer": 3}, "invalid answer: "),
        ("POST", "/api/research/{id}/review", {"decision": "maybe"}, "invalid decision: "),
        (
            "POST",
            "/api/research/{id}/review",
            {"decision": "approve", "steps": [{}]},
            "invalid steps.0.title: ",
        ),
        (
            "POST",
            "/api/research/{id}/review",
            {"decision": "approve", "mood": "good"},
            "invalid mood: ",
        ),
    ],
)
async def test_invalid_parameters_are_one_line(
    web_server: WebServer, method: str, path: str, body: Any, message: str
) -> None:
    async with web_server.client() as client:
        research_id = await start(client, review_plan=True)
        response = await client.request(method, path.format(id=research_id), json=body)
        await client.post(f"/api/research/{research_id}/cancel")
    assert one_line_error(response, 422).startswith(message)


async def test_an_unknown_path_or_method_is_one_line_too(web_server: WebServer) -> None:
    async with web_server.client() as client:
        missing = await client.get("/api/nothing-here")
        wrong = await client.delete("/api/research")
        bad_resume = await client.get(
            "/api/research/whatever/events", headers={"Last-Event-ID": "soon"}
        )
    assert one_line_error(missing, 404) == "Not Found"
    assert one_line_error(wrong, 405) == "Method Not Allowed"
    assert one_line_error(bad_resume, 404) == "no research with id whatever"


# --- who may do what ------------------------------------------------------------------------------


async def test_without_a_valid_token_every_call_is_401(web_server: WebServer) -> None:
    async with web_server.client(user=None) as client:
        missing = await client.get("/api/research")
        wrong = await client.get(
            "/api/research", headers={"Authorization": "Bearer not-a-token-of-anyone"}
        )
        basic = await client.post(
            "/api/research",
            json={"question": QUESTION},
            headers={"Authorization": f"Basic {TOKENS['alice']}"},
        )
        health = await client.get("/api/health")
    assert one_line_error(missing, 401).startswith("sign in: send Authorization: Bearer TOKEN")
    assert missing.headers["www-authenticate"] == "Bearer"
    assert one_line_error(wrong, 401) == "the access token is not valid"
    assert one_line_error(basic, 401) == "the access token is not valid"
    assert health.json() == {"ok": True, "temporal": True}


async def test_a_script_may_say_nobody_attends_the_research_it_starts(
    web_server: WebServer,
) -> None:
    """`attended` (default true: the page shows a review and takes the answer) decides whether an
    `auto` report review may wait for a person."""
    import json

    from settings import data_converter

    async with web_server.client("alice") as alice:
        scripted = await start(alice, attended=False, review_plan=True)
        default = await start(alice, review_plan=True)
        refused = await alice.post("/api/research", json={"question": QUESTION, "attended": "yes"})
        assert one_line_error(refused, 422) == "invalid attended 'yes': use true or false"
    client = await Client.connect(
        web_server.config.temporal.target, data_converter=data_converter()
    )
    for research_id, attended in ((scripted, False), (default, True)):
        handle = client.get_workflow_handle(research_id)
        started = (
            (await handle.fetch_history()).events[0].workflow_execution_started_event_attributes
        )
        assert json.loads(started.input.payloads[0].data)["attended"] is attended
        await handle.cancel()


async def test_two_users_never_see_or_touch_each_others_research(web_server: WebServer) -> None:
    async with web_server.client("alice") as alice, web_server.client("bob") as bob:
        mine = await start(alice, review_plan=True)
        await wait_for(alice, f"/api/research/{mine}", waiting_for("pending_review"))
        theirs = await start(bob, review_plan=True)
        for research_id, other in ((mine, bob), (theirs, alice)):
            unknown = "nobody-" + research_id
            for method, path, body in [
                ("GET", "/api/research/{id}", None),
                ("GET", "/api/research/{id}/events", None),
                ("GET", "/api/research/{id}/report?format=md", None),
                ("POST", "/api/research/{id}/answer", {"answer": "mine now"}),
                ("POST", "/api/research/{id}/review", {"decision": "approve"}),
                ("POST", "/api/research/{id}/cancel", None),
            ]:
                refused = await other.request(method, path.format(id=research_id), json=body)
                same = await other.request(method, path.format(id=unknown), json=body)
                assert one_line_error(refused, 404) == f"no research with id {research_id}", (
                    method,
                    path,
                )
                assert one_line_error(same, 404) == f"no research with id {unknown}"
            # nor can a research or a standing research follow it up: as an unknown id, 404
            unknown_one = f"no research with id {research_id} in the library or in Temporal"
            follow = await other.post(
                "/api/research", json={"question": QUESTION, "follow_up_of": research_id}
            )
            assert one_line_error(follow, 404) == unknown_one
            standing = await other.post(
                "/api/standing",
                json={"question": QUESTION, "every": "1d", "follow_up_of": research_id},
            )
            assert one_line_error(standing, 404) == unknown_one
        listed_by_alice = [row["id"] for row in (await alice.get("/api/research?limit=100")).json()]
        listed_by_bob = [row["id"] for row in (await bob.get("/api/research?limit=100")).json()]
        assert mine in listed_by_alice and theirs not in listed_by_alice
        assert theirs in listed_by_bob and mine not in listed_by_bob
        # Each still waits, untouched, and its owner can steer it.
        shown = (await alice.get(f"/api/research/{mine}")).json()
        assert shown["owner"] == "alice" and shown["pending_review"] == "plan"
        assert (await alice.post(f"/api/research/{mine}/cancel")).status_code == 202
        assert (await bob.post(f"/api/research/{theirs}/cancel")).status_code == 202


async def test_a_cross_site_post_with_a_valid_session_cookie_is_refused(
    web_server: WebServer,
) -> None:
    cookie = session_cookie(web_server, "alice")
    token = csrf_for(web_server, cookie)
    own = web_server.url
    async with httpx.AsyncClient(
        base_url=web_server.url, cookies={auth.COOKIE: cookie}, timeout=30
    ) as page:
        assert (await page.get("/api/research")).status_code == 200  # reading needs only the cookie
        attempts = {
            "cross-site": {
                "Origin": "https://evil.example",
                "Sec-Fetch-Site": "cross-site",
                "X-CSRF-Token": token,
            },
            "same-site sibling": {
                "Origin": "http://127.0.0.1:1",
                "Sec-Fetch-Site": "same-site",
                "X-CSRF-Token": token,
            },
            "no origin at all": {"X-CSRF-Token": token},
            "no CSRF token": {"Origin": own, "Sec-Fetch-Site": "same-origin"},
            "a wrong CSRF token": {
                "Origin": own,
                "Sec-Fetch-Site": "same-origin",
                "X-CSRF-Token": token[:-2] + "xx",
            },
        }
        for name, headers in attempts.items():
            refused = await page.post("/api/research", json={"question": QUESTION}, headers=headers)
            assert one_line_error(refused, 403), name
        accepted = await page.post(
            "/api/research",
            json={"question": QUESTION, "review_plan": True},
            headers={"Origin": own, "Sec-Fetch-Site": "same-origin", "X-CSRF-Token": token},
        )
        assert accepted.status_code == 201, accepted.text
        research_id = accepted.json()["id"]
        assert (
            await page.post(f"/api/research/{research_id}/cancel", headers={"Origin": own})
        ).status_code == 403
        assert (
            await page.post(
                f"/api/research/{research_id}/cancel",
                headers={"Origin": own, "X-CSRF-Token": token},
            )
        ).status_code == 202
    async with web_server.client("alice") as api:  # the API's own clients need no CSRF token
        assert (await api.get(f"/api/research/{research_id}")).json()["owner"] == "alice"


async def test_a_forged_expired_or_revoked_session_cookie_is_not_a_sign_in(
    web_server: WebServer,
) -> None:
    good = session_cookie(web_server, "alice")
    name, expires, session_id, mac = good.split(".")
    bob_name = session_cookie(web_server, "bob").split(".")[0]
    expired = auth._session_value(
        web_server.app.state.backend.access, "alice", int(time.time()) - 1, session_id
    )
    other_key = auth.Access.from_settings(
        Settings(_env_file=None, research_api_tokens="alice:" + "z" * 20)
    )
    for cookie in (
        f"{bob_name}.{expires}.{session_id}.{mac}",
        f"{name}.{int(expires) + 10}.{session_id}.{mac}",
        f"{name}.{expires}.{session_id}x.{mac}",
        expired,
        "garbage",
        auth._session_value(other_key, "alice", int(time.time()) + 60, session_id),
    ):
        async with httpx.AsyncClient(
            base_url=web_server.url, cookies={auth.COOKIE: cookie}
        ) as page:
            assert one_line_error(await page.get("/api/research"), 401)


async def test_with_no_tokens_there_is_one_user_and_browsers_still_need_same_origin(
    open_web_server: WebServer,
) -> None:
    async with open_web_server.client(user=None) as client:
        research_id = await start(client, review_plan=True)  # a script: no Origin, no cookie
        assert (await client.get(f"/api/research/{research_id}")).json()["owner"] == "local"
        cross = await client.post(
            f"/api/research/{research_id}/cancel", headers={"Origin": "https://evil.example"}
        )
        assert one_line_error(cross, 403) == "cross-site request refused"
        fetched = await client.post(
            f"/api/research/{research_id}/cancel",
            headers={"Origin": open_web_server.url, "Sec-Fetch-Site": "same-origin"},
        )
        assert one_line_error(fetched, 403).startswith("missing or invalid CSRF token")
        assert (await client.post(f"/api/research/{research_id}/cancel")).status_code == 202


# --- Temporal away: 503 at once ----------------------------------------------------------------------


async def test_temporal_down_is_a_503_within_seconds(web_worker: WebWorker) -> None:
    config = web_config(web_worker, TOKENS, temporal_address=f"127.0.0.1:{closed_port()}")
    with running_app(config, TOKENS) as server:
        async with server.client() as client:
            for method, path, body in [
                ("POST", "/api/research", {"question": QUESTION}),
                ("GET", "/api/research", None),
                ("GET", "/api/research/research-0000/events", None),
            ]:
                began = time.monotonic()
                response = await client.request(method, path, json=body)
                assert time.monotonic() - began < 6, path
                assert one_line_error(response, 503).startswith(
                    "cannot reach Temporal at 127.0.0.1:"
                ), path
            assert (await client.get("/api/health")).json() == {"ok": True, "temporal": False}


async def test_a_research_no_worker_answers_for_is_a_503_not_a_hang(web_worker: WebWorker) -> None:
    config = web_config(web_worker, TOKENS, temporal_task_queue="no-worker-polls-this")
    with running_app(config, TOKENS) as server:
        async with server.client() as client:
            research_id = await start(client)
            began = time.monotonic()
            response = await client.get(f"/api/research/{research_id}")
            assert time.monotonic() - began < 10
            said = one_line_error(response, 503)  # nobody polls: the advice to start a worker
            assert "did not answer within 5s: no worker polls its task queue" in said
            answered = await client.post(
                f"/api/research/{research_id}/answer", json={"answer": "anything"}
            )
            assert one_line_error(answered, 503).startswith("no worker took the answer within 10s")
            assert (await client.post(f"/api/research/{research_id}/cancel")).status_code == 202


# --- serve ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.org"])
def test_serve_refuses_a_public_address_without_tokens(
    host: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = serve(host, closed_port(), Settings(_env_file=None))
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [
        f"error: refusing to serve on {host} without access control: set "
        "RESEARCH_API_TOKENS (NAME:TOKEN pairs, comma-separated) or bind 127.0.0.1"
    ]


@pytest.mark.parametrize(
    "tokens, message",
    [
        ("alice", "RESEARCH_API_TOKENS: entry 1 is not NAME:TOKEN"),
        (
            "alice:short-secret",
            "RESEARCH_API_TOKENS: the token of alice is shorter than 16 characters",
        ),
        (f"alice:{'s' * 20},alice:{'t' * 20}", "RESEARCH_API_TOKENS: alice is named twice"),
        (
            f"alice:{'s' * 20},bob:{'s' * 20}",
            "RESEARCH_API_TOKENS: bob has the same token as another user",
        ),
    ],
)
def test_serve_refuses_malformed_tokens_in_one_line_without_showing_them(
    tokens: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = serve("0.0.0.0", closed_port(), Settings(_env_file=None, research_api_tokens=tokens))
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith(f"error: {message}")
    assert "short-secret" not in err and "s" * 20 not in err


def test_serve_says_in_one_line_when_the_port_is_taken(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert serve("127.0.0.1", port, Settings(_env_file=None)) == 2
    assert capsys.readouterr().err.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")


# --- steering and reading ------------------------------------------------------------------------------


async def test_a_clarification_is_answered_through_the_validating_update(
    web_server: WebServer,
) -> None:
    async with web_server.client() as client:
        research_id = await start(client, question="Please clarify: the best approach")
        asked = await wait_for(
            client, f"/api/research/{research_id}", waiting_for("pending_question")
        )
        assert (
            asked["status"] == "running"
            and asked["stage"] == "awaiting_answer"
            and asked["owner"] == "alice"
        )
        review = await client.post(
            f"/api/research/{research_id}/review", json={"decision": "approve"}
        )
        assert one_line_error(review, 409) == "review refused: no review is pending"
        empty = await client.post(f"/api/research/{research_id}/answer", json={"answer": "   "})
        assert one_line_error(empty, 422) == "answer refused: the answer is empty"
        taken = await client.post(
            f"/api/research/{research_id}/answer", json={"answer": "the 2024 edition"}
        )
        assert taken.status_code == 200 and taken.json()["accepted"] == "answer accepted"
        again = await client.post(
            f"/api/research/{research_id}/answer", json={"answer": "once more"}
        )
        assert again.status_code == 409, again.text
        done = await wait_for(client, f"/api/research/{research_id}", closed)
    assert done["status"] == "completed" and done["outcome"] == "completed"
    assert done["clarifications"] == [
        {
            "question": "What exactly do you mean by 'Please clarify: the best approach'?",
            "answer": "the 2024 edition",
        }
    ]
    assert done["report_markdown"].startswith("# ")


async def test_a_plan_review_is_refused_when_invalid_and_taken_when_valid(
    web_server: WebServer,
) -> None:
    async with web_server.client() as client:
        research_id = await start(client, review_plan=True)
        await wait_for(client, f"/api/research/{research_id}", waiting_for("pending_review"))
        answer = await client.post(f"/api/research/{research_id}/answer", json={"answer": "hello"})
        assert one_line_error(answer, 409) == "answer refused: no clarification question is pending"
        vague = await client.post(
            f"/api/research/{research_id}/review", json={"decision": "revise"}
        )
        assert (
            one_line_error(vague, 422)
            == "review refused: revise needs feedback (or steps, for a plan)"
        )
        untitled = await client.post(
            f"/api/research/{research_id}/review",
            json={"decision": "approve", "steps": [{"title": " "}]},
        )
        assert one_line_error(untitled, 422) == "review refused: every step needs a title"
        steps = [
            {"title": "What gather returns", "description": "order of results"},
            {"title": "How errors propagate"},
        ]
        approved = await client.post(
            f"/api/research/{research_id}/review", json={"decision": "approve", "steps": steps}
        )
        assert approved.status_code == 200, approved.text
        body = approved.json()
        assert body["accepted"] == "approve accepted: your 2 steps run as you wrote them"
        assert body["pending_review"] is None
        done = await wait_for(client, f"/api/research/{research_id}", closed)
        late = await client.post(
            f"/api/research/{research_id}/review", json={"decision": "approve"}
        )
    assert [s["title"] for s in done["plan"]["steps"]] == [s["title"] for s in steps]
    assert (
        one_line_error(late, 409)
        == f"research {research_id} is already completed: nothing to review"
    )


async def test_cancel_keeps_what_the_research_had_and_a_second_cancel_is_409(
    web_server: WebServer,
) -> None:
    async with web_server.client() as client:
        research_id = await start(client, review_plan=True)
        early = await client.get(f"/api/research/{research_id}/report")
        assert (
            one_line_error(early, 409)
            == f"research {research_id} is still running: its report is not ready yet"
        )
        await wait_for(client, f"/api/research/{research_id}", waiting_for("pending_review"))
        cancelled = await client.post(f"/api/research/{research_id}/cancel")
        assert cancelled.status_code == 202 and cancelled.json() == {
            "id": research_id,
            "cancel_requested": True,
        }
        done = await wait_for(client, f"/api/research/{research_id}", closed)
        again = await client.post(f"/api/research/{research_id}/cancel")
    assert done["outcome"] == "cancelled" and done["report_markdown"]
    assert (
        one_line_error(again, 409)
        == f"research {research_id} is already completed: nothing to cancel"
    )


async def test_a_finished_research_downloads_in_every_format_with_its_citations(
    web_server: WebServer,
) -> None:
    async with web_server.client() as client:
        research_id = await start(client)
        done = await wait_for(client, f"/api/research/{research_id}", closed)
        downloads = {
            fmt: await client.get(f"/api/research/{research_id}/report", params={"format": fmt})
            for fmt in ("md", "html", "docx", "pdf")
        }
    assert done["sources"], done
    expected = {
        "md": "text/markdown",
        "html": "text/html",
        "docx": "application/vnd.openxmlformats",
        "pdf": "application/pdf",
    }
    for fmt, response in downloads.items():
        assert response.status_code == 200, (fmt, response.text[:200])
        assert response.headers["content-type"].startswith(expected[fmt])
        disposition = response.headers["content-disposition"]
        assert disposition.startswith('attachment; filename="') and f'.{fmt}"' in disposition
    assert "[1]" in downloads["md"].text and "<script" not in downloads["html"].text
    assert downloads["pdf"].content.startswith(b"%PDF") and downloads["docx"].content.startswith(
        b"PK"
    )


async def test_the_list_is_newest_first_and_pages_with_before(open_web_server: WebServer) -> None:
    async with open_web_server.client(user=None) as client:
        made = [await start(client, question=f"Paging question number {n}") for n in range(3)]
        for research_id in made:
            await wait_for(client, f"/api/research/{research_id}", closed)
        rows = await wait_for(
            client,
            "/api/research?limit=100",
            lambda body: {r["id"] for r in body if r["status"] == "completed"} >= set(made),
        )
        first = (await client.get("/api/research", params={"limit": 2})).json()
        rest = (
            await client.get(
                "/api/research", params={"limit": 2, "before": first[-1]["started_at"]}
            )
        ).json()
        found = (await client.get("/api/library", params={"q": "PAGING QUESTION number 1"})).json()
    ours = [row for row in rows if row["id"] in made]
    assert [row["id"] for row in ours] == made[::-1]
    assert set(ours[0]) == {
        "id",
        "run_id",  # the client's one row of a person's research (None: the library's alone)
        "question",
        "title",
        "stage",
        "status",
        "owner",
        "started_at",
        "closed_at",
    }
    assert ours[0]["title"] is None
    assert ours[0]["question"] == "Paging question number 2" and ours[0]["owner"] == "local"
    assert ours[0]["stage"] == "completed" and ours[0]["closed_at"].endswith("Z")
    assert [row["id"] for row in first + rest] == [row["id"] for row in rows[:4]]
    assert [entry["id"] for entry in found] == [made[1]]
    assert found[0]["outcome"] == "completed" and found[0]["owner"] == "local"


async def test_another_users_library_is_not_searched(
    web_server: WebServer, open_web_server: WebServer
) -> None:
    async with open_web_server.client(user=None) as local:
        research_id = await start(local, question="A library question only local owns")
        await wait_for(local, f"/api/research/{research_id}", closed)
    async with web_server.client("alice") as alice:
        found = (await alice.get("/api/library", params={"q": "only local owns"})).json()
        shown = await alice.get(f"/api/research/{research_id}")
    assert found == []
    assert one_line_error(shown, 404) == f"no research with id {research_id}"


async def test_every_response_carries_the_security_headers(web_server: WebServer) -> None:
    async with web_server.client() as client:
        responses = [
            await client.get("/api/health"),
            await client.get("/api/nothing"),
            await client.post("/api/research", json={}),
            await client.get("/static/none.css"),
        ]
    for response in responses:
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "same-origin"


async def test_research_started_from_the_cli_belongs_to_research_user(
    web_server: WebServer, open_web_server: WebServer, web_worker: WebWorker, dev_client: Client
) -> None:
    research_id = f"cli-{uuid.uuid4().hex[:8]}"
    request = ResearchRequest(query="A question typed in a terminal", review_plan=True)
    run = research_client.StartResearch(
        request=request, owner=research_client.local_owner(open_web_server.config), id=research_id
    )
    await research_client.start(dev_client, open_web_server.config, run)  # as the CLI does
    async with open_web_server.client(user=None) as local, web_server.client("alice") as alice:
        rows = await wait_for(
            local, "/api/research?limit=100", lambda body: research_id in [r["id"] for r in body]
        )
        shown = await alice.get(f"/api/research/{research_id}")
        assert (await local.post(f"/api/research/{research_id}/cancel")).status_code == 202
    row = next(r for r in rows if r["id"] == research_id)
    assert row["owner"] == "local" and row["question"] == "A question typed in a terminal"
    assert one_line_error(shown, 404) == f"no research with id {research_id}"


async def test_a_bug_is_a_500_in_one_line_with_the_headers(
    web_server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(values: Any, names: Any = None) -> Any:
        raise RuntimeError("a bug\nwith a second line")

    monkeypatch.setattr("starter.client.research_client.build_request", broken)
    async with web_server.client() as client:
        response = await client.post("/api/research", json={"question": QUESTION})
    assert one_line_error(response, 500) == "internal error: the server logged the details"
    assert response.headers["content-security-policy"] == CSP
