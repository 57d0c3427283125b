"""Renaming research in the library (what peers' users expect): from the library page
with a form (no JavaScript needed) and with `PATCH /api/library/{id}`; the new title is what the
library, its search, the research's page and the downloads call it; someone else's is 404."""

from __future__ import annotations

import html
import re

from tests.starter.web.conftest import WebServer, WebWorker, csrf_for, one_line_error
from tests.starter.web.reports import showcase_result, store_research
from workflows.models import ResearchResult


def owned_by(owner: str) -> ResearchResult:
    return showcase_result().model_copy(
        update={"query": f"How were Roman aqueducts kept clean ({owner})?", "owner": owner}
    )


def heading(page: str) -> str:
    found = re.search(r"<h1>(.*?)</h1>", page, re.S)
    assert found, page[:500]
    return html.unescape(found.group(1)).strip()


async def test_a_research_is_renamed_from_the_library_page_without_javascript(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    research = store_research(web_worker.db_url, owned_by("local"), "rename")
    async with open_web_server.client(None) as client:
        listed = html.unescape((await client.get("/library", params={"q": "kept clean"})).text)
        assert f'action="/library/{research}/rename"' in listed
        renamed = await client.post(
            f"/library/{research}/rename",
            data={
                "csrf": csrf_for(open_web_server),
                "q": "kept clean",
                "title": "  Clean \u202ewater\u200b of\x1b[31m Rome \n",
            },
        )
        assert renamed.status_code == 303
        assert renamed.headers["location"] == "/library?q=kept%20clean&renamed=1"
        after = html.unescape((await client.get(renamed.headers["location"])).text)
        page = (await client.get(f"/research/{research}")).text
    assert "Renamed." in after
    assert f'<a href="/research/{research}" id="entry-1">Clean water of Rome</a>' in after
    assert heading(page) == "Clean water of Rome"
    assert "Asked as “How were Roman aqueducts kept clean (local)?”" in html.unescape(page)


async def test_a_research_renamed_through_the_api_is_called_so_everywhere(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    research = store_research(web_worker.db_url, owned_by("local"), "rename")
    async with open_web_server.client(None) as client:
        renamed = await client.patch(f"/api/library/{research}", json={"title": "Rome's water"})
        found = (await client.get("/api/library", params={"q": "rome's WATER"})).json()
        shown = (await client.get(f"/api/research/{research}")).json()
        md = await client.get(f"/api/research/{research}/report", params={"format": "md"})
        docx = await client.get(f"/api/research/{research}/report", params={"format": "docx"})
        listed = (await client.get("/api/research", params={"limit": 50})).json()
    assert renamed.status_code == 200
    entry = renamed.json()
    assert (entry["id"], entry["title"]) == (research, "Rome's water")
    assert entry["question"] == "How were Roman aqueducts kept clean (local)?"
    assert [e["id"] for e in found] == [research] and found[0]["title"] == "Rome's water"
    assert shown["title"] == "Rome's water"
    assert shown["report_markdown"].startswith("# Rome's water\n")
    assert md.text.startswith("# Rome's water\n")
    assert 'filename="rome-s-water.md"' in md.headers["content-disposition"]
    assert 'filename="rome-s-water.docx"' in docx.headers["content-disposition"]
    assert {"id": research, "title": "Rome's water"}.items() <= next(
        item for item in listed if item["id"] == research
    ).items()


async def test_a_title_that_is_empty_too_long_or_for_someone_elses_research_is_refused(
    web_server: WebServer, web_worker: WebWorker
) -> None:
    bobs = store_research(web_worker.db_url, owned_by("bob"), "rename")
    async with web_server.client("alice") as alice, web_server.client("bob") as bob:
        theirs = await alice.patch(f"/api/library/{bobs}", json={"title": "Mine now"})
        unknown = await alice.patch("/api/library/rename-nothing-here", json={"title": "Mine"})
        empty = await bob.patch(f"/api/library/{bobs}", json={"title": " \u200b\t "})
        long = await bob.patch(f"/api/library/{bobs}", json={"title": "x" * 201})
        missing = await bob.patch(f"/api/library/{bobs}", json={})
        still = (await bob.get("/api/library", params={"q": "kept clean (bob)"})).json()
    assert one_line_error(theirs, 404) == one_line_error(unknown, 404).replace(
        "rename-nothing-here", bobs
    )
    assert one_line_error(empty, 422) == "the title is empty: use text of 1 to 200 characters"
    assert one_line_error(long, 422) == "the title is too long (201 characters, at most 200)"
    assert one_line_error(missing, 422).startswith("a title is required")
    assert [(e["id"], e["title"]) for e in still] == [
        (bobs, "How were Roman aqueducts kept clean (bob)?")
    ]
