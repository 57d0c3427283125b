"""The pages as HTML, over HTTP from the real server: what they are made of (no inline script or
style, nothing from another origin, every control labelled), what a hostile report becomes (text),
and how a person without a session is sent to sign in and back."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import quote

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from starter.web.presentation.render import REL, render_markdown
from tests.starter.web.conftest import QUESTION, WebServer, WebWorker, start
from tests.starter.web.reports import PWNED, hostile_result, showcase_result, store_research
from tests.support.hostile_web import SCRIPT_MARKER, HostileWeb

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
#: Elements that load or run something: none may come from a report.
ACTIVE = {
    "script",
    "style",
    "img",
    "iframe",
    "frame",
    "object",
    "embed",
    "link",
    "meta",
    "base",
    "form",
    "svg",
    "video",
    "audio",
    "source",
    "input",
    "button",
    "textarea",
    "select",
}


@dataclass
class Page:
    """A page's elements as (tag, attributes), and the text inside its script elements."""

    elements: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    script_text: str = ""

    @classmethod
    def of(cls, html: str) -> Page:
        page = cls()
        parser = _Parser(page)
        parser.feed(html)
        return page

    def all(self, tag: str) -> list[dict[str, str]]:
        return [attrs for t, attrs in self.elements if t == tag]

    @property
    def ids(self) -> set[str]:
        return {attrs["id"] for _, attrs in self.elements if "id" in attrs}


class _Parser(HTMLParser):
    def __init__(self, page: Page) -> None:
        super().__init__()
        self.page, self.in_script = page, False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.page.elements.append((tag, {k: v or "" for k, v in attrs}))
        self.in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script:
            self.page.script_text += data


def assert_inert_and_self_contained(page: Page) -> None:
    """No inline script or style, no handler attribute, nothing loaded from elsewhere."""
    assert page.script_text.strip() == ""
    for tag, attrs in page.elements:
        assert not [
            a for a in attrs if a.startswith("on") or a in ("style", "srcdoc", "formaction")
        ], (tag, attrs)
        assert tag not in ("style", "img", "iframe", "object", "embed", "base", "svg"), (tag, attrs)
        if tag == "script":
            assert attrs.get("src", "").startswith("/static/") and attrs.get("type") == "module", (
                attrs
            )
        if tag == "link":
            assert attrs["href"].startswith("/static/"), attrs
        if tag == "a":
            href = attrs.get("href", "")
            assert href.startswith(("#", "/", "http://", "https://")) and not href.startswith(
                "//"
            ), attrs
            if href.startswith("http"):
                assert attrs.get("rel") == REL, attrs


# --- the renderer ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markdown", "present", "absent"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;", "<script"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;", "<img"),
        (
            "![pixel](https://tracker.example/p.png)",
            '<a href="https://tracker.example/p.png"',
            "<img",
        ),
        ("![pixel](data:image/png;base64,AAAA)", "![pixel](data:image/png;base64,AAAA)", "<img"),
        ("[x](javascript:alert(1))", "[x](javascript:alert(1))", 'href="javascript'),
        ("[x](JaVaScRiPt:alert(1))", "[x](JaVaScRiPt:alert(1))", 'href="JaVa'),
        ("[x](data:text/html,<script>alert(1)</script>)", "[x](data:text/html,", 'href="data'),
        ("[x](//evil.example/a)", "[x](//evil.example/a)", 'href="//'),
        ("[x](file:///etc/passwd)", "[x](file:///etc/passwd)", 'href="file'),
        ("<https://example.org/a>", f'href="https://example.org/a" rel="{REL}"', "<script"),
        ('[x](https://example.org "t [1]")', 'title="t [1]"', "cite"),
        ("[see [1]](https://example.org)", ">see [1]</a>", "cite"),
        ("| a |\n|--:|\n| 1 |", '<td class="align-right">1</td>', "style="),
        ("# Title", "<h2>Title</h2>", "<h1"),
        ("A claim [1, 9].", 'href="#source-1"', 'href="#source-9"'),
    ],
)
def test_markdown_becomes_safe_html(markdown: str, present: str, absent: str) -> None:
    html = str(render_markdown(markdown, {1: "https://example.org/one"}))
    assert present in html and absent not in html, html


def test_a_citation_names_its_source_and_is_described_by_its_card() -> None:
    html = str(render_markdown("Tanks settle sand [1].", {1: "https://example.org/one"}))
    link = Page.of(html).all("a")[0]
    assert link == {
        "class": "cite",
        "href": "#source-1",
        "aria-label": "Source 1",
        "aria-describedby": "source-1-card",
        "data-url": "https://example.org/one",
        "rel": REL,
    }


# --- the pages -------------------------------------------------------------------------------------------


async def test_every_page_has_the_policy_and_nothing_inline(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    research_id = store_research(web_worker.db_url, showcase_result(), "showcase")
    async with open_web_server.client(None) as client:
        for path in (
            "/",
            "/library",
            "/library?q=aqueducts",
            "/signin",
            f"/research/{research_id}",
            f"/research/{research_id}/report-fragment",
            "/research/no-such-research",
        ):
            response = await client.get(path)
            assert response.status_code in (200, 404), (path, response.status_code)
            assert response.headers["content-security-policy"] == CSP and "unsafe" not in CSP
            assert_inert_and_self_contained(Page.of(response.text))


async def test_a_hostile_report_is_text_on_its_page(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    with HostileWeb() as web:
        research_id = store_research(web_worker.db_url, hostile_result(web.base_url), "hostile")
        async with open_web_server.client(None) as client:
            page_html = (await client.get(f"/research/{research_id}")).text
            fragment = (await client.get(f"/research/{research_id}/report-fragment")).text
        assert web.hits == []

    for html in (page_html, fragment):
        page = Page.of(html)
        assert_inert_and_self_contained(page)
        assert PWNED not in page.script_text and "javascript:" not in str(page.all("a"))
        assert not [
            a
            for a in page.all("a")
            if web.base_url.split("//")[1] in a.get("href", "") and a.get("rel") != REL
        ]
        described = {a["aria-describedby"] for a in page.all("a") if "aria-describedby" in a}
        assert (
            described == {"source-1-card", "source-2-card", "source-3-card"}
            and described <= page.ids
        )
        assert "&lt;script&gt;window.pwned" in html and SCRIPT_MARKER in html  # shown, as text
    assert (
        '<span class="mark mark-local">local</span>' in fragment
        and '<span class="mark mark-web">web</span>' in fragment
    )
    assert "<title>Aqueducts &lt;script&gt;" in page_html


async def test_the_library_and_home_show_questions_as_text(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    research_id = store_research(web_worker.db_url, hostile_result("http://127.0.0.1:9"), "hostile")
    async with open_web_server.client(None) as client:
        library = await client.get("/library", params={"q": "<script>alert(1)</script>"})
        found = await client.get("/library", params={"q": "Aqueducts"})
        home = await client.get("/")
    assert (
        "<script>alert(1)" not in library.text
        and "&lt;script&gt;alert(1)&lt;/script&gt;" in library.text
    )
    assert (
        f'href="/research/{research_id}"' in found.text
        and f'href="/research/{research_id}"' in home.text
    )
    for response in (library, found, home):
        assert_inert_and_self_contained(Page.of(response.text))


async def test_the_home_page_names_its_controls(open_web_server: WebServer) -> None:
    async with open_web_server.client(None) as client:
        page = Page.of((await client.get("/")).text)
    labels = {attrs["for"] for attrs in page.all("label")}
    controls = {
        attrs["id"]
        for tag, attrs in page.elements
        if tag in ("textarea", "select", "input") and "id" in attrs
    }
    assert controls <= labels and {"question", "depth", "review-plan"} <= controls
    assert [o["value"] for o in page.all("option")][:4] == ["auto", "light", "medium", "extended"]
    assert page.all("meta")[2]["name"] == "csrf-token" and page.all("meta")[2]["content"]


async def test_an_unknown_research_is_a_404_page_and_a_running_one_has_no_report_yet(
    web_server: WebServer,
) -> None:
    async with web_server.client("alice") as client:
        missing = await client.get("/research/no-such-research")
        started = await client.post(
            "/api/research", json={"question": "A slow look at asyncio", "review_plan": True}
        )
        research_id = started.json()["id"]
        fragment = await client.get(f"/research/{research_id}/report-fragment")
        await client.post(f"/api/research/{research_id}/cancel")
    assert missing.status_code == 404 and "No such research" in missing.text
    assert fragment.status_code == 409 and "has not finished" in fragment.text


async def test_a_research_that_ended_without_a_result_says_so_where_the_report_would_be(
    open_web_server: WebServer,
    dev_env: WorkflowEnvironment,
) -> None:
    async with open_web_server.client(None) as client:
        research_id = await start(client, review_plan=True)
        await dev_env.client.get_workflow_handle(research_id).terminate("stopped by an operator")
        page = await client.get(f"/research/{research_id}")
        fragment = await client.get(f"/research/{research_id}/report-fragment")
    for response in (page, fragment):
        assert (
            response.status_code == 200 and "This research ended without a report" in response.text
        )
        assert 'aria-label="Report"' in response.text


async def test_someone_elses_research_is_no_page_at_all(web_server: WebServer) -> None:
    async with web_server.client("alice") as alice, web_server.client("bob") as bob:
        research_id = await start(alice, review_plan=True)
        own = await alice.get(f"/research/{research_id}")
        other = [
            await bob.get(f"/research/{research_id}{part}")
            for part in ("", "/report-fragment", "/draft-fragment")
        ]
        await alice.post(f"/api/research/{research_id}/cancel")
    assert own.status_code == 200 and f"<h1>{QUESTION}</h1>" in own.text
    assert [r.status_code for r in other] == [404, 404, 404]
    assert (
        "No such research" in other[0].text
        and research_id not in other[0].text.split("<main", 1)[1]
    )


# --- signing in ----------------------------------------------------------------------------------------


async def test_without_a_session_a_page_asks_for_the_token_and_comes_back(
    web_server: WebServer,
) -> None:
    async with httpx.AsyncClient(base_url=web_server.url, follow_redirects=False) as browser:
        asked = await browser.get("/library?q=x")
        assert (
            asked.status_code == 303
            and asked.headers["location"] == f"/signin?next={quote('/library?q=x', safe='')}"
        )
        form = await browser.get(asked.headers["location"])
        assert (
            'name="next" value="/library?q=x"' in form.text
            and 'for="token">Access token' in form.text
        )

        wrong = await browser.post(
            "/signin", data={"token": "wrong-token-0123456789", "next": "/library"}
        )
        assert (
            wrong.status_code == 401
            and "not valid" in wrong.text
            and "wrong-token" not in wrong.text
        )

        right = await browser.post(
            "/signin", data={"token": web_server.tokens["alice"], "next": "/library?q=x"}
        )
        assert right.status_code == 303 and right.headers["location"] == "/library?q=x"
        assert (
            "httponly" in right.headers["set-cookie"].lower()
            and "samesite=strict" in right.headers["set-cookie"].lower()
        )
        shown = await browser.get("/library?q=x")
        assert shown.status_code == 200 and "Signed in as alice" in shown.text

        csrf = Page.of(shown.text).all("meta")[2]["content"]
        refused = await browser.post("/signout", data={"csrf": "forged"})
        assert refused.status_code == 403
        out = await browser.post("/signout", data={"csrf": csrf})
        assert out.status_code == 303 and (await browser.get("/")).status_code == 303


@pytest.mark.parametrize(
    "target",
    ["//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"],
)
async def test_signing_in_never_sends_a_person_to_another_site(
    web_server: WebServer, target: str
) -> None:
    async with httpx.AsyncClient(base_url=web_server.url, follow_redirects=False) as browser:
        response = await browser.post(
            "/signin", data={"token": web_server.tokens["bob"], "next": target}
        )
    assert response.status_code == 303 and response.headers["location"] == "/"
