"""The report as a PDF (reportlab's platypus): the same blocks as the Word document, as Paragraph,
ListFlowable, XPreformatted and Table flowables, each citation `[n]` a link to source n in the
numbered Sources section, http(s) URLs as links. The PDF carries its title, author, subject and
language. reportlab was chosen because it is BSD-licensed, installs as a wheel on every platform,
ships TrueType fonts inside the wheel and needs no system libraries (WeasyPrint needs Pango).

Every text reaches reportlab's paragraph mini-markup through `Faces.markup`, which escapes it, so
text from a web page can never become a tag; the only tags are the ones written here.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from io import BytesIO
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, StyleSheet1, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import (
    Flowable,
    HRFlowable,
    Indenter,
    ListFlowable,
    ListItem,
    Paragraph,
    SimpleDocTemplate,
    TableStyle,
    XPreformatted,
)
from reportlab.platypus import (
    Table as TableFlowable,
)

from starter.exports import fonts
from starter.exports.document import (
    Block,
    Code,
    Heading,
    ListBlock,
    Para,
    Quote,
    Report,
    SourceEntry,
    Span,
    Table,
    entry_spans,
)

AUTHOR = "Deep research on Temporal"
LINK_COLOR = "#1a5fb4"
MARGIN = 20 * mm
#: Code lines longer than this (a wide character counts twice) are wrapped: a PDF page does not scroll.
CODE_COLUMNS = 88
#: Words longer than this are cut into pieces of WORD_PIECE characters (see _break_long_words).
LONG_WORD = 200
WORD_PIECE = 40
#: A paragraph longer than this is laid out as several: reportlab breaks all of what is left of a
#: paragraph into lines again for every page it continues on (quadratic in its length).
PARA_CHARS = 4000
_LONG_WORD = re.compile(rf"\S{{{LONG_WORD + 1},}}")


def write(report: Report) -> bytes:
    out = BytesIO()
    doc = SimpleDocTemplate(
        out,
        pagesize=A4,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=MARGIN,
        title=report.title,
        author=AUTHOR,
        subject=report.query,
        creator=AUTHOR,
        lang=report.language,
    )
    story = _Story(report.language)
    doc.build(story.build(report))
    return out.getvalue()


def destination(source_id: int) -> str:
    return f"source-{source_id}"


def _styles() -> StyleSheet1:
    sample = getSampleStyleSheet()
    sheet = StyleSheet1()
    body = ParagraphStyle(
        "Body", parent=sample["BodyText"], fontName=fonts.SANS, fontSize=10, leading=14
    )
    sheet.add(body)
    sheet.add(
        ParagraphStyle(
            "Title", parent=sample["Title"], fontName=fonts.SANS_BOLD, fontSize=22, leading=27
        )
    )
    for level in range(1, 7):
        sheet.add(
            ParagraphStyle(
                f"Heading{level}",
                parent=sample[f"Heading{level}"],
                fontName=fonts.SANS_BOLD,
                spaceBefore=10,
            )
        )
    sheet.add(
        ParagraphStyle(
            "Code",
            parent=body,
            fontName=fonts.MONO,
            fontSize=8.5,
            leading=11,
            backColor=colors.HexColor("#f4f4f4"),
            borderPadding=4,
            spaceBefore=4,
            spaceAfter=8,
        )
    )
    sheet.add(
        ParagraphStyle("Cell", parent=body, fontSize=9, leading=12, spaceBefore=0, spaceAfter=0)
    )
    sheet.add(
        ParagraphStyle("Source", parent=body, leftIndent=18, firstLineIndent=-18, spaceAfter=4)
    )
    return sheet


class _Story:
    def __init__(self, language: str) -> None:
        self.faces = fonts.Faces(language)
        self.styles = _styles()

    def build(self, report: Report) -> list[Flowable]:
        story: list[Flowable] = [Paragraph(self.faces.markup(report.title), self.styles["Title"])]
        story += self.blocks(report.blocks)
        story += self.sources(report.sources)
        return story

    def blocks(self, blocks: list[Block]) -> list[Flowable]:
        return [flowable for block in blocks for flowable in self.block(block)]

    def block(self, block: Block) -> list[Flowable]:
        if isinstance(block, Heading):
            return [
                Paragraph(self.markup(block.spans), self.styles[f"Heading{min(block.level, 6)}"])
            ]
        if isinstance(block, Para):
            return [
                Paragraph(self.markup(part), self.styles["Body"]) for part in _parts(block.spans)
            ]
        if isinstance(block, Code):
            text = "\n".join(_wrap_code(line) for line in block.text.split("\n"))
            return [XPreformatted(self.faces.markup(text, mono=True), self.styles["Code"])]
        if isinstance(block, ListBlock):
            return [self.list_block(block)]
        if isinstance(block, Quote):
            return [Indenter(left=18), *self.blocks(block.blocks), Indenter(left=-18)]
        if isinstance(block, Table):
            return self.table(block)
        return [
            HRFlowable(width="100%", thickness=0.5, color=colors.grey, spaceBefore=6, spaceAfter=6)
        ]

    def list_block(self, block: ListBlock) -> ListFlowable:
        items = [
            ListItem(self.blocks(item) or [Paragraph("", self.styles["Body"])])
            for item in block.items
        ]
        # types-reportlab leaves ListItem out of what a ListFlowable holds; reportlab takes it.
        if block.ordered:
            return ListFlowable(
                items,  # type: ignore[arg-type]
                bulletType="1",
                start=block.start,
                bulletFormat="%s.",
                bulletFontName=fonts.SANS,
                bulletFontSize=10,
            )
        return ListFlowable(
            items,  # type: ignore[arg-type]
            bulletType="bullet",
            start="\u2022",
            bulletFontName=fonts.SANS,
            bulletFontSize=10,
        )

    def table(self, block: Table) -> list[Flowable]:
        columns = max((len(row) for row in block.rows), default=0)
        if not columns:
            return []
        cell = self.styles["Cell"]
        data = [
            [Paragraph(self.markup(spans, bold=r == 0), cell) for spans in row]
            + [""] * (columns - len(row))
            for r, row in enumerate(block.rows)
        ]
        # Widths in % of the room where the table stands (a list item has less); a row taller than
        # a page is split inside the row.
        table = TableFlowable(
            data,
            colWidths=[f"{100 / columns:.4f}%"] * columns,
            repeatRows=1,
            splitInRow=1,
            hAlign="LEFT",
        )
        table.setStyle(
            TableStyle(
                [
                    ("GRID", (0, 0), (-1, -1), 0.5, colors.grey),
                    ("VALIGN", (0, 0), (-1, -1), "TOP"),
                    ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
                ]
            )
        )
        return [table]

    def sources(self, sources: list[SourceEntry]) -> list[Flowable]:
        if not sources:
            return []
        story: list[Flowable] = [Paragraph("Sources", self.styles["Heading1"])]
        for source in sources:
            spans = entry_spans(source)
            anchor = f'<a name="{destination(source.id)}"/>'
            story.append(Paragraph(anchor + self.markup(spans), self.styles["Source"]))
        return story

    def markup(self, spans: list[Span], *, bold: bool = False) -> str:
        return "".join(self.span(span, bold) for span in spans)

    def span(self, span: Span, bold: bool) -> str:
        text = self.faces.markup(_break_long_words(span.text), mono=span.code).replace(
            "\n", "<br/>"
        )
        if span.code:
            text = f'<font face="{fonts.MONO}">{text}</font>'
        if span.bold or bold:
            text = f"<b>{text}</b>"
        if span.italic:
            text = f"<i>{text}</i>"
        if span.cite is not None:
            return f'<a href="#{destination(span.cite)}" color="{LINK_COLOR}">{text}</a>'
        if span.link:
            return f'<a href="{escape(span.link, {chr(34): "&quot;"})}" color="{LINK_COLOR}"><u>{text}</u></a>'
        return text


def _parts(spans: list[Span]) -> list[list[Span]]:
    """SPANS cut into runs of at most about PARA_CHARS characters (a long span is cut too)."""
    if sum(len(span.text) for span in spans) <= PARA_CHARS:
        return [spans]
    parts: list[list[Span]] = [[]]
    size = 0
    for span in spans:
        text = span.text
        while text:
            room = PARA_CHARS - size
            if room <= 0:
                parts.append([])
                size, room = 0, PARA_CHARS
            piece, text = text[:room], text[room:]
            parts[-1].append(replace(span, text=piece))
            size += len(piece)
    return [part for part in parts if part]


def _break_long_words(text: str) -> str:
    """TEXT with words longer than LONG_WORD cut by spaces into pieces of WORD_PIECE characters.
    reportlab splits an overlong word one line at a time by measuring all of what is left, again
    for every page: a 200,000-character word took minutes (quadratic); pieces are laid out as words."""
    if len(text) <= LONG_WORD:
        return text
    return _LONG_WORD.sub(
        lambda m: " ".join(
            m.group(0)[i : i + WORD_PIECE] for i in range(0, len(m.group(0)), WORD_PIECE)
        ),
        text,
    )


def _wrap_code(line: str) -> str:
    """A code line cut into pieces of at most CODE_COLUMNS columns."""
    pieces, piece, width = [], "", 0
    for char in line:
        size = 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if width + size > CODE_COLUMNS:
            pieces.append(piece)
            piece, width = "", 0
        piece, width = piece + char, width + size
    return "\n".join([*pieces, piece])
