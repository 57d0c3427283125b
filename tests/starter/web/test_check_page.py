"""The **Check citations** page (`/check`) without JavaScript, through a real uvicorn
(Temporal unreachable: a check does not need it): paste the product's own report, and its local
sources (`planets/mercury.md` in the corpus, an upload by its file name) are read; or choose the
sources of a research in the library, or a document by number; verdicts come back in place with
their evidence; a refusal is one line on the page."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx

from activities.corpus.uploads import owner_folder, uploads_root
from settings import Settings
from starter.web.services.checks import CHECK_TIMEOUT_S
from tests.starter.cli.test_starter import closed_port
from tests.starter.web.conftest import WebServer, csrf_for, running_app
from tests.starter.web.reports import _result, store_research
from workflows.models import Source

MERCURY = "# Mercury\n\nA year on Mercury lasts 88 Earth days.\n"
MARS = "# Mars\n\nA year on Mars lasts 687 Earth days.\n"
REPORT = (
    "# The inner planets\n\n"
    "A year on Mercury lasts 88 Earth days [1]. A year on Mars lasts 700 Earth days [2].\n\n"
    "## Sources\n\n"
    "- [1] Mercury — planets/mercury.md (local)\n"
    "- [2] Mars — Mars notes.md (local)\n"
)


def visible(page: str) -> str:
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", page).split()))


def settings(tmp_path: Path) -> Settings:
    corpus, data = tmp_path / "notes", tmp_path / "data"
    (corpus / "planets").mkdir(parents=True)
    (corpus / "planets" / "mercury.md").write_text(MERCURY)
    upload = owner_folder(uploads_root(data), "local") / "0123456789ab"
    upload.mkdir(parents=True)
    (upload / "Mars notes.md").write_text(MARS)
    return Settings(
        _env_file=None,
        temporal_address=f"127.0.0.1:{closed_port()}",
        llm_provider="offline",
        research_corpus_dir=corpus,
        research_data_dir=data,
        research_db_url=f"sqlite:///{tmp_path / 'library.sqlite'}",
    )


#: A check runs in a niced child that the server kills after CHECK_TIMEOUT_S (503): the client
#: waits for that, not for httpx's 30 s, which a busy machine's child outlasted.
CHECK_WAIT_S = CHECK_TIMEOUT_S + 30


async def post(server: WebServer, **fields: str) -> httpx.Response:
    async with server.client(None, timeout=CHECK_WAIT_S) as client:
        return await client.post("/check", data={"csrf": csrf_for(server), **fields})


async def test_a_pasted_report_is_checked_against_its_own_local_sources(tmp_path: Path) -> None:
    with running_app(settings(tmp_path)) as server:
        async with server.client(None) as client:
            home = (await client.get("/")).text
            empty = await client.get("/check")
        checked = await post(server, text=REPORT)
        nothing = await post(server, text="No citation here.")
    assert '<a href="/check"' in home and '>Check<span class="long"> citations</span></a>' in home
    assert empty.status_code == 200
    form = visible(empty.text)
    assert (
        "Text" in form and "Check citations" in form and "Source number for Mars notes.md" in form
    )
    assert '<label for="check-text">Text</label>' in empty.text
    assert '<button type="submit">Check citations</button>' in empty.text

    assert checked.status_code == 200, checked.text
    shown = visible(checked.text)
    assert "2 cited sentences: 1 supported, 1 unsupported" in shown
    assert "Supported A year on Mercury lasts 88 Earth days. [1]" in shown
    assert "Unsupported A year on Mars lasts 700 Earth days. [2]" in shown
    assert "A year on Mars lasts 687 Earth days." in shown  # the evidence, in place
    assert "Sources not read" not in shown
    assert REPORT.splitlines()[2][:40] in html.unescape(checked.text)  # the text stays in the box

    assert nothing.status_code == 422
    alert = re.search(r'<p class="error" role="alert">([^<]*)</p>', nothing.text)
    assert alert and html.unescape(alert.group(1)) == "no sentence of the text cites a source [n]"


async def test_sources_chosen_from_the_library_and_the_documents(tmp_path: Path) -> None:
    cfg = settings(tmp_path)
    mercury = (cfg.corpus.folder or tmp_path) / "planets" / "mercury.md"
    stored = store_research(
        cfg.library.db_url,
        _result(
            "How long are years on the inner planets?",
            "A year on Mercury lasts 88 Earth days [1].",
            [Source(id=1, url=mercury.resolve().as_uri(), title="Mercury", provider="local")],
            [],
            [],
        ),
    )
    text = "A year on Mercury lasts 88 Earth days [1]. A year on Mars lasts 687 Earth days [3]."
    with running_app(cfg) as server:
        async with server.client(None) as client:
            offered = (await client.get("/check")).text
        checked = await post(server, text=text, research=stored, **{"document-Mars notes.md": "3"})
        wrong = await post(server, text=text, research=stored, **{"document-Mars notes.md": "x"})
    assert f'<option value="{stored}">How long are years on the inner planets?</option>' in offered
    assert checked.status_code == 200, checked.text
    shown = visible(checked.text)
    assert "2 cited sentences: 2 supported, 0 unsupported" in shown
    assert "Supported A year on Mars lasts 687 Earth days. [3]" in shown
    assert wrong.status_code == 422
    assert "the number for Mars notes.md must be a whole number from 1" in visible(wrong.text)
