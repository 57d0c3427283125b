"""PDF and Word files of a corpus folder, as documents a citation can point into.

Both run in an extraction child of `activities/web/bounded.py` (see `reader.py`), with its memory
and time limits: a file someone dropped into the folder is as untrusted as a page from the web, and
a hostile one costs that file, never the worker.

- **PDF**: one document per page, `file:///x.pdf#page=3`, titled "Title, page 3": a citation then
  says where the sentence is, and the reader opens the page (PDF viewers honour `#page=`). The text
  comes from `activities/web/extraction.py` (pypdfium2, pypdf as the fallback). The title is
  the PDF's Title metadata unless that is a producer's placeholder ("Microsoft Word - x.docx",
  "untitled"), else the first line of the first page, else the file name.
- **Word (.docx)**: read directly as the zip of XML parts it is (ECMA-376), rather than with
  python-docx: we need only the paragraphs, headings and tables of `word/document.xml`, the style
  names of `word/styles.xml` and the title of `docProps/core.xml`. Each part is inflated at most to
  MAX_DOCX_PART_BYTES, counted as it is read (a zip bomb costs nothing), and parsed as a stream
  (lxml `iterparse`, each element dropped once read) with entity resolution and network access off:
  no tree is ever built, so memory stays flat however many elements a part has (50 MiB of empty
  paragraphs once cost 2.5-5.8 GB as a tree), a part of more than MAX_DOCX_ELEMENTS elements is
  refused, and reading stops at MAX_DOCX_CHARS of text. Headings are paragraphs whose style is a
  built-in "heading N" or "Title" (style *names* are English in every Word locale; the ids are
  not) or that carry an outline level.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from activities.corpus.documents import (
    HEADING_SEPARATOR,
    Document,
    Section,
    UnreadableDocument,
    document,
)

if TYPE_CHECKING:
    from lxml.etree import _Element

#: The most a .docx part may inflate to; the largest real documents' text is a few MB.
MAX_DOCX_PART_BYTES = 50 * 1024 * 1024
#: XML elements one part may have: a 300-page report has a few hundred thousand.
MAX_DOCX_ELEMENTS = 2_000_000
#: Text read from one Word document, as from one PDF; the rest is left out.
MAX_DOCX_CHARS = 1_000_000
PDF_SUFFIXES = frozenset({".pdf"})
DOCX_SUFFIXES = frozenset({".docx"})
_PLACEHOLDER_TITLE = re.compile(
    r"^(?:microsoft\s+\w+\s+-\s+.*|untitled.*|document\d*|\S+\.(?:docx?|pdf|tex|odt))$", re.I
)

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
DC = "{http://purl.org/dc/elements/1.1/}"

__all__ = ["DOCX_SUFFIXES", "PDF_SUFFIXES", "UnreadableDocument", "docx_document", "pdf_documents"]


# --- PDF ----------------------------------------------------------------------------------------


def pdf_documents(path: Path, data: bytes) -> list[Document]:
    """One document per page with text; pages without text (scans) are left out."""
    from activities.web.extraction import PAGE_BREAK, PDF_PAGES_TYPE, extract

    try:
        extracted = extract(data, PDF_PAGES_TYPE)
    except ValueError as err:  # the readers' own verdict: corrupt, truncated, encrypted
        raise UnreadableDocument(str(err).split(". ")[0]) from None
    pages = extracted.text.split(PAGE_BREAK)
    if not any(p.strip() for p in pages):
        raise UnreadableDocument("the PDF has no text layer (a scan?); nothing to search")
    title = _pdf_title(extracted.title, pages, path)
    base = path.as_uri()
    return [
        document(
            f"{base}#page={number}",
            f"{title}, page {number}" if len(pages) > 1 else title,
            [Section("", text)],
        )
        for number, text in enumerate(pages, 1)
        if text.strip()
    ]


def _pdf_title(metadata: str, pages: list[str], path: Path) -> str:
    if metadata.strip() and not _PLACEHOLDER_TITLE.match(metadata.strip()):
        return metadata.strip()
    first = next((line.strip() for page in pages for line in page.splitlines() if line.strip()), "")
    return first[:120] if 3 <= len(first) <= 120 else path.name


# --- Word ---------------------------------------------------------------------------------------


def docx_document(path: Path, data: bytes) -> Document:
    """The document's sections under its headings; tables as rows of cells."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            _member(package, "word/document.xml", required=True)
            styles = _style_names(package)
            title = _core_title(package)
            blocks = _Body(styles).read(_elements(package, "word/document.xml"))
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, OSError, EOFError) as err:
        raise UnreadableDocument(f"not a Word document (.docx is a zip archive): {err}") from None
    title, parts = _outline(blocks, title)
    if not any(p.text.strip() for p in parts):
        raise UnreadableDocument("the Word document has no text")
    return document(path.as_uri(), title or path.stem, parts)


def _member(package: zipfile.ZipFile, name: str, required: bool = False) -> zipfile.ZipInfo | None:
    try:
        info = package.getinfo(name)
    except KeyError:
        if required:
            raise UnreadableDocument(f"not a Word document: it has no {name}") from None
        return None
    if info.file_size > MAX_DOCX_PART_BYTES:
        raise UnreadableDocument(
            f"{name} inflates to {info.file_size} bytes, more than {MAX_DOCX_PART_BYTES}"
        )
    return info


class _Capped:
    """A part as it inflates, refused past MAX_DOCX_PART_BYTES (the header's size may lie)."""

    def __init__(self, member: IO[bytes], name: str) -> None:
        self.member, self.name, self.read_bytes = member, name, 0

    def read(self, size: int = -1) -> bytes:
        data = self.member.read(size if 0 < size <= 1 << 20 else 1 << 20)
        self.read_bytes += len(data)
        if self.read_bytes > MAX_DOCX_PART_BYTES:
            raise UnreadableDocument(
                f"{self.name} inflates to more than {MAX_DOCX_PART_BYTES} bytes"
            )
        return data


def _elements(package: zipfile.ZipFile, name: str) -> Iterator[tuple[str, _Element]]:
    """("start" | "end", element) of a part, streamed: each element is emptied and dropped from its
    parent once its end was seen, so only the open elements are in memory."""
    import lxml.etree

    info = _member(package, name)
    if info is None:
        return
    with package.open(info) as member:
        events = lxml.etree.iterparse(
            _Capped(member, name),
            events=("start", "end"),
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
        )
        count = 0
        try:
            for event, element in events:
                yield event, element
                if event == "end":
                    count += 1
                    if count > MAX_DOCX_ELEMENTS:
                        raise UnreadableDocument(
                            f"{name} has more than {MAX_DOCX_ELEMENTS:,} XML elements"
                        )
                    element.clear(keep_tail=True)
                    parent = element.getparent()  # None for the root: a comment before it stays
                    while parent is not None and element.getprevious() is not None:
                        del parent[0]
        except lxml.etree.XMLSyntaxError as err:
            raise UnreadableDocument(f"{name} is not well-formed XML: {err}") from None


def _style_names(package: zipfile.ZipFile) -> dict[str, str]:
    """Style id → lower-case style name ("Heading1" → "heading 1", "Titre1" → "heading 1")."""
    names: dict[str, str] = {}
    for event, element in _elements(package, "word/styles.xml"):
        parent = element.getparent() if event == "end" and element.tag == f"{W}name" else None
        if parent is not None and parent.tag == f"{W}style":
            names[parent.get(f"{W}styleId", "")] = (element.get(f"{W}val") or "").strip().lower()
    return names


def _core_title(package: zipfile.ZipFile) -> str:
    for event, element in _elements(package, "docProps/core.xml"):
        if event == "end" and element.tag == f"{DC}title":
            return " ".join((element.text or "").split())
    return ""


def _heading_level(style: str, outline: str, styles: dict[str, str]) -> int | None:
    """0 for the Title style, N for "heading N" or an outline level N-1, None for body text."""
    name = styles.get(style, style.lower())
    if name == "title":
        return 0
    heading = re.fullmatch(r"heading\s*([1-9])", name)
    if heading:
        return int(heading.group(1))
    if outline.isdigit() and int(outline) < 9:
        return int(outline) + 1
    return None


class _Body:
    """`word/document.xml` as blocks in document order, gathered as it streams: (heading level or
    None, text) for each top-level paragraph, (None, rows) for each table. Text in a text box joins
    its paragraph; a table row is its cells' text separated by " | "; deleted text (tracked changes)
    and field codes are left out."""

    CONTAINERS = frozenset({f"{W}p", f"{W}tc", f"{W}tr", f"{W}tbl"})
    TEXT = {f"{W}tab": "\t", f"{W}br": "\n", f"{W}cr": "\n"}

    def __init__(self, styles: dict[str, str]) -> None:
        self.styles = styles
        self.blocks: list[tuple[int | None, str]] = []
        self.chars = 0
        #: The open paragraphs, cells, rows and tables: [tag, element, pieces, style, outline level].
        self.open: list[list[Any]] = []

    def read(self, elements: Iterator[tuple[str, _Element]]) -> list[tuple[int | None, str]]:
        for event, element in elements:
            tag = element.tag
            if event == "start":
                if tag in self.CONTAINERS:
                    self.open.append([tag, element, [], "", ""])
            elif tag in self.CONTAINERS and self.open:
                self._close(self.open.pop())
            elif tag == f"{W}t" or tag in self.TEXT:
                text = self.TEXT.get(tag) or (element.text or "") + "".join(
                    c.tail or "" for c in element
                )
                self._add_text(text)
            elif tag in (f"{W}pStyle", f"{W}outlineLvl"):
                self._property(element)
            if self.chars > MAX_DOCX_CHARS:
                break
        return self.blocks

    def _add_text(self, text: str) -> None:
        if self.open and self.open[-1][0] == f"{W}p":
            self.open[-1][2].append(text)
            self.chars += len(text)

    def _property(self, element: _Element) -> None:
        """A paragraph's own style or outline level (not one in a tracked change's old properties)."""
        properties = element.getparent()
        if self.open and properties is not None and properties.getparent() is self.open[-1][1]:
            self.open[-1][3 if element.tag == f"{W}pStyle" else 4] = element.get(f"{W}val", "")

    def _close(self, frame: list[Any]) -> None:
        tag, _, pieces, style, outline = frame
        if tag == f"{W}p":
            text = "".join(pieces)
        elif tag == f"{W}tc":
            text = " ".join(pieces).strip()
        elif tag == f"{W}tr":
            text = " | ".join(pieces) if any(pieces) else ""
        else:
            text = "\n\n".join(p for p in pieces if p)
        outer = self.open[-1][0] if self.open else None
        if outer is None and tag in (f"{W}p", f"{W}tbl"):
            if text.strip():  # an empty paragraph says nothing (and there may be millions)
                level = _heading_level(style, outline, self.styles) if tag == f"{W}p" else None
                self.blocks.append((level, text))
        elif outer is not None and (outer, tag) in _NESTING:
            self.open[-1][2].append(text)


#: Where a closed element's text goes: (the element it closes inside, the element).
_NESTING = frozenset(
    {
        (f"{W}p", f"{W}p"),
        (f"{W}tc", f"{W}p"),
        (f"{W}tr", f"{W}tc"),
        (f"{W}tbl", f"{W}tr"),
        (f"{W}tc", f"{W}tbl"),
        (f"{W}p", f"{W}tbl"),
    }
)


def _outline(blocks: list[tuple[int | None, str]], title: str) -> tuple[str, list[Section]]:
    """(title, sections): the Title style or a first top-level heading names the document; the
    other headings open sections under their path."""
    parts: list[Section] = []
    lines: list[str] = []
    heading_path: list[tuple[int, str]] = []
    for level, text in blocks:
        if level is None:
            lines.append(text)
            continue
        if not text.strip():
            continue
        if level == 0 or (
            not title and level == 1 and not heading_path and not parts and not any(lines)
        ):
            if title and title != text.strip():
                lines.append(text)  # the core properties' title names it; keep this one as text
            title = title or text.strip()  # the Title style, or a first top-level heading
            continue
        parts.append(Section(_path(heading_path), "\n\n".join(lines)))
        lines = []
        heading_path = [(n, h) for n, h in heading_path if n < level] + [(level, text.strip())]
    parts.append(Section(_path(heading_path), "\n\n".join(lines)))
    return title, parts


def _path(levels: list[tuple[int, str]]) -> str:
    return HEADING_SEPARATOR.join(h for _, h in levels)
