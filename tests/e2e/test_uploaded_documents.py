"""Uploading a document and researching it, end to end: the web app's API takes a small
Markdown document about something nothing else mentions, a research with `sources: documents`
(the real worker process, offline engine, the local corpus beside it) cites it by its title; the
same question asked by another user, with the same sources, never finds it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from settings import Settings
from tests.e2e.test_end_to_end import Workers
from tests.starter.web.conftest import running_app, wait_for

pytestmark = pytest.mark.e2e

TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdef"}
QUESTION = "How many bells does the Marrowick clocktower carillon have?"
DOCUMENT = (
    b"# The Marrowick carillon\n\n"
    b"The Marrowick clocktower carillon has 41 bells, cast in 1887 by the Tallow foundry.\n\n"
    b"## Playing\n\nThe carillon is played from a baton keyboard every Sunday at noon.\n"
)


async def _research(client: httpx.AsyncClient) -> dict[str, Any]:
    body = {
        "question": QUESTION,
        "sources": "documents",
        "depth": "light",
        "max_clarifications": 0,
        "review_report": "never",  # a research that finds nothing would wait for a person
    }
    started = await client.post("/api/research", json=body)
    assert started.status_code == 201, started.text
    path = f"/api/research/{started.json()['id']}"
    return await wait_for(client, path, lambda view: not view["running"], timeout=120)


async def test_an_uploaded_document_is_cited_by_its_owners_research_only(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tides.md").write_text("# Tides\n\nThe Moon's pull raises two tidal bulges.\n")
    env = {
        **subprocess_env,
        "RESEARCH_CORPUS_DIR": str(corpus),
        "RESEARCH_DATA_DIR": str(tmp_path / "data"),
    }
    config = Settings(
        _env_file=None,
        temporal_address=env["TEMPORAL_ADDRESS"],
        temporal_task_queue=env["TEMPORAL_TASK_QUEUE"],
        research_db_url=env["RESEARCH_DB_URL"],
        research_data_dir=tmp_path / "data",
        search_provider="local",
        llm_provider="offline",
        research_api_tokens=",".join(f"{k}:{v}" for k, v in TOKENS.items()),
    )
    workers = Workers(env)
    workers.start()
    try:
        with running_app(config, TOKENS) as server:
            async with (
                server.client("alice") as alice,
                server.client("bob") as bob,
            ):
                uploaded = await alice.post(
                    "/api/documents",
                    files={"file": ("marrowick.md", DOCUMENT, "text/markdown")},
                )
                assert uploaded.status_code == 201, uploaded.text
                mine = await _research(alice)
                theirs = await _research(bob)
    finally:
        workers.stop_all()

    assert mine["status"] == "completed", mine
    titles = {s["title"]: s for s in mine["sources"]}
    assert "The Marrowick carillon" in titles, mine["sources"]
    cited = titles["The Marrowick carillon"]
    assert cited["url"] == "marrowick.md"  # its file name: no data or owner folder
    assert f"[{cited['id']}]" in mine["report_markdown"]
    assert "41 bells" in mine["report_markdown"]

    assert theirs["status"] == "completed", theirs
    assert all("marrowick" not in s["url"] for s in theirs["sources"])
    assert "41 bells" not in theirs["report_markdown"]
