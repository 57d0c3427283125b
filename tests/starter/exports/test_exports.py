"""Report downloads in the four formats: each reopened with a reader (python-docx, pypdf), for its
structure, its citations and numbered sources, and for what untrusted text must never become."""

from __future__ import annotations

import io
import re
import zipfile

import docx
import pypdf
import pytest
from docx.oxml.ns import qn

from starter.exports import CONTENT_TYPES, FORMATS, export, file_name
from starter.exports.markup import to_html, to_markdown
from workflows.kit.verification import verification_note
from workflows.models import (
    Depth,
    Plan,
    QueryMode,
    ResearchResult,
    Source,
    Stage,
    Stats,
    VerificationSummary,
)

SUMMARY = VerificationSummary(
    method="lexical", claims=3, supported=2, unverified=1, share_supported=0.6667
)
NOTE = verification_note(SUMMARY).strip("*")
HOSTILE_TITLE = "<script>alert('x')</script> Evil page"
CJK = "生命周期确保引用始终有效"

REPORT = f"""# How do Rust lifetimes work?

## Summary

Lifetimes name **how long** a *reference* stays valid [1]. The borrow checker compares them [1, 2].
See `fn longest<'a>` for the syntax, and version \\[7\\] for nothing.

## Details

### Rules

- Each reference has a lifetime [2].
- Elision fills them in:
  1. one input lifetime
  2. `&self` methods

3. Annotate when the compiler asks [3].
4. Prefer owned data.

```rust
fn longest<'a>(x: &'a str, y: &'a str) -> &'a str {{ x }} // <b>not bold</b>
```

| Rule | Source |
| --- | --- |
| One input lifetime | [2] |
| `&self` wins | [1] |

A quote: <script>alert(1)</script>, [a trap](javascript:alert(1)) and [the book](https://doc.rust-lang.org/book/).

{CJK} [1]。

## Sources

- [1] The Rust Book — https://doc.rust-lang.org/book/
- [2] Local notes — file:///corpus/rust/lifetimes.md
- [3] {HOSTILE_TITLE} — javascript:alert(1)

*{NOTE}*
"""


def result(
    report: str = REPORT, query: str = "How do Rust lifetimes work?", **changes: object
) -> ResearchResult:
    base = ResearchResult(
        query=query,
        outcome=Stage.COMPLETED,
        report_markdown=report,
        sources=[
            Source(
                id=1,
                url="https://doc.rust-lang.org/book/",
                title="The Rust Book",
                provider="duckduckgo",
            ),
            Source(
                id=2, url="file:///corpus/rust/lifetimes.md", title="Local notes", provider="local"
            ),
            Source(id=3, url="javascript:alert(1)", title=HOSTILE_TITLE, provider="searxng"),
        ],
        claims=[],
        clarifications=[],
        plan=Plan(title="Rust lifetimes"),
        plan_iterations=1,
        reflections=[],
        stage_history=[Stage.COMPLETED],
        stats=Stats(),
        depth=Depth.LIGHT,
        mode=QueryMode.DEEP,
        engine="offline",
        verification=SUMMARY,
        language="en",
    )
    return base.model_copy(update=changes)


def word(r: ResearchResult) -> docx.document.Document:
    return docx.Document(io.BytesIO(export(r, "docx")[0]))


def pdf(r: ResearchResult) -> pypdf.PdfReader:
    return pypdf.PdfReader(io.BytesIO(export(r, "pdf")[0]))


def pdf_text(reader: pypdf.PdfReader) -> str:
    """The text with every run of whitespace one space: lines wrap where the page ends."""
    return " ".join(" ".join(page.extract_text() for page in reader.pages).split())


def link_targets(reader: pypdf.PdfReader) -> tuple[list[str], int]:
    """The URIs of the PDF's link annotations, and how many links go to a place in the document."""
    uris, internal = [], 0
    for page in reader.pages:
        for annot in page.get("/Annots") or []:
            annot = annot.get_object()
            action = annot.get("/A")
            if action is not None:
                uris.append(str(action.get_object()["/URI"]))
            elif annot.get("/Dest") is not None:
                internal += 1
    return uris, internal


# --- every format -------------------------------------------------------------------------------


def test_each_format_has_its_content_type_and_a_file_name_from_the_title() -> None:
    for fmt in FORMATS:
        body, content_type, name = export(result(), fmt)
        assert (
            body
            and content_type == CONTENT_TYPES[fmt]
            and name == f"how-do-rust-lifetimes-work.{FORMATS[fmt].extension or fmt}"
        )
    assert (
        CONTENT_TYPES["docx"]
        == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    )
    assert CONTENT_TYPES["pdf"] == "application/pdf"
    assert export(result(), "pdf")[0].startswith(b"%PDF-")
    assert zipfile.is_zipfile(io.BytesIO(export(result(), "docx")[0]))


def test_file_names_are_slugs_in_their_own_letters_without_separators_or_controls() -> None:
    assert (
        file_name("../../etc/passwd\x00\n<b>Über C:\\win</b>", "pdf")
        == "etc-passwd-b-über-c-win-b.pdf"
    )
    cjk = file_name(CJK, "docx")
    assert cjk != "research-report.docx" and cjk.endswith(".docx") and "/" not in cjk
    assert len(file_name("漢" * 300, "md").encode()) <= 203
    long = file_name("word " * 100, "md")
    assert len(long) <= 83 and long.endswith("word.md") and "--" not in long
    # No leading `# Title`: the plan's title names the file.
    assert export(result(report="Just text [1]."), "md")[2] == "rust-lifetimes.md"


def test_markdown_and_html_are_the_library_exports() -> None:
    assert export(result(), "md")[0] == to_markdown(result()).encode("utf-8")
    assert export(result(), "html")[0] == to_html(result()).encode("utf-8")


def test_an_unknown_format_is_refused_in_one_line_naming_the_four() -> None:
    with pytest.raises(ValueError) as refused:
        export(result(), "odt\nrm -rf /")
    message = str(refused.value)
    assert "\n" not in message and all(fmt in message for fmt in ("md", "html", "docx", "pdf"))


def test_control_characters_and_bidi_overrides_are_removed_from_every_format() -> None:
    sneaky = "\u202e\u2066\x1b[31m\x07\x00"
    r = result(
        report=REPORT.replace("Lifetimes name", f"Lifetimes{sneaky} name"),
        query=f"How{sneaky} do?",
        sources=[Source(id=1, url=f"https://example.org/{sneaky}", title=f"Evil{sneaky}title")],
    )
    texts = {
        "md": export(r, "md")[0].decode(),
        "html": export(r, "html")[0].decode(),
        "pdf": pdf_text(pdf(r)),
    }
    with zipfile.ZipFile(io.BytesIO(export(r, "docx")[0])) as package:
        texts["docx"] = "".join(
            package.read(name).decode("utf-8")
            for name in package.namelist()
            if name.endswith((".xml", ".rels"))
        )
    for fmt, text in texts.items():
        assert not re.search("[\x00-\x08\x0b-\x1f\u202a-\u202e\u2066-\u2069]", text), fmt
        assert "Lifetimes[31m name" in text, fmt


# --- Word -----------------------------------------------------------------------------------------


def test_word_has_the_title_headings_by_level_lists_code_and_a_table() -> None:
    doc = word(result())
    styles = [(p.style.name, p.text) for p in doc.paragraphs]
    assert styles[0] == ("Title", "How do Rust lifetimes work?")
    headings = [(s, t) for s, t in styles if s.startswith("Heading")]
    assert headings == [
        ("Heading 1", "Summary"),
        ("Heading 1", "Details"),
        ("Heading 2", "Rules"),
        ("Heading 1", "Sources"),
    ]
    assert ("List Bullet", "Each reference has a lifetime [2].") in styles
    assert ("List Number 2", "one input lifetime") in styles and (
        "List Number",
        "Prefer owned data.",
    ) in styles
    code = next(p for p in doc.paragraphs if p.style.name == "Code Block")
    assert code.text.startswith("fn longest<'a>") and "<b>not bold</b>" in code.text
    assert code.style.font.name == "Courier New"
    summary = next(p for p in doc.paragraphs if p.text.startswith("Lifetimes name"))
    assert [r.text for r in summary.runs if r.bold] == ["how long"] and [
        r.text for r in summary.runs if r.italic
    ] == ["reference"]
    assert any(r.text == "fn longest<'a>" and r.font.name == "Courier New" for r in summary.runs)
    assert "version [7] for nothing" in summary.text
    (table,) = doc.tables
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["Rule", "Source"],
        ["One input lifetime", "[2]"],
        ["&self wins", "[1]"],
    ]
    assert all(r.bold for r in table.rows[0].cells[0].paragraphs[0].runs)


def test_word_numbered_lists_start_at_their_own_number() -> None:
    doc = word(result())
    numbering = doc.part.numbering_part.element
    first = next(p for p in doc.paragraphs if p.text.startswith("Annotate when"))
    num = numbering.num_having_numId(first._p.pPr.numPr.numId.val)
    assert num.xpath("./w:lvlOverride/w:startOverride/@w:val") == ["3"]
    nested = next(p for p in doc.paragraphs if p.text == "one input lifetime")
    assert nested._p.pPr.numPr.numId.val != first._p.pPr.numPr.numId.val


def test_word_cites_link_to_numbered_sources_and_only_web_urls_are_links() -> None:
    doc = word(result())
    cites = [(h.fragment, h.text) for p in doc.paragraphs for h in p.hyperlinks if h.fragment]
    assert ("source_1", "1") in cites and ("source_2", "2") in cites and ("source_3", "3") in cites
    bookmarks = doc.element.body.xpath(".//w:bookmarkStart/@w:name")
    assert sorted(bookmarks) == ["source_1", "source_2", "source_3"]

    start = [p.text for p in doc.paragraphs].index("Sources")
    entries = [p for p in doc.paragraphs[start + 1 :] if p.text]
    assert [p.text for p in entries] == [
        "[1] The Rust Book — https://doc.rust-lang.org/book/ (web, duckduckgo)",
        "[2] Local notes — file:///corpus/rust/lifetimes.md (local)",
        f"[3] {HOSTILE_TITLE} — javascript:alert(1) (web, searxng)",
    ]
    assert [h.address for h in entries[0].hyperlinks] == ["https://doc.rust-lang.org/book/"]
    assert entries[1].hyperlinks == [] and entries[2].hyperlinks == []

    external = [rel.target_ref for rel in doc.part.rels.values() if rel.is_external]
    assert set(external) == {"https://doc.rust-lang.org/book/"}
    quote = next(p for p in doc.paragraphs if p.text.startswith("A quote:"))
    assert (
        "<script>alert(1)</script>" in quote.text and "[a trap](javascript:alert(1))" in quote.text
    )
    assert [h.text for h in quote.hyperlinks] == ["the book"]


def test_word_keeps_the_verification_line_once_and_describes_itself() -> None:
    doc = word(result())
    assert [p.text for p in doc.paragraphs].count(NOTE) == 1
    assert doc.paragraphs[-5].text == NOTE  # before the Sources section
    props = doc.core_properties
    assert (props.title, props.author, props.language) == (
        "How do Rust lifetimes work?",
        "Deep research on Temporal",
        "en",
    )
    lang = doc.styles.element.xpath("w:docDefaults/w:rPrDefault/w:rPr/w:lang")[0]
    assert lang.get(qn("w:val")) == "en"
    # A report that predates the note in its text gets the line from the summary.
    older = word(result(report=REPORT.replace(f"*{NOTE}*", "")))
    assert [p.text for p in older.paragraphs].count(NOTE) == 1


# --- PDF ------------------------------------------------------------------------------------------


def test_pdf_has_the_text_citations_numbered_sources_and_metadata() -> None:
    reader = pdf(result())
    text = pdf_text(reader)
    for expected in (
        "How do Rust lifetimes work?",
        "Summary",
        "Rules",
        "compares them [1, 2]",
        "Each reference has a lifetime [2].",
        "Annotate when the compiler asks [3].",
        "fn longest<'a>(x: &'a str",
        "<b>not bold</b>",
        "One input lifetime",
        "version [7] for nothing",
        "<script>alert(1)</script>",
        "[a trap](javascript:alert(1))",
        CJK,
        NOTE,
        "[1] The Rust Book — https://doc.rust-lang.org/book/ (web, duckduckgo)",
        "[2] Local notes — file:///corpus/rust/lifetimes.md (local)",
        f"[3] {HOSTILE_TITLE} — javascript:alert(1) (web, searxng)",
    ):
        assert expected in text, expected
    assert text.count(NOTE) == 1 and "## Sources" not in text
    meta = reader.metadata
    assert (
        meta.title == "How do Rust lifetimes work?" and meta.author == "Deep research on Temporal"
    )
    assert reader.trailer["/Root"]["/Lang"] == "en"


def test_pdf_links_only_web_urls_and_cites_point_into_the_document() -> None:
    uris, internal = link_targets(pdf(result()))
    assert sorted(uris) == ["https://doc.rust-lang.org/book/", "https://doc.rust-lang.org/book/"]
    assert (
        internal >= 7
    )  # every [n] of a known source: 1, 1, 2, 2, 3, 2, 1 and the CJK sentence's 1
    body = export(result(), "pdf")[0]
    assert b"/JavaScript" not in body and b"/Launch" not in body and b"/JS" not in body


def test_pdf_draws_cjk_with_cid_fonts_and_survives_what_no_font_has() -> None:
    mixed = "# 東京の天気\n\nひらがな と 漢字 [1]. 한국어 문장 [1]. Ελληνικά, Русский, שלום, 🙂, \U0001d11e.\n\n```\n→ ─┼─ 🙂\n```\n"
    reader = pdf(result(report=mixed, language="ja"))
    fonts = {
        str(f.get_object()["/BaseFont"])
        for page in reader.pages
        for f in page["/Resources"]["/Font"].values()
    }
    assert {"/HeiseiMin-W3", "/HYSMyeongJo-Medium"} <= fonts
    text = pdf_text(reader)
    assert "ひらがな と 漢字 [1]" in text and "한국어 문장 [1]" in text and "Русский" in text
    assert reader.metadata.title == "東京の天気" and reader.trailer["/Root"]["/Lang"] == "ja"
    assert export(result(report=mixed, language="ja"), "pdf")[2] == "東京の天気.pdf"


def test_large_and_deeply_nested_reports_still_export() -> None:
    huge = (
        "| a | b |\n|---|---|\n| "
        + "word " * 2000
        + " | x |\n\n"
        + "> " * 40
        + "deep [1]\n\n"
        + "\n".join("  " * i + f"- level {i}" for i in range(30))
        + "\n\n"
        + "x" * 5000
        + "\n\nThe end [2].\n"
    )
    r = result(report=huge)
    text = pdf_text(pdf(r))
    assert "deep [1]" in text and "• level 29" in text and "The end [2]." in text
    paragraphs = [p.text for p in word(r).paragraphs]
    assert "• level 29" in paragraphs and "The end [2]." in paragraphs and "deep [1]" in paragraphs


def test_every_download_lists_every_source_read_and_marks_the_ones_not_cited() -> None:
    """The report listed only its cited sources (numbers with gaps: [1], [3]), and the
    page mixed cited and uncited sources unmarked."""
    from starter.web.presentation.render import render_report

    read_only = result(report="# Q\n\nOne [1]. Three [3].\n\n## Sources\n\n- [1] a\n- [3] c\n")
    markdown = to_markdown(read_only)
    listed = re.findall(r"^- \[(\d)\].*\((.+)\)$", markdown, re.M)
    assert [mark for _, mark in listed] == [
        "web, duckduckgo",
        "local; read, not cited",
        "web, searxng",
    ]
    assert "read, not cited" in to_html(read_only).split("file:///corpus")[0][-200:]
    for fmt in ("docx", "pdf"):
        body = export(read_only, fmt)[0]
        text = (
            "\n".join(p.text for p in docx.Document(io.BytesIO(body)).paragraphs)
            if fmt == "docx"
            else "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(body)).pages)
        )
        assert "(local; read, not cited)" in " ".join(text.split()), fmt
    cards = render_report(read_only).sources
    assert [card.cited for card in cards] == [True, False, True]
