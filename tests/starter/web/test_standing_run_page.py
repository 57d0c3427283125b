"""A standing research's run on its page: what changed is said once (the
report's own "What changed since" section; the panel beside it shows the previous run, with a
date a person reads, never a raw ISO time, and local sources by their names only), and the page
that watched the run live gets the same panel and **Research again on a schedule** from the
report fragment it loads when the run ends, as a reload shows them."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from tests.starter.web.conftest import running_app
from tests.starter.web.reports import _result, store_research
from tests.starter.web.test_check_page import settings, visible
from workflows.models import Source
from workflows.standing.changes import section
from workflows.standing_messages import Changes, SourceRef

SINCE = datetime(2026, 12, 1, 22, 28, 34, 188285, tzinfo=UTC)


async def test_what_changed_is_said_once_on_the_page_and_in_the_live_fragment(
    tmp_path: Path,
) -> None:
    cfg = settings(tmp_path)
    mars = (cfg.corpus.folder or tmp_path) / "planets" / "mars.md"
    source = Source(id=1, url=mars.as_uri(), title="Mars", provider="local")
    previous = _result("How long is a year on Mars?", "# Mars\n\nIt is long [1].", [source], [], [])
    previous_id = store_research(cfg.library.db_url, previous.model_copy(update={"owner": "local"}))
    changes = Changes(
        since_research_id=previous_id,
        since=SINCE,
        new_sources=[SourceRef(url=mars.as_uri(), title="Mars")],
        new_claims=["A year on Mars lasts 687 Earth days."],
    )
    report = f"# Mars\n\n{section(changes)}\n\n## Findings\n\nA year lasts 687 days [1].\n"
    run = previous.model_copy(update={"changes": changes, "report_markdown": report})
    run_id = store_research(cfg.library.db_url, run, "run")
    with running_app(cfg) as server:
        async with server.client(None) as client:
            reloaded = await client.get(f"/research/{run_id}")
            live = await client.get(f"/research/{run_id}/report-fragment")
    assert reloaded.status_code == 200 and live.status_code == 200, live.text
    for page in (reloaded.text, live.text):
        shown = visible(page)
        assert shown.count("What changed since") == 1, shown
        assert "The previous run Compared with the previous run of 1 December 2026, 22:28 UTC" in (
            shown
        )
        assert "2026-12-01T22:28:34" not in shown and ".188285" not in shown
        assert "Mars mars.md" not in shown and "\\n" not in shown
        assert "New sources (1): Mars — planets/mars.md New findings" in shown
        assert "The previous run's report" in shown
        assert re.search(r"<button[^>]*>Research again on a schedule</button>", page)
