"""Deleting research from the library (what peers' users expect): from the library page
with a form (no JavaScript needed) and with `DELETE /api/library/{id}`; someone else's is 404."""

from __future__ import annotations

import html

from tests.starter.web.conftest import WebServer, WebWorker, csrf_for, one_line_error
from tests.starter.web.reports import showcase_result, store_research
from workflows.models import ResearchResult


def owned_by(owner: str) -> ResearchResult:
    return showcase_result().model_copy(
        update={"query": f"Where did Roman aqueducts start ({owner})?", "owner": owner}
    )


async def test_a_research_is_deleted_from_the_library_page_and_the_api(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    by_form = store_research(web_worker.db_url, owned_by("local"), "delete")
    by_api = store_research(web_worker.db_url, owned_by("local"), "delete")
    async with open_web_server.client(None) as client:
        listed = html.unescape((await client.get("/library", params={"q": "aqueducts start"})).text)
        assert f'action="/library/{by_form}/delete"' in listed
        assert "Delete “Where did Roman aqueducts start (local)?” from the library" in listed
        asked = await client.post(
            f"/library/{by_form}/delete",
            data={"csrf": csrf_for(open_web_server), "q": "aqueducts start"},
        )
        assert asked.status_code == 200 and "Are you sure?" in asked.text  # nothing gone yet
        removed = await client.post(
            f"/library/{by_form}/delete",
            data={"csrf": csrf_for(open_web_server), "q": "aqueducts start", "confirmed": "yes"},
        )
        assert removed.status_code == 303
        assert removed.headers["location"] == "/library?q=aqueducts%20start&deleted=1"
        after = (await client.get(removed.headers["location"])).text
        assert "Removed from the library." in after and by_form not in after
        assert (await client.delete(f"/api/library/{by_api}")).status_code == 204
        again = await client.delete(f"/api/library/{by_api}")
        found = [e["id"] for e in (await client.get("/api/library?q=aqueducts")).json()]
    assert by_form not in found and by_api not in found
    assert "no research with id" in one_line_error(again, 404)


async def test_someone_elses_research_cannot_be_deleted(
    web_server: WebServer, web_worker: WebWorker
) -> None:
    bobs = store_research(web_worker.db_url, owned_by("bob"), "delete")
    async with web_server.client("alice") as alice, web_server.client("bob") as bob:
        refused = await alice.delete(f"/api/library/{bobs}")
        still = [e["id"] for e in (await bob.get("/api/library?q=aqueducts")).json()]
    assert one_line_error(refused, 404).startswith("no research with id")
    assert bobs in still
