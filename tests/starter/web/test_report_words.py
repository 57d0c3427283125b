"""What a report says is on its page once, in the words of the downloads:
the lines after its own `## Sources` list (the engine's disclaimer, "Revised after review", the
critic's "Still open" issues) are on the page as in the md and html downloads, and Python's
double-underscore names (`__init__.py`, `__exit__()`) stay names in the page, the draft under
review, the popovers and every download, never "init.py" in bold."""

from __future__ import annotations

import io
import re

import docx
import pypdf

from starter.exports import export
from starter.web.presentation.render import render_markdown, render_report
from tests.starter.web.conftest import WebServer, WebWorker
from tests.starter.web.reports import showcase_result, store_research
from workflows.models import Claim, Evidence, Verdict

DISCLAIMER = "Made offline by extractive methods, with no LLM: the findings above are quotes."
REVISED = "Revised after review: “shorter please”. The rewrite came out the same as the draft."
STILL_OPEN = "(major) The second section cites one source only."
NAMES = "The with statement calls __enter__() and then __exit__() of the manager"
REPORT = f"""# How does the with statement work?

## Summary

{NAMES} [1]. A package runs its __init__.py first [2].

## Sources

- [1] The with statement — https://example.org/with (web)
- [2] Packages — file:///corpus/packages.md (local)

*Still open after 1 refinement:*

- {STILL_OPEN}

---

*{DISCLAIMER}*

> **{REVISED}**
"""


def result():  # type: ignore[no-untyped-def]
    base = showcase_result()
    return base.model_copy(
        update={
            "query": "How does the with statement use __enter__ and __exit__?",
            "report_markdown": REPORT,
            "notes": ["Shown only here: no review came within an hour.", REVISED],
            "claims": [
                Claim(text=f"{NAMES}.", source_ids=[1], verdict=Verdict.SUPPORTED),
                Claim(text="A package runs its __init__.py first.", source_ids=[2]),
            ],
            "evidence": [Evidence(source_id=1, position=0, text="__exit__() is called on leaving")],
        }
    )


def visible_text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).replace("&quot;", '"').split())


def test_the_report_body_keeps_every_line_after_its_sources_list() -> None:
    body = visible_text(render_report(result()).body)
    for line in (DISCLAIMER, STILL_OPEN, "Still open after 1 refinement:", REVISED):
        assert line in body, line
    assert "https://example.org/with (web)" not in body  # the list itself: the page lists them


def test_double_underscore_names_stay_names_in_the_page_and_every_download() -> None:
    body = str(render_report(result()).body)
    assert "__enter__()" in body and "__exit__()" in body and "__init__.py" in body
    assert "<strong>exit</strong>" not in body and "<strong>init</strong>" not in body
    assert "<strong>bold words</strong>" in str(render_markdown("__bold words__ and _it_"))
    html = export(result(), "html")[0].decode()
    assert "__exit__()" in html and "__init__.py" in html and "<strong>exit" not in html
    word = docx.Document(io.BytesIO(export(result(), "docx")[0]))
    said = " ".join(p.text for p in word.paragraphs)
    assert "__exit__()" in said and "__init__.py" in said
    pdf = pypdf.PdfReader(io.BytesIO(export(result(), "pdf")[0]))
    printed = " ".join(" ".join(page.extract_text() for page in pdf.pages).split())
    assert "__exit__()" in printed and "__init__.py" in printed


async def test_the_page_says_what_the_downloads_say_once(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    research_id = store_research(web_worker.db_url, result(), "words")
    async with open_web_server.client(None) as client:
        page = (await client.get(f"/research/{research_id}")).text
        md = (await client.get(f"/api/research/{research_id}/report", params={"format": "md"})).text
        html = (await client.get(f"/api/research/{research_id}/report?format=html")).text
    shown, downloaded, exported = visible_text(page), visible_text(md), visible_text(html)
    for line in (DISCLAIMER, STILL_OPEN, REVISED, "__exit__()", "__init__.py"):
        assert line in downloaded and line in exported, line
        assert line in shown, line
    assert shown.count(REVISED) == 1  # in the report, so not again among the notes
    assert "Shown only here: no review came within an hour." in shown
    assert "How does the with statement use __enter__ and __exit__?" in shown
