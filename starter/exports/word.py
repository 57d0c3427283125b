"""The report as a Word document (python-docx): the title as Title, the report's headings as Word
headings, lists as Word lists (a numbered list starts at its own number), bold, italic and code as
runs, code blocks in a monospace style, tables, and a Sources section that numbers every source by
its id, with a bookmark each citation `[n]` links to and its URL as a hyperlink when it is http(s).

Only http(s) URLs become external hyperlinks; everything else is text. Nothing is ever written as
raw XML from the report: every text goes through python-docx's run text, which escapes it.
"""

from __future__ import annotations

from dataclasses import replace
from io import BytesIO
from typing import Protocol, cast

from docx import Document
from docx.document import Document as WordDocument
from docx.enum.style import WD_STYLE_TYPE
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.oxml.shared import CT_DecimalNumber
from docx.oxml.text.paragraph import CT_P
from docx.shared import Pt, RGBColor
from docx.text.paragraph import Paragraph
from docx.text.run import Run

from starter.exports.document import (
    Block,
    Code,
    Heading,
    ListBlock,
    Para,
    Quote,
    Report,
    Rule,
    SourceEntry,
    Span,
    Table,
    entry_spans,
)

AUTHOR = "Deep research on Temporal"
CODE_FONT = "Courier New"
CODE_STYLE = "Code Block"
LINK_COLOR = RGBColor(0x1A, 0x5F, 0xB4)
#: python-docx's default template has list styles for three levels.
_LIST_LEVELS = 3


class _NumberingProperties(Protocol):
    """A `<w:numPr>`: python-docx generates its accessors from the schema, undeclared in its types."""

    def get_or_add_ilvl(self) -> CT_DecimalNumber: ...
    def get_or_add_numId(self) -> CT_DecimalNumber: ...


class _ParagraphProperties(Protocol):
    """A `<w:pPr>`'s generated accessor of its numbering properties (see above)."""

    def get_or_add_numPr(self) -> _NumberingProperties: ...


def write(report: Report) -> bytes:
    doc = Document()
    _describe(doc, report)
    _add_code_style(doc)
    doc.add_heading(report.title, 0)
    writer = _Writer(doc)
    writer.blocks(report.blocks, depth=0, style="Normal")
    writer.sources(report.sources)
    out = BytesIO()
    doc.save(out)
    return out.getvalue()


def bookmark_name(source_id: int) -> str:
    return f"source_{source_id}"


def _describe(doc: WordDocument, report: Report) -> None:
    props = doc.core_properties
    props.title, props.author, props.subject = report.title[:255], AUTHOR, report.query[:255]
    props.language = report.language
    lang = doc.styles.element.find(
        f"{qn('w:docDefaults')}/{qn('w:rPrDefault')}/{qn('w:rPr')}/{qn('w:lang')}"
    )
    if lang is not None:  # what spelling and screen readers take the text to be
        lang.set(qn("w:val"), report.language)
        if report.language.split("-")[0] in ("zh", "ja", "ko"):
            lang.set(qn("w:eastAsia"), report.language)


def _add_code_style(doc: WordDocument) -> None:
    style = doc.styles.add_style(CODE_STYLE, WD_STYLE_TYPE.PARAGRAPH)
    style.base_style = doc.styles["Normal"]
    style.font.name, style.font.size = CODE_FONT, Pt(9)
    style.paragraph_format.space_after = Pt(6)
    style.paragraph_format.line_spacing = 1.0


class _Writer:
    def __init__(self, doc: WordDocument) -> None:
        self.doc = doc
        self.bookmarks = 0
        self._style_ids: dict[str, str | None] = {}
        body = doc.element.body
        #: New paragraphs go before the section properties, found once (python-docx looks for
        #: them among all the body's children for every paragraph: quadratic).
        self._end = body.find(qn("w:sectPr"))

    def paragraph(self, style: str | None = None) -> Paragraph:
        """A new paragraph in STYLE. python-docx looks a style up by scanning every style each
        time (milliseconds a paragraph: minutes for a long report), so each id is looked up once."""
        element = cast(CT_P, OxmlElement("w:p"))  # python-docx's class for the w:p tag
        if self._end is not None:
            self._end.addprevious(element)
        else:
            self.doc.element.body.append(element)
        paragraph = Paragraph(element, self.doc._body)
        if style is not None:
            if style not in self._style_ids:
                self._style_ids[style] = self.doc.part.get_style_id(style, WD_STYLE_TYPE.PARAGRAPH)
            paragraph._p.style = self._style_ids[style]
        return paragraph

    def blocks(self, blocks: list[Block], depth: int, style: str) -> None:
        for block in blocks:
            self.block(block, depth, style)

    def block(self, block: Block, depth: int, style: str) -> None:
        if isinstance(block, Heading):
            self.spans(self.paragraph(f"Heading {min(block.level, 9)}"), block.spans)
        elif isinstance(block, Para):
            self.spans(self.paragraph(style), block.spans)
        elif isinstance(block, Code):
            self.paragraph(CODE_STYLE).add_run(block.text)
        elif isinstance(block, ListBlock):
            self.list_block(block, depth + 1)
        elif isinstance(block, Quote):
            self.blocks(block.blocks, depth, "Quote")
        elif isinstance(block, Table):
            self.table(block)
        elif isinstance(block, Rule):
            _bottom_border(self.paragraph())

    def list_block(self, block: ListBlock, depth: int) -> None:
        level = min(depth, _LIST_LEVELS)
        suffix = f" {level}" if level > 1 else ""
        style = f"List {'Number' if block.ordered else 'Bullet'}{suffix}"
        num_id = _restarted_numbering(self.doc, style, block.start) if block.ordered else None
        for item in block.items:
            first = self.paragraph(style)
            if num_id is not None:
                properties = cast(_ParagraphProperties, first._p.get_or_add_pPr())
                numbering = properties.get_or_add_numPr()
                numbering.get_or_add_ilvl().val = 0
                numbering.get_or_add_numId().val = num_id
            rest = item
            if item and isinstance(item[0], Para):
                self.spans(first, item[0].spans)
                rest = item[1:]
            self.blocks(rest, depth, f"List Continue{suffix}")

    def table(self, block: Table) -> None:
        columns = max((len(row) for row in block.rows), default=0)
        if not columns:
            return
        table = self.doc.add_table(rows=len(block.rows), cols=columns)
        table.style = self.doc.styles["Table Grid"]
        header = table.rows[0]._tr.get_or_add_trPr()
        header.append(OxmlElement("w:tblHeader"))  # the header row repeats on every page
        for r, (word_row, row) in enumerate(zip(table.rows, block.rows, strict=False)):
            for word_cell, spans in zip(
                word_row.cells, row, strict=False
            ):  # row by row: table.cell(r, c) is slow
                self.spans(
                    word_cell.paragraphs[0],
                    [replace(s, bold=True) for s in spans] if r == 0 else spans,
                )

    def spans(self, paragraph: Paragraph, spans: list[Span]) -> None:
        for span in spans:
            run = paragraph.add_run(span.text)
            run.bold, run.italic = span.bold or None, span.italic or None
            if span.code:
                run.font.name = CODE_FONT
            if span.cite is not None:
                _hyperlink(paragraph, run, anchor=bookmark_name(span.cite))
            elif span.link:
                _hyperlink(paragraph, run, url=span.link)

    def sources(self, sources: list[SourceEntry]) -> None:
        if not sources:
            return
        self.doc.add_heading("Sources", 1)
        for source in sources:
            paragraph = self.paragraph()
            self.bookmarks += 1
            _bookmark(paragraph, bookmark_name(source.id), self.bookmarks)
            self.spans(paragraph, entry_spans(source))
            end = OxmlElement("w:bookmarkEnd")
            end.set(qn("w:id"), str(self.bookmarks))
            paragraph._p.append(end)


def _hyperlink(
    paragraph: Paragraph, run: Run, *, url: str | None = None, anchor: str | None = None
) -> None:
    """Wraps `run` in a w:hyperlink: to an external http(s) URL, or to a bookmark of this document."""
    link = OxmlElement("w:hyperlink")
    if url is not None:
        link.set(
            qn("r:id"), paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
        )
    else:
        link.set(qn("w:anchor"), str(anchor))
    run._r.addprevious(link)
    link.append(run._r)
    run.font.color.rgb = LINK_COLOR
    run.font.underline = True


def _bookmark(paragraph: Paragraph, name: str, bookmark_id: int) -> None:
    start = OxmlElement("w:bookmarkStart")
    start.set(qn("w:id"), str(bookmark_id))
    start.set(qn("w:name"), name)
    paragraph._p.append(start)


def _restarted_numbering(doc: WordDocument, style: str, start: int) -> int:
    """A new numbering instance of the list style's numbering, starting at `start`: without it every
    numbered list of the document would go on counting from the one before."""
    style_numbering = doc.styles[style].element.pPr.numPr.numId.val
    numbering = doc.part.numbering_part.element
    abstract = numbering.num_having_numId(style_numbering).abstractNumId.val
    num = numbering.add_num(abstract)
    num.add_lvlOverride(ilvl=0).add_startOverride(start)
    return int(num.numId)


def _bottom_border(paragraph: Paragraph) -> None:
    border, bottom = OxmlElement("w:pBdr"), OxmlElement("w:bottom")
    for key, value in (("w:val", "single"), ("w:sz", "6"), ("w:space", "1"), ("w:color", "auto")):
        bottom.set(qn(key), value)
    border.append(bottom)
    paragraph._p.get_or_add_pPr().append(border)
