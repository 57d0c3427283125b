"""Files to documents: markdown, HTML and plain text in a corpus folder, as title, paragraphs and
sections.

What a document is (`Document`: what a citation points to), its sections (what the index ranks:
a heading and the text under it), and the stamp that decides whether its file must be read again.
PDF and Word files are read in `binary.py`; all of them in an extraction child (`reader.py`).

What a file says is cleaned where it becomes a document (`document`): terminal escape sequences,
control characters but newline and tab, and bidirectional overrides and isolates are removed from
titles, headings and text, so a heading cannot retitle a terminal or reverse a line of a report.
A text file that is binary (NUL bytes, or a fifth of its characters controls or undecodable) is
refused rather than indexed as text.

Why sections: a chapter answers many questions, and the paragraphs that answer one of them sit
under one heading. Ranked whole, a long chapter that mentions a query's words once in each of its
parts can beat the short chapter that explains them; ranked by section (and the heading weighed
like a title), the explaining part wins, and the document it belongs to is what a research reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from workflows.text import split_paragraphs, without_controls

#: Sections longer than this are cut into windows of whole paragraphs: a section is ranked as one
#: piece of text, and past a screenful BM25's length normalisation starts to hide what it says.
SECTION_CHARS = 2400
#: A text file is binary when it has a NUL byte, or when more than this share of its first
#: BINARY_SAMPLE characters are controls or undecodable bytes (real text has next to none).
BINARY_SHARE = 0.2
BINARY_SAMPLE = 65536
_SUSPICIOUS = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f\ufffd]")


class UnreadableDocument(ValueError):
    """A file that cannot be read into text; the message says why, for the index's list of skips."""


@dataclass(frozen=True)
class Section:
    #: The heading path ("Ownership Rules > Variable Scope"), or "" for text before any heading.
    heading: str
    text: str


@dataclass(frozen=True)
class Document:
    url: str
    title: str
    body: str
    #: The document's parts under their headings; empty: windows of the body's paragraphs.
    parts: tuple[Section, ...] = ()

    def sections(self) -> list[Section]:
        """What the index ranks: each part (long ones cut into windows), never an empty one."""
        parts = self.parts or (Section("", self.body),)
        out = []
        for part in parts:
            for window in _windows(split_paragraphs(part.text)):
                out.append(Section(part.heading, window))
            if not part.text.strip() and part.heading:
                out.append(Section(part.heading, ""))
        return out or [Section("", "")]


def _windows(paragraphs: list[str], size: int = SECTION_CHARS) -> list[str]:
    """Consecutive paragraphs, about `size` characters a window (a longer paragraph alone)."""
    windows: list[str] = []
    current: list[str] = []
    length = 0
    for paragraph in paragraphs:
        if current and length + len(paragraph) > size:
            windows.append("\n\n".join(current))
            current, length = [], 0
        current.append(paragraph)
        length += len(paragraph) + 2
    if current:
        windows.append("\n\n".join(current))
    return windows


#: A source file's (mtime_ns, size): what decides whether it must be read again.
Stamp = tuple[int, int]


def stamp_of(path: Path) -> Stamp | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def text_document(path: Path, data: bytes) -> Document:
    """A markdown, HTML or plain text file's document, from its bytes."""
    raw = clean(_decode(data))
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        title, parts = _html_text(raw)
    elif suffix in (".md", ".markdown"):
        title, parts = _markdown_text(raw)
    else:
        title, parts = "", [Section("", raw)]
    return document(path.as_uri(), title or path.name, parts)


def _decode(data: bytes) -> str:
    """UTF-8 (UTF-16 with its byte order mark); refused when it is binary rather than text."""
    text = data.decode(
        "utf-16" if data.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8", errors="replace"
    )
    sample = text[:BINARY_SAMPLE]
    if "\x00" in text or len(_SUSPICIOUS.findall(sample)) > BINARY_SHARE * len(sample):
        raise UnreadableDocument("binary content (NUL bytes or control characters), not text")
    return text


def clean(text: str) -> str:
    """`text` without terminal escape sequences, control characters (but newline and tab) and
    bidirectional overrides: what a file says can neither drive a terminal nor reorder a line."""
    from activities.web.extraction import (
        strip_controls,
    )  # loaded in the extraction children already

    plain = without_controls(text)  # a quick scan; whole escape sequences only where there is one
    return plain if plain == text else without_controls(strip_controls(text))


def document(url: str, title: str, parts: list[Section]) -> Document:
    """A document from its parts: title, headings and texts cleaned and normalised, the body
    their headings and texts."""
    kept = tuple(
        Section(" ".join(clean(p.heading).split()), normalise(clean(p.text))) for p in parts
    )
    kept = tuple(p for p in kept if p.text or p.heading)
    body = "\n\n".join(
        "\n\n".join(x for x in (p.heading.rsplit(HEADING_SEPARATOR, 1)[-1], p.text) if x)
        for p in kept
    )
    return Document(url=url, title=plain_title(clean(title)), body=body, parts=kept)


#: Markdown a title may carry from wherever it was typed (a Word, PDF or HTML document written in
#: Markdown, a heading "# Title", "**bold**", `code`): shown as words, never as marks.
_TITLE_HEADING = re.compile(r"^\s*#{1,6}\s+")
_TITLE_EMPHASIS = re.compile(r"(\*\*|\*|`)(\S(?:.*?\S)?)\1|(?<!\w)(__|_)(\S(?:.*?\S)?)\3(?!\w)")


def plain_title(title: str) -> str:
    """TITLE on one line without Markdown's marks: `# **The** [bells](x)` is "The bells"."""
    text = _MD_LINK.sub(r"\1", " ".join(title.split()))
    text = _TITLE_HEADING.sub("", text)
    for _ in range(3):  # nested marks: ***both***, **`code`**
        text = _TITLE_EMPHASIS.sub(lambda m: m.group(2) or m.group(4), text)
    return text.strip()


def normalise(text: str) -> str:
    """Paragraphs with collapsed whitespace, one blank line apart: what read() and snippets use."""
    return "\n\n".join(split_paragraphs(text))


#: Joins the headings of a heading path: "Ownership Rules > Variable Scope".
HEADING_SEPARATOR = " > "


class _Outline:
    """Headings met in document order, as the path of the current section. The heading that is
    the document's own title heads every path, so it is left out of them."""

    def __init__(self) -> None:
        self.levels: list[tuple[int, str]] = []
        self.title: tuple[int, str] | None = None

    def enter(self, level: int, heading: str, is_title: bool = False) -> str:
        if is_title and self.title is None:
            self.title = (level, heading)
        self.levels = [(n, h) for n, h in self.levels if n < level] + [(level, heading)]
        return HEADING_SEPARATOR.join(h for n, h in self.levels if h and (n, h) != self.title)


_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_DIRECTIVE = re.compile(r"\{\{#[^}]*\}\}")  # mdBook {{#include ...}}: the target is not here
_MD_COMMENT = re.compile(r"<!--.*?-->", re.S)
# Only real HTML tags: `Box<T>` or `Vec<String>` in Rust prose must survive.
_MD_TAG = re.compile(
    r"</?(?:a|span|div|p|br|hr|img|sup|sub|em|strong|code|pre|kbd|details|summary|table|thead|"
    r"tbody|tr|td|th|ul|ol|li|figure|figcaption|section|Listing)(?:\s[^<>]*)?/?>"
)
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])")
_MD_LINK_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+.*$", re.M)
_MD_QUOTE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+", re.M)


def _markdown_text(raw: str) -> tuple[str, list[Section]]:
    """(first heading, sections) of a markdown file: markup that means nothing to a reader
    (mdBook directives, HTML comments and tags, link targets, quote marks) goes; code stays."""
    text = _MD_QUOTE.sub("", _MD_COMMENT.sub("", raw))
    text = _MD_DIRECTIVE.sub("", text)
    text = _MD_LINK_DEF.sub("", text)
    text = _MD_IMAGE.sub(r"\1", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_TAG.sub("", text)
    title = ""
    lines: list[str] = []
    parts: list[Section] = []
    heading_path = ""
    outline = _Outline()
    fence: list[str] | None = None
    for line in text.splitlines():
        if _MD_FENCE.match(line):
            if fence is None:
                fence = [line.strip()]
            else:
                if any(code.strip() for code in fence[1:]):  # drop blocks left empty
                    lines.extend([*fence, line.strip()])
                fence = None
            continue
        if fence is not None:
            fence.append(line)
            continue
        heading = _MD_HEADING.match(line)
        if heading:
            level, name = len(heading.group(1)), heading.group(2).strip()
            parts.append(Section(heading_path, "\n".join(lines)))
            # The first heading, before any text, is the document's title (mdBook chapters open with "##").
            opening = not title and not any(written.strip() for written in lines) and not parts[1:]
            heading_path, lines = outline.enter(level, name, is_title=opening), []
            title = title or name
        else:
            lines.append(line)
    if fence:
        lines.extend(fence)
    parts.append(Section(heading_path, "\n".join(lines)))
    return title.strip(), parts


class _HTMLText(HTMLParser):
    """Visible text of an HTML page in sections (cut at h1-h6), plus its <title> and first <h1>."""

    SKIP = frozenset({"script", "style", "nav", "footer", "noscript", "template", "svg"})
    HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
    BLOCK = frozenset(
        {
            "p",
            "div",
            "br",
            "li",
            "ul",
            "ol",
            "dl",
            "dt",
            "dd",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "tr",
            "table",
            "section",
            "article",
            "main",
            "header",
            "aside",
            "pre",
            "blockquote",
            "figure",
            "figcaption",
            "hr",
            "form",
            "details",
            "summary",
        }
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[Section] = []
        self.parts: list[str] = []
        self.title = ""
        self.h1 = ""
        self._heading_path = ""
        self._outline = _Outline()
        self._heading: tuple[int, list[str]] | None = None
        self._skipping = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self.SKIP:
            self._skipping += 1
        elif tag in self.HEADINGS and not self._skipping:
            self.sections.append(Section(self._heading_path, "".join(self.parts)))
            self.parts = []
            self._heading = (self.HEADINGS[tag], [])
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self.SKIP:
            self._skipping = max(0, self._skipping - 1)
        elif tag in self.HEADINGS and self._heading is not None:
            level, words = self._heading
            text = " ".join("".join(words).split())
            is_title = level == 1 and not self.h1 and " ".join(self.title.split()) in ("", text)
            if level == 1 and not self.h1:
                self.h1 = text
            self._heading_path = (
                self._outline.enter(level, text, is_title) if text else self._heading_path
            )
            self._heading = None
            self.parts = []
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skipping:
            if self._heading is not None:
                self._heading[1].append(data)
            else:
                self.parts.append(data)

    def result(self) -> list[Section]:
        return [*self.sections, Section(self._heading_path, "".join(self.parts))]


def _html_text(raw: str) -> tuple[str, list[Section]]:
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    title = " ".join((parser.title or parser.h1).split())
    return title, parser.result()
