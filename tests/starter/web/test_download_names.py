"""A renamed research is shown under its new title. The HTML download's `<title>`
is the title its owner gave it, not the question; a title in another script keeps its letters in
the download's file name (RFC 6266: `filename*=UTF-8''...`, an ASCII `filename=` beside it for older
clients); a later run of a standing research shows the previous run under its new title."""

from __future__ import annotations

import re
from urllib.parse import unquote

from storage import store
from tests.starter.web.conftest import WebServer, WebWorker
from tests.starter.web.reports import _result, store_research

TITLE = "Журавли над болотом: 鶴の渡り"


async def test_a_renamed_research_downloads_under_its_title_in_its_own_letters(
    web_server: WebServer, web_worker: WebWorker
) -> None:
    result = _result("Where do cranes winter?", "# Where do cranes winter?\n\nSouth.", [], [], [])
    research_id = store_research(
        web_worker.db_url, result.model_copy(update={"owner": "alice"}), "cranes"
    )
    store.rename_research(web_worker.db_url, research_id, "alice", TITLE)
    async with web_server.client("alice") as alice:
        html = await alice.get(f"/api/research/{research_id}/report?format=html")
        md = await alice.get(f"/api/research/{research_id}/report?format=md")
    assert re.search(r"<title>(.*?)</title>", html.text).group(1) == TITLE  # type: ignore[union-attr]
    for response, ext in ((html, "html"), (md, "md")):
        disposition = response.headers["content-disposition"]
        fallback = re.search(r'filename="([^"]*)"', disposition).group(1)  # type: ignore[union-attr]
        utf8 = unquote(disposition.split("filename*=UTF-8''", 1)[1])
        assert utf8 == f"журавли-над-болотом-鶴の渡り.{ext}"
        assert fallback.isascii() and fallback.endswith(f".{ext}")


async def test_a_standing_runs_page_shows_the_previous_run_under_its_new_title(
    web_server: WebServer, web_worker: WebWorker
) -> None:
    from datetime import UTC, datetime

    from workflows.standing_messages import Changes

    earlier = _result("Where do cranes winter?", "# Where do cranes winter?\n\nSouth.", [], [], [])
    previous_id = store_research(
        web_worker.db_url, earlier.model_copy(update={"owner": "alice"}), "previous"
    )
    store.rename_research(web_worker.db_url, previous_id, "alice", "Crane winters, renamed")
    changes = Changes(since_research_id=previous_id, since=datetime.now(UTC))
    run = earlier.model_copy(update={"owner": "alice", "changes": changes})
    research_id = store_research(web_worker.db_url, run, "run")
    async with web_server.client("alice") as alice:
        page = (await alice.get(f"/research/{research_id}")).text
    assert "Crane winters, renamed" in page
