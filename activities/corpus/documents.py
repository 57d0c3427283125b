"""Files to documents: markdown, HTML and plain text in a corpus folder, as title and paragraphs.

What a document is (`Document`), and the stamp that decides whether its file must be read again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from workflows.text import split_paragraphs


@dataclass(frozen=True)
class Document:
    url: str
    title: str
    body: str


#: A source file's (mtime_ns, size): what decides whether it must be read again.
Stamp = tuple[int, int]

def _stamp(path: Path) -> Stamp | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _file_document(path: Path) -> Document:
    raw = path.read_text(encoding="utf-8", errors="replace")
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        title, text = _html_text(raw)
    elif suffix in (".md", ".markdown"):
        title, text = _markdown_text(raw)
    else:
        title, text = "", raw
    return Document(url=path.as_uri(), title=title or path.name, body=_normalise(text))


def _normalise(text: str) -> str:
    """Paragraphs with collapsed whitespace, one blank line apart: what read() and snippets use."""
    return "\n\n".join(split_paragraphs(text))


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


def _markdown_text(raw: str) -> tuple[str, str]:
    """(first heading, readable text) of a markdown file: markup that means nothing to a reader
    (mdBook directives, HTML comments and tags, link targets, quote marks) goes; code stays."""
    text = _MD_QUOTE.sub("", _MD_COMMENT.sub("", raw))
    text = _MD_DIRECTIVE.sub("", text)
    text = _MD_LINK_DEF.sub("", text)
    text = _MD_IMAGE.sub(r"\1", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_TAG.sub("", text)
    title = ""
    lines: list[str] = []
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
            title = title or heading.group(2)
            lines.extend(["", heading.group(2), ""])
        else:
            lines.append(line)
    if fence:
        lines.extend(fence)
    return title.strip(), "\n".join(lines)


class _HTMLText(HTMLParser):
    """Visible text of an HTML page, in paragraphs, plus its <title> and first <h1>."""

    SKIP = frozenset({"script", "style", "nav", "footer", "noscript", "template", "svg"})
    BLOCK = frozenset(
        {
            "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5",
            "h6", "tr", "table", "section", "article", "main", "header", "aside", "pre",
            "blockquote", "figure", "figcaption", "hr", "form", "details", "summary",
        }
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.h1 = ""
        self._skipping = 0
        self._in_title = False
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self.SKIP:
            self._skipping += 1
        elif tag == "h1" and not self.h1:
            self._in_h1 = True
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self.SKIP:
            self._skipping = max(0, self._skipping - 1)
        elif tag == "h1":
            self._in_h1 = False
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skipping:
            self.parts.append(data)
            if self._in_h1:
                self.h1 += data


def _html_text(raw: str) -> tuple[str, str]:
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    title = " ".join((parser.title or parser.h1).split())
    return title, "".join(parser.parts)
