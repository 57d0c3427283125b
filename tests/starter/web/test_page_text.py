"""What pages and downloads show of a report (W11 the HTML download's own CSP and only
http(s) links, W12 bidi and zero-width controls, W15 corpus paths), Last-Event-ID garbage (W9)
and the 404 of another user's research (W16); a standing research's run shows its
changes and the previous report as cleaned as the report."""

from __future__ import annotations

import sysconfig
from datetime import UTC, datetime

import pytest

from starter.client import library
from starter.exports import export
from starter.exports.markup import HTML_CSP
from starter.web.models import ResearchView
from starter.web.pages import research as pages
from tests.starter.web.conftest import WebServer, WebWorker, one_line_error, start, wait_for
from tests.starter.web.reports import _result, store_research
from workflows.models import Depth, QueryMode, ResearchStatus, ReviewTarget, Source, Stage
from workflows.standing_messages import Changes, SourceRef

CONTROLS = "\u202e\u2066\u2069\u200b\u2060\ufeff"
STDLIB = sysconfig.get_paths()["stdlib"]


def report(owner: str = "alice"):  # type: ignore[no-untyped-def]
    sources = [
        Source(id=1, url=f"file://{STDLIB}/asyncio/tasks.py", title="tasks", provider="local"),
        Source(
            id=2, url="file:///srv/secret/corpus/notes.md#page=3", title="notes", provider="local"
        ),
        Source(id=3, url="https://example.org/a", title="web", provider="searxng"),
    ]
    text = (
        f"# Title\n\nPay to evil{CONTROLS[0]}lanigiro [1] and gather{CONTROLS[3]}ing [2] [3].\n\n"
        "[share](file://evil.example/share/x) and [ok](https://example.org/b)\n"
    )
    return _result("What do controls do?", text, sources, [], [], owner=owner)


def test_the_html_download_has_its_own_csp_and_only_http_links() -> None:
    page = export(report(), "html")[0].decode()
    assert f'<meta http-equiv="Content-Security-Policy" content="{HTML_CSP}">' in page
    assert 'href="file:' not in page and "https://example.org/b" in page
    assert "default-src 'none'" in HTML_CSP


async def test_the_report_page_has_no_controls_and_no_server_paths(
    web_server: WebServer, web_worker: WebWorker
) -> None:
    research_id = store_research(web_worker.db_url, report(), "controls")
    async with web_server.client("alice") as alice:
        page = (await alice.get(f"/research/{research_id}")).text
        downloads = [
            (await alice.get(f"/api/research/{research_id}/report?format={fmt}")).content
            for fmt in ("md", "html")
        ]
    for text in (page, *(d.decode() for d in downloads)):
        assert not any(c in text for c in CONTROLS), [c for c in CONTROLS if c in text]
        assert "/srv/secret" not in text and STDLIB not in text
    assert "asyncio/tasks.py" in page and "notes.md" in page


@pytest.mark.parametrize("value", ["\u00b2", "9" * 5000, "-1", "1e3"])
async def test_last_event_id_garbage_is_a_one_line_422_never_a_500(
    web_server: WebServer, value: str
) -> None:
    async with web_server.client("alice") as alice:
        research_id = await start(alice)
        response = await alice.get(
            f"/api/research/{research_id}/events",
            headers={"Last-Event-ID": value.encode("latin-1")},  # type: ignore[dict-item]
        )
    assert "Last-Event-ID" in one_line_error(response, 422)


async def test_another_users_research_and_an_unknown_one_do_the_same_reads(
    web_server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    real = library.store.load_research

    def counted(url: str, research_id: str, version: int | None = None):  # type: ignore[no-untyped-def]
        reads.append(research_id)
        return real(url, research_id, version)

    async with web_server.client("alice") as alice, web_server.client("bob") as bob:
        theirs = await start(alice)
        monkeypatch.setattr(library.store, "load_research", counted)
        for research_id in (theirs, "research-unknown-0000"):
            reads.clear()
            assert (await bob.get(f"/api/research/{research_id}")).status_code == 404
            assert reads == [research_id]


async def test_a_standing_runs_changes_and_previous_report_have_no_controls_and_no_server_paths(
    web_server: WebServer, web_worker: WebWorker
) -> None:
    previous_id = store_research(web_worker.db_url, report(), "previous")
    changes = Changes(
        since_research_id=previous_id,
        since=datetime.now(UTC),
        new_sources=[SourceRef(url="file:///srv/secret/corpus/new.md", title="new")],
        gone_sources=[SourceRef(url=f"file://{STDLIB}/asyncio/tasks.py", title="tasks")],
        new_claims=[f"A claim that says evil{CONTROLS[0]}lanigiro"],
    )
    run = report().model_copy(update={"changes": changes})
    research_id = store_research(web_worker.db_url, run, "run")
    async with web_server.client("alice") as alice:
        page = (await alice.get(f"/research/{research_id}")).text
    assert "What changed since the previous run" in page and "new.md" in page
    assert not any(c in page for c in CONTROLS), [c for c in CONTROLS if c in page]
    assert "/srv/secret" not in page and STDLIB not in page


async def test_the_draft_under_review_is_cleaned_on_the_page_and_in_its_fragment(
    web_server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = ResearchStatus(
        query="What do controls do?",
        stage=Stage.AWAITING_REPORT_REVIEW,
        stage_history=[],
        pending_question=None,
        clarification_count=0,
        plan=None,
        current_step_index=0,
        plan_iterations=0,
        reflections=[],
        sources_count=0,
        depth=Depth.LIGHT,
        mode=QueryMode.DEEP,
        pending_review=ReviewTarget.REPORT,
        draft_report_markdown=f"# Draft\n\nPay to evil{CONTROLS[0]}lanigiro and gather{CONTROLS[3]}ing.",
        owner="alice",
    )

    async def waiting(research_id: str, user: str, app: object) -> ResearchView:
        return ResearchView(id=research_id, owner=user, status="running", live=live)

    monkeypatch.setattr(pages, "_owned_view", waiting)
    async with web_server.client("alice") as alice:
        page = (await alice.get("/research/research-waiting")).text
        fragment = (await alice.get("/research/research-waiting/draft-fragment")).text
    for text in (page, fragment):
        assert "lanigiro" in text
        assert not any(c in text for c in CONTROLS), [c for c in CONTROLS if c in text]


async def test_a_question_the_model_asks_back_is_cleaned_in_the_api_and_on_the_page(
    web_server: WebServer, web_worker: WebWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clarification question is a model's text, as the critic's issues are: the page (its
    form without JavaScript, and the panel the scripts build from the API) never shows a control
    that reorders or hides what a person reads."""
    from workflows import activity_models as m

    monkeypatch.setitem(
        web_worker.script.behaviour,
        "clarify",
        lambda inp: m.ClarifyOutput(question=f"Pay to evil{CONTROLS[0]}lanigiro{CONTROLS[3]}?"),
    )
    async with web_server.client("alice") as alice:
        research_id = await start(alice, question="Clarify: what do controls do?")
        status = await wait_for(
            alice,
            f"/api/research/{research_id}",
            lambda s: s.get("pending_question"),
        )
        page = (await alice.get(f"/research/{research_id}")).text
        await alice.post(f"/api/research/{research_id}/cancel")
    asked = status["pending_question"]
    assert asked == "Pay to evillanigiro?"
    assert "lanigiro" in page and not any(c in page for c in CONTROLS)
