"""PDF and Word files of a corpus folder, as documents a citation can point into.

- **PDF**: one document per page, `file:///x.pdf#page=3`, titled "Title, page 3": a citation then
  says where the sentence is, and the reader opens the page (PDF viewers honour `#page=`). The text
  comes from the extraction children of `activities/web/bounded.py` (pypdfium2, pypdf as the
  fallback), with their memory and time limits: a PDF someone dropped into the folder is as
  untrusted as one from the web, and a hostile one costs that file, never the worker. The title is
  the PDF's Title metadata unless that is a producer's placeholder ("Microsoft Word - x.docx",
  "untitled"), else the first line of the first page, else the file name.
- **Word (.docx)**: read directly as the zip of XML parts it is (ECMA-376), rather than with
  python-docx: we need only the paragraphs, headings and tables of `word/document.xml`, the style
  names of `word/styles.xml` and the title of `docProps/core.xml`; reading just those lets every
  part be capped before it is inflated (a zip bomb costs nothing) and parsed with lxml with entity
  resolution and network access off (no XML bombs), which python-docx does not offer. Headings are
  paragraphs whose style is a built-in "heading N" or "Title" (style *names* are English in every
  Word locale; the ids are not) or that carry an outline level.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from activities.corpus.documents import HEADING_SEPARATOR, Document, Section, document

#: The most a .docx part may inflate to; the largest real documents' text is a few MB.
MAX_DOCX_PART_BYTES = 50 * 1024 * 1024
PDF_SUFFIXES = frozenset({".pdf"})
DOCX_SUFFIXES = frozenset({".docx"})
_PLACEHOLDER_TITLE = re.compile(r"^(?:microsoft\s+\w+\s+-\s+.*|untitled.*|document\d*|\S+\.(?:docx?|pdf|tex|odt))$", re.I)

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
DC = "{http://purl.org/dc/elements/1.1/}"


class UnreadableDocument(ValueError):
    """A file that cannot be read into text; the message says why, for the index's list of skips."""


# --- PDF ----------------------------------------------------------------------------------------


def pdf_documents(path: Path) -> list[Document]:
    """One document per page with text; pages without text (scans) are left out."""
    from activities.web.bounded import ExtractionLimit, pool
    from activities.web.extraction import PAGE_BREAK, PDF_PAGES_TYPE

    try:
        extracted = pool().extract_now(path.read_bytes(), PDF_PAGES_TYPE)
    except ExtractionLimit as err:
        raise UnreadableDocument(str(err)) from None
    except ValueError as err:  # the readers' own verdict: corrupt, truncated, encrypted
        raise UnreadableDocument(str(err).split(". ")[0]) from None
    pages = extracted.text.split(PAGE_BREAK)
    if not any(p.strip() for p in pages):
        raise UnreadableDocument("the PDF has no text layer (a scan?); nothing to search")
    title = _pdf_title(extracted.title, pages, path)
    base = path.as_uri()
    return [
        document(f"{base}#page={number}", f"{title}, page {number}" if len(pages) > 1 else title,
                 [Section("", text)])
        for number, text in enumerate(pages, 1)
        if text.strip()
    ]


def _pdf_title(metadata: str, pages: list[str], path: Path) -> str:
    if metadata.strip() and not _PLACEHOLDER_TITLE.match(metadata.strip()):
        return metadata.strip()
    first = next((line.strip() for page in pages for line in page.splitlines() if line.strip()), "")
    return first[:120] if 3 <= len(first) <= 120 else path.name


# --- Word ---------------------------------------------------------------------------------------


def docx_document(path: Path) -> Document:
    """The document's sections under its headings; tables as rows of cells."""
    try:
        with zipfile.ZipFile(path) as package:
            body = _xml(package, "word/document.xml", required=True)
            styles = _style_names(_xml(package, "word/styles.xml"))
            core = _xml(package, "docProps/core.xml")
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        raise UnreadableDocument(f"not a Word document (.docx is a zip archive): {err}") from None
    title = ""
    if core is not None:
        found = core.find(f"{DC}title")
        title = " ".join((found.text or "").split()) if found is not None else ""
    parts: list[Section] = []
    lines: list[str] = []
    heading_path: list[tuple[int, str]] = []
    root = body.find(f"{W}body")
    for block in (root if root is not None else []):
        if block.tag == f"{W}p":
            text = _paragraph_text(block)
            level = _heading_level(block, styles)
            if level is None:
                lines.append(text)
                continue
            if not text.strip():
                continue
            if level == 0 or (not title and level == 1 and not heading_path and not parts and not any(lines)):
                if title and title != text.strip():
                    lines.append(text)  # the core properties' title names it; keep this one as text
                title = title or text.strip()  # the Title style, or a first top-level heading
                continue
            parts.append(Section(_path(heading_path), "\n\n".join(lines)))
            lines = []
            heading_path = [(n, h) for n, h in heading_path if n < level] + [(level, text.strip())]
        elif block.tag == f"{W}tbl":
            lines.append(_table_text(block))
    parts.append(Section(_path(heading_path), "\n\n".join(lines)))
    if not any(p.text.strip() for p in parts):
        raise UnreadableDocument("the Word document has no text")
    return document(path.as_uri(), title or path.stem, parts)


def _xml(package: zipfile.ZipFile, name: str, required: bool = False):  # -> lxml element or None
    import lxml.etree

    try:
        info = package.getinfo(name)
    except KeyError:
        if required:
            raise UnreadableDocument(f"not a Word document: it has no {name}") from None
        return None
    if info.file_size > MAX_DOCX_PART_BYTES:
        raise UnreadableDocument(f"{name} inflates to {info.file_size} bytes, more than {MAX_DOCX_PART_BYTES}")
    with package.open(info) as member:
        data = member.read(MAX_DOCX_PART_BYTES + 1)  # the header's size may lie; the read may not
    if len(data) > MAX_DOCX_PART_BYTES:
        raise UnreadableDocument(f"{name} inflates to more than {MAX_DOCX_PART_BYTES} bytes")
    parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)
    try:
        return lxml.etree.fromstring(data, parser)
    except lxml.etree.XMLSyntaxError as err:
        raise UnreadableDocument(f"{name} is not well-formed XML: {err}") from None


def _style_names(styles) -> dict[str, str]:  # noqa: ANN001 - an lxml element or None
    """Style id → lower-case style name ("Heading1" → "heading 1", "Titre1" → "heading 1")."""
    names: dict[str, str] = {}
    for style in styles.iter(f"{W}style") if styles is not None else []:
        name = style.find(f"{W}name")
        if name is not None:
            names[style.get(f"{W}styleId", "")] = (name.get(f"{W}val") or "").strip().lower()
    return names


def _heading_level(paragraph, styles: dict[str, str]) -> int | None:  # noqa: ANN001
    """0 for the Title style, N for "heading N" or an outline level N-1, None for body text."""
    properties = paragraph.find(f"{W}pPr")
    if properties is None:
        return None
    style = properties.find(f"{W}pStyle")
    name = styles.get(style.get(f"{W}val", ""), style.get(f"{W}val", "").lower()) if style is not None else ""
    if name == "title":
        return 0
    heading = re.fullmatch(r"heading\s*([1-9])", name)
    if heading:
        return int(heading.group(1))
    outline = properties.find(f"{W}outlineLvl")
    if outline is not None and (level := outline.get(f"{W}val", "")).isdigit() and int(level) < 9:
        return int(level) + 1
    return None


def _paragraph_text(paragraph) -> str:  # noqa: ANN001
    """The visible text: runs, tabs and breaks; deleted text (tracked changes) and field codes left out."""
    out: list[str] = []
    for node in paragraph.iter(f"{W}t", f"{W}tab", f"{W}br", f"{W}cr"):
        if node.tag == f"{W}t":
            out.append(node.text or "")
        elif node.tag == f"{W}tab":
            out.append("\t")
        else:
            out.append("\n")
    return "".join(out)


def _table_text(table) -> str:  # noqa: ANN001
    """One paragraph per row, its cells' text separated by " | "."""
    rows = []
    for row in table.iter(f"{W}tr"):
        cells = [" ".join(_paragraph_text(p) for p in cell.iter(f"{W}p")).strip() for cell in row.iter(f"{W}tc")]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n\n".join(rows)


def _path(levels: list[tuple[int, str]]) -> str:
    return HEADING_SEPARATOR.join(h for _, h in levels)
