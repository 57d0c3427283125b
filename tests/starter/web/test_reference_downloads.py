"""A research's references download from the web app as BibTeX, RIS and CSL-JSON, each
with its content type and a file name from the title, and the research page links them beside the
report's downloads (**Download BibTeX**, **Download RIS**, **Download CSL-JSON**)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html.parser import HTMLParser
from urllib.parse import unquote

import bibtexparser
import rispy

from tests.starter.web.conftest import WebServer, WebWorker
from tests.starter.web.reports import _result, store_research
from workflows.models import Claim, Source, Verdict

SOURCES = [
    Source(id=1, url="https://example.org/cranes", title="Cranes & {herons}", provider="searxng"),
    Source(id=2, url="file:///srv/corpus/birds/notes.md", title="Field notes", provider="local"),
]
CLAIMS = [
    Claim(text="South.", source_ids=[1], verdict=Verdict.SUPPORTED),
    Claim(text="Cold.", source_ids=[1], verdict=Verdict.PARTIAL),
]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href") or ""
            self.links.append(("", self._href))

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            text, href = self.links[-1]
            self.links[-1] = (text + data, href)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._href = None


async def test_references_download_in_three_formats_linked_from_the_page(
    web_server: WebServer, web_worker: WebWorker
) -> None:
    result = _result(
        "Where do cranes winter?", "# Where do cranes winter?\n\nSouth [1].", SOURCES, [], CLAIMS
    )
    research_id = store_research(
        web_worker.db_url, result.model_copy(update={"owner": "alice"}), "refs"
    )
    today = datetime.now(UTC).date().isoformat()  # store_research finishes it now
    async with web_server.client("alice") as alice:
        page = (await alice.get(f"/research/{research_id}")).text
        got = {
            fmt: await alice.get(f"/api/research/{research_id}/report?format={fmt}")
            for fmt in ("bib", "ris", "csl")
        }
    parser = _Links()
    parser.feed(page)
    links = {" ".join(text.split()): href for text, href in parser.links}
    for label, fmt in (("BibTeX", "bib"), ("RIS", "ris"), ("CSL-JSON", "csl")):
        assert links[f"Download {label}"] == f"/api/research/{research_id}/report?format={fmt}"

    for fmt, content_type, ext in (
        ("bib", "application/x-bibtex", "bib"),
        ("ris", "application/x-research-info-systems", "ris"),
        ("csl", "application/vnd.citationstyles.csl+json", "json"),
    ):
        response = got[fmt]
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == content_type
        disposition = response.headers["content-disposition"]
        assert unquote(disposition.split("filename*=UTF-8''", 1)[1]) == (
            f"where-do-cranes-winter.{ext}"
        )

    bib = bibtexparser.parse_string(got["bib"].text).entries
    assert [(e.entry_type, e.key) for e in bib] == [("online", "examplecranes"), ("misc", "notes")]
    page_entry = bib[0].fields_dict
    assert page_entry["title"].value == r"{Cranes \& \textbraceleft{}herons\textbraceright{}}"
    assert page_entry["urldate"].value == today
    assert page_entry["note"].value == "cited by 2 claims: 1 supported, 1 partial"
    assert "srv/corpus" not in got["bib"].text + got["ris"].text + got["csl"].text

    ris = rispy.loads(got["ris"].text)
    assert [r["type_of_reference"] for r in ris] == ["ELEC", "GEN"]
    assert ris[0]["title"] == "Cranes & {herons}" and ris[0]["urls"] == [
        "https://example.org/cranes"
    ]
    csl = json.loads(got["csl"].text)
    assert [i["type"] for i in csl] == ["webpage", "document"]
    assert csl[1]["note"].startswith("your own document (notes.md)")
