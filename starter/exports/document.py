"""A report as a small tree of blocks and styled spans, the one reading of its markdown that the
Word and PDF writers share.

The markdown is parsed by markdown-it-py's CommonMark parser with raw HTML off, so a `<script>`
quoted from a web page is text, never markup. Only http(s) URLs become links; a citation `[n]` of
a known source becomes a span that points at source n. The report's own sources list is dropped:
every writer lists the research's sources itself, numbered by their ids, each marked local or web,
each line made here once for all (`source_entries`, `entry_spans`): a paper as a reference in
CITATION_STYLE (authors, year, title, venue: starter/exports/references/csl.py), a web page or
an own document by its title; then its link and its marks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypedDict, Unpack

from markdown_it import MarkdownIt
from markdown_it.token import Token

from starter.exports.marks import cited_in, source_mark
from starter.exports.names import literal_names
from starter.exports.references import csl, references
from workflows.kit import verification
from workflows.kit.citations import CITATION
from workflows.models import ResearchResult

WEB_URL = re.compile(r"(?i)^https?://[^\s]+$")
#: How deep the parser follows nested quotes, lists and emphasis (markdown-it's own default, 20,
#: drops everything after a deeper construct; far deeper recursion could exhaust Python's stack).
MAX_NESTING = 100
#: Lists and quotes nested deeper than this are laid out flat: pages have only so much width.
MAX_DEPTH = 6
_SOURCES_HEADING = re.compile(
    r"(?i)^(?:\d+(?:\.\d+)*\.?\s+)?(?:sources?|references?|bibliography|works cited)$"
)


@dataclass(frozen=True)
class Span:
    """A piece of inline text with its style. `link` is an http(s) URL; `cite` a source id (the
    span's text is then the number, the brackets are spans of their own)."""

    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False
    link: str | None = None
    cite: int | None = None


@dataclass
class Heading:
    level: int
    spans: list[Span]


@dataclass
class Para:
    spans: list[Span]


@dataclass
class Code:
    text: str


@dataclass
class Rule:
    pass


@dataclass
class ListBlock:
    ordered: bool
    start: int
    items: list[list[Block]] = field(default_factory=list)


@dataclass
class Quote:
    blocks: list[Block]


@dataclass
class Table:
    """The first row is the header row."""

    rows: list[list[list[Span]]]


Block = Heading | Para | Code | Rule | ListBlock | Quote | Table


@dataclass(frozen=True)
class SourceEntry:
    id: int
    title: str
    url: str
    #: The URL when it may be a link (http or https), else None: a local file:// path is text.
    link: str | None
    #: Where it comes from, and whether the report cites it (marks.source_mark): "retracted" and
    #: "abstract only" too, for a paper.
    origin: str
    #: What the list calls it: a paper formatted in CITATION_STYLE (its italics kept), else the
    #: title in bold.
    reference: tuple[Span, ...] = ()


@dataclass
class Report:
    title: str
    query: str
    language: str
    blocks: list[Block]
    sources: list[SourceEntry]


def read(result: ResearchResult, *, listed: bool = True) -> Report:
    """The report of `result` as blocks: its leading `# Title` taken out as the title, headings
    shifted so the top one is level 1, the sources list replaced by `sources` (none when not
    LISTED: a reference file needs only the title), and the verification summary line appended
    when the report does not carry it yet."""
    known = {s.id for s in result.sources}
    markdown = verification.drop_unused_sources(result.report_markdown, set())
    blocks = _Walker(_parser().parse(markdown), known).blocks(None)
    blocks = _without_sources_heading(blocks)
    first = blocks[0] if blocks else None
    top = first if isinstance(first, Heading) and first.level == 1 else None
    if top is not None:
        blocks.pop(0)
    title = plain(top.spans) if top is not None else ""
    if result.verification is not None:
        note = verification.verification_note(result.verification)
        if note.strip("*") not in result.report_markdown:
            blocks.append(Para([Span(note.strip("*"), italic=True)]))
    sources = source_entries(result) if listed else []
    fallback = result.plan.title if result.plan and result.plan.title.strip() else result.query
    return Report(
        title.strip() or " ".join(fallback.split()),
        result.query,
        result.language,
        _shift_headings(blocks),
        sources,
    )


def source_entries(result: ResearchResult, style: str | None = None) -> list[SourceEntry]:
    """Every source of RESULT as its line of a sources list: papers formatted in STYLE (by default
    CITATION_STYLE), the rest by their titles."""
    cited = cited_in(result)
    papers = {}
    if any(s.is_paper for s in result.sources):
        style = style or csl.citation_style()
        papers = {r.source.id: r for r in references(result) if r.source.is_paper}
    entries = []
    for s in result.sources:
        pieces = csl.formatted(papers[s.id], style or csl.DEFAULT_STYLE) if s.id in papers else None
        reference = (
            tuple(Span(text, italic=italic, bold=bold) for text, italic, bold in pieces)
            if pieces
            else (Span(" ".join(s.title.split()) or s.url, bold=True),)
        )
        entries.append(
            SourceEntry(s.id, s.title, s.url, web_link(s.url), source_mark(s, cited), reference)
        )
    return entries


def entry_spans(entry: SourceEntry) -> list[Span]:
    """A sources list's line: `[n] REFERENCE — URL (marks)`, the URL a link when it may be one.
    The Markdown, Word and PDF lists write it as it is; `check` reads it back."""
    return [
        Span(f"[{entry.id}] "),
        *entry.reference,
        Span(" — "),
        Span(entry.url, link=entry.link),
        Span(f" ({entry.origin})"),
    ]


def plain(spans: list[Span]) -> str:
    return "".join(s.text for s in spans)


def web_link(url: str) -> str | None:
    return url if WEB_URL.match(url) else None


def _parser() -> MarkdownIt:
    md = literal_names(
        _WebLinksOnly("commonmark", {"html": False, "maxNesting": MAX_NESTING}).enable("table")
    )
    # Escaped `\[7\]` stays apart from its text, so it is never read as a citation.
    md.disable("text_join")
    return md


class _WebLinksOnly(MarkdownIt):
    """CommonMark whose links are http(s) URLs only: markdown-it asks `validateLink` of each."""

    def validateLink(self, url: str) -> bool:  # noqa: N802 - markdown-it's name
        return bool(WEB_URL.match(url))


class _Walker:
    """Turns markdown-it's flat token stream into nested blocks."""

    def __init__(self, tokens: list[Token], known: set[int]) -> None:
        self.tokens, self.at, self.known = tokens, 0, known
        self.depth = 0

    def next(self) -> Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def blocks(self, close: str | None) -> list[Block]:
        out: list[Block] = []
        while self.at < len(self.tokens):
            token = self.next()
            if token.type == close:
                break
            out += self.block(token)
        return out

    def block(self, token: Token) -> list[Block]:
        kind = token.type
        if kind in ("heading_open", "paragraph_open"):
            spans = self.inline()
            self.next()
            return [Heading(int(token.tag[1:]), spans) if kind == "heading_open" else Para(spans)]
        if kind in ("fence", "code_block"):
            return [Code(token.content.rstrip("\n"))]
        if kind == "hr":
            return [Rule()]
        if kind in ("bullet_list_open", "ordered_list_open"):
            return self.list_block(token)
        if kind == "blockquote_open":
            inner = self.nested("blockquote_close")
            return [Quote(inner)] if self.depth < MAX_DEPTH else inner
        if kind == "table_open":
            return [self.table()]
        return []

    def nested(self, close: str) -> list[Block]:
        self.depth += 1
        try:
            return self.blocks(close)
        finally:
            self.depth -= 1

    def list_block(self, opening: Token) -> list[Block]:
        """A list; nested too deep, its items as paragraphs that start with their marker."""
        ordered = opening.type == "ordered_list_open"
        block = ListBlock(ordered, int(opening.attrGet("start") or 1) if ordered else 1)
        close = opening.type.replace("_open", "_close")
        while (token := self.next()).type != close:
            if token.type == "list_item_open":
                block.items.append(self.nested("list_item_close"))
        if self.depth < MAX_DEPTH:
            return [block]
        flat: list[Block] = []
        for n, item in enumerate(block.items, start=block.start):
            marker = Span(f"{n}. " if ordered else "• ")
            lead = item[0] if item and isinstance(item[0], Para) else None
            flat += [
                Para([marker, *(lead.spans if lead is not None else [])]),
                *item[0 if lead is None else 1 :],
            ]
        return flat

    def table(self) -> Table:
        rows: list[list[list[Span]]] = []
        while (token := self.next()).type != "table_close":
            if token.type == "tr_open":
                rows.append([])
            elif token.type in ("th_open", "td_open"):
                rows[-1].append(self.inline())
        return Table(rows)

    def inline(self) -> list[Span]:
        token = self.next()
        return _spans(token.children or [], self.known) if token.type == "inline" else []


class _Style(TypedDict):
    """What a span takes from the markup around it."""

    bold: bool
    italic: bool
    link: str | None


def _spans(children: list[Token], known: set[int]) -> list[Span]:
    spans: list[Span] = []
    bold = italic = 0
    link: list[str | None] = []
    for token in children:
        style = _Style(bold=bold > 0, italic=italic > 0, link=link[-1] if link else None)
        kind = token.type
        if kind == "text":
            spans += (
                _cited(token.content, known, **style)
                if not style["link"]
                else [Span(token.content, **style)]
            )
        elif kind == "text_special":
            spans.append(Span(token.content, **style))
        elif kind in ("softbreak", "hardbreak"):
            spans.append(Span(" " if kind == "softbreak" else "\n", **style))
        elif kind == "code_inline":
            spans.append(Span(token.content, code=True, **style))
        elif kind == "image":
            src = web_link(str(token.attrGet("src") or ""))
            spans.append(
                Span(
                    f"[image: {token.content or 'image'}]",
                    bold=style["bold"],
                    italic=style["italic"],
                    link=src or style["link"],
                )
            )
        elif kind in ("strong_open", "strong_close"):
            bold += 1 if kind == "strong_open" else -1
        elif kind in ("em_open", "em_close"):
            italic += 1 if kind == "em_open" else -1
        elif kind == "link_open":
            link.append(web_link(str(token.attrGet("href") or "")))
        elif kind == "link_close" and link:
            link.pop()
    return spans


def _cited(text: str, known: set[int], **style: Unpack[_Style]) -> list[Span]:
    """Text with each `[n, m]` split into spans: a known id points at its source."""
    spans: list[Span] = []
    last = 0
    for match in CITATION.finditer(text):
        spans.append(Span(text[last : match.start()] + "[", **style))
        for i, part in enumerate(match.group(1).split(",")):
            if i:
                spans.append(Span(", ", **style))
            n = int(part)
            spans.append(Span(str(n), cite=n if n in known else None, **style))
        spans.append(Span("]", **style))
        last = match.end()
    spans.append(Span(text[last:], **style))
    return [s for s in spans if s.text]


def _without_sources_heading(blocks: list[Block]) -> list[Block]:
    """The report's "## Sources" heading, left empty once its entries are gone, goes too (what
    stays under it is at most a rule and italic notes, such as the verification line)."""
    return [b for i, b in enumerate(blocks) if not _empty_sources_heading(b, blocks[i + 1 :])]


def _empty_sources_heading(block: Block, after: list[Block]) -> bool:
    if not isinstance(block, Heading) or not _SOURCES_HEADING.match(plain(block.spans).strip()):
        return False
    for below in after:
        if isinstance(below, Heading) and below.level <= block.level:
            break
        if not (
            isinstance(below, Rule)
            or isinstance(below, Para)
            and all(s.italic for s in below.spans)
        ):
            return False
    return True


def _shift_headings(blocks: list[Block]) -> list[Block]:
    levels = [b.level for b in blocks if isinstance(b, Heading)]
    shift = min(levels) - 1 if levels else 0
    for block in blocks:
        if isinstance(block, Heading):
            block.level -= shift
    return blocks
