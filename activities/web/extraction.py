"""From a fetched document's bytes to the text a researcher would read: the article, not the page.

`extract(body, content_type, url, charset)` returns an `Extracted` (title, text, method):
- HTML/XHTML: trafilatura keeps the main text and its tables and drops navigation, ads, comments
  and footers. If it finds (almost) nothing, trafilatura's baseline (JSON-LD articleBody, then
  <article>, then paragraphs, then the body without menus) takes over, so a page that has text
  never comes back empty ("fallback"). Alone, that baseline scores F1 0.8775 on the benchmark.
- PDF: pypdfium2 (fast, good reading order), pypdf when pdfium cannot open the file; at most
  MAX_PDF_PAGES pages, so a 900-page report costs what a paper does.
- Anything else (text/plain, text/markdown): decoded and whitespace-normalised ("plain").

Charset: the crawler's rules (`activities.web.charset.decode_text`: BOM, then the declared charset if
the bytes decode with it, then <meta charset>, then UTF-8, then a guess). We decode before
trafilatura because, given bytes, it ignores <meta charset> and guesses: an ISO-8859-2 page in
Polish comes out as windows-1250 mojibake.

Tuning, measured with `python -m bench.extraction` on the 121 pages of
../shared/data/extraction-benchmark (shingle F1 / precision / recall, scrapinghub's metric):

    trafilatura defaults (include_comments=True)          0.9544 / 0.9312 / 0.9787
    include_comments=False (the benchmark's own setting)  0.9606 / 0.9430 / 0.9787
    + favor_precision                                     0.9640 / 0.9598 / 0.9682
    + MIN_EXTRACTED_SIZE 500 (chosen)                     0.9699 / 0.9635 / 0.9765

favor_precision trims related-article lists and share bars. Alone it sometimes stops at a
disclaimer paragraph just over trafilatura's 250-character "this is enough" mark; at 500, such a
short result is compared with trafilatura's other extractors, which recovers the article. Any value
from 400 to 750 scores the same (300 scores 0.9715 thanks to one short paywalled page; 2500 falls
to 0.9603). Time: about 19 ms a page (p50), 40 ms at p95, metadata included.
Measured and rejected (each with include_comments=False): favor_recall 0.9620, fast (no fallback
extractors) 0.9610, include_tables=False 0.9569, deduplicate 0.9562 (and it keeps a process-wide
cache, so a page's text would depend on the pages read before it), include_formatting/markdown
0.9580, target_language="en" with favor_precision 0.9352 (drops non-English pages), taking the
default extraction when the precise one is much shorter 0.9669. Passing the URL changes nothing
measurable.

Control characters: what a page says goes to terminals (`starter extract`), logs and reports, so
terminal escape sequences (CSI such as `ESC[2J`, OSC such as `ESC]0;title BEL`, and the rest) and
every C0 control but newline and tab, DEL and the C1 controls (U+0080-U+009F) are removed from
every result (`strip_controls`): before HTML and text are parsed, so no sequence leaves debris,
and from the title and text of every reader, PDFs included.

Errors: a page without text is not an error, it comes back with empty text. The one ValueError
is a PDF that neither pdfium nor pypdf can open (corrupt, truncated, password-protected): the
bytes will not read better on a retry, so the caller should treat it as permanent.
"""

from __future__ import annotations

import io
import re
import threading
from dataclasses import dataclass
from typing import cast

import lxml.etree
import lxml.html
import trafilatura
from trafilatura.settings import Document, use_config

from activities.web.charset import decode_text

MAX_PDF_PAGES = 50
#: A PDF read page by page for the local corpus (`extract` with this media type): its pages joined
#: by PAGE_BREAK, a control character no extracted text keeps, so a citation can name the page.
PDF_PAGES_TYPE = "application/x-pdf-pages"
PAGE_BREAK = "\f"
#: Pages of a corpus PDF: a manual is longer than a web paper (the character caps still apply).
MAX_CORPUS_PDF_PAGES = 1000
#: Text kept per PDF page and per PDF: a research keeps 4,000 characters of a page anyway, and
#: these stop a document that inflates to tens of MiB of text from growing further once read
#: (memory and time while reading are bounded by the extraction process, see bounded.py).
MAX_PAGE_CHARS = 200_000
MAX_PDF_CHARS = 1_000_000
#: Below this many characters, trafilatura's result is "almost nothing" and the fallback may do better.
MIN_TEXT_CHARS = 100
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

_TRAFILATURA_CONFIG = use_config()
_TRAFILATURA_CONFIG.set("DEFAULT", "MIN_EXTRACTED_SIZE", "500")
#: PDFium is not thread-safe, not even across documents, and activities run in a thread pool.
_PDFIUM_LOCK = threading.Lock()

#: Terminal escape sequences: CSI (ESC [ or U+009B, parameters, a final byte); OSC, DCS, SOS, PM and
#: APC up to their terminator (BEL or ST, at most 1024 characters on); any other ESC sequence.
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]{0,1024}(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
#: C0 controls but tab and newline (a carriage return becomes a newline first), DEL, C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_CHARSET_PARAMETER = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Extracted:
    title: str
    text: str
    method: str  #: "trafilatura", "fallback", "pdfium", "pypdf" or "plain": which reader produced the text


def extract(
    body: bytes, content_type: str, url: str | None = None, charset: str | None = None
) -> Extracted:
    """The title and main text of a document, from its bytes, media type and declared charset
    (the `charset` argument, else a `; charset=` parameter of `content_type`), without control
    characters or terminal escape sequences."""
    media_type, _, parameters = content_type.partition(";")
    media_type = media_type.strip().lower()
    if media_type == PDF_PAGES_TYPE:
        return _pdf_pages(body)
    if body.startswith(b"%PDF-") or (media_type == "application/pdf" and body.strip()):
        return _clean(_pdf(body))
    if charset is None and (declared := _CHARSET_PARAMETER.search(parameters)):
        charset = declared.group(1)
    text = strip_controls(decode_text(body, charset))
    if media_type in HTML_TYPES:
        return _clean(_html(text, url))
    return _clean(_plain(text))


def strip_controls(text: str) -> str:
    """`text` without terminal escape sequences, C0 controls (but newline and tab; a carriage return
    becomes a newline), DEL or C1 controls: nothing a page says can drive a terminal."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))


def _clean(extracted: Extracted) -> Extracted:
    return Extracted(
        strip_controls(extracted.title), strip_controls(extracted.text), extracted.method
    )


# --- HTML ---------------------------------------------------------------------------------------


def _html(html: str, url: str | None) -> Extracted:
    # lxml refuses a str that still declares its byte encoding; it is decoded already.
    html = _XML_DECLARATION.sub("", html, count=1)
    extracted = trafilatura.bare_extraction(
        html,
        url=url,
        with_metadata=True,
        favor_precision=True,
        include_comments=False,
        include_tables=True,
        deduplicate=False,
        config=_TRAFILATURA_CONFIG,
    )
    document = cast(Document | None, extracted)  # a dict only when asked for with as_dict=True
    text = _normalise(document.text or "") if document else ""
    title = (document.title or "") if document else ""
    if len(text) >= MIN_TEXT_CHARS and title:
        return Extracted(title, text, "trafilatura")
    try:
        tree = lxml.html.document_fromstring(html)  # a whole document, even from a fragment
    except (ValueError, lxml.etree.ParserError):  # nothing but whitespace or comments
        return Extracted(title, text, "trafilatura")
    title = title or _html_title(tree)
    if len(text) < MIN_TEXT_CHARS:
        # trafilatura's own last resort (JSON-LD articleBody, <article>, paragraphs, then the
        # whole body), which favor_precision switches off; menus removed first for that last tier.
        menus = tree.xpath('//nav | //*[@role="navigation"]')
        for menu in menus if isinstance(menus, list) else []:  # a path to elements: a list
            if isinstance(menu, lxml.html.HtmlElement):  # of HTML elements
                menu.drop_tree()
        fallback = _normalise(trafilatura.baseline(tree)[1])
        if len(fallback) > len(text):
            return Extracted(title, fallback, "fallback")
    return Extracted(title, text, "trafilatura")


def _html_title(tree: lxml.html.HtmlElement) -> str:
    for xpath in ('//meta[@property="og:title"]/@content', "//title//text()", "//h1//text()"):
        if found := " ".join(" ".join(str(s) for s in tree.xpath(xpath)).split()):
            return found
    return ""


# --- PDF ----------------------------------------------------------------------------------------


def _pdf(body: bytes) -> Extracted:
    title, pages, method = _read_pdf(body, MAX_PDF_PAGES)
    text = "\n\n".join(p for p in (_heading_apart(_normalise(p)) for p in pages) if p)
    if not title.strip():
        title = next((line for line in text.splitlines() if line.strip()), "")
    return Extracted(" ".join(title.split())[:300], text, method)


def _pdf_pages(body: bytes) -> Extracted:
    """Every page's text (cleaned, possibly empty) joined by PAGE_BREAK; the title from the
    metadata only (the corpus decides what stands in for a missing one)."""
    title, pages, method = _read_pdf(body, MAX_CORPUS_PDF_PAGES)
    text = PAGE_BREAK.join(_heading_apart(strip_controls(_normalise(p))) for p in pages)
    return Extracted(" ".join(strip_controls(title).split())[:300], text, method)


#: A page's first line that is a title or running header: capitalised, short, no final punctuation.
_HEADING_LINE = re.compile(r"^[A-Z0-9][^\n]{1,118}[^\n.,;:!?\-–—]$")


def _heading_apart(page: str) -> str:
    """A page whose first line is a title ("Rye Flour Handout") followed by a sentence that starts
    afresh has the title as a paragraph of its own: a PDF's lines carry no paragraph marks, and
    joined up the title would open the first sentence ("Rye Flour Handout Rye flour holds ...")."""
    first, newline, rest = page.partition("\n")
    if (
        newline
        and _HEADING_LINE.match(first.strip())
        and rest[:1].isupper()
        and not rest.startswith("\n")
    ):
        return f"{first}\n\n{rest}"
    return page


def _read_pdf(body: bytes, max_pages: int) -> tuple[str, list[str], str]:
    try:
        title, pages = _pdfium_pages(body, max_pages)
        method = "pdfium"
    except Exception as pdfium_error:  # pdfium says little more than "data format error"
        try:
            title, pages = _pypdf_pages(body, max_pages)
            method = "pypdf"
        except Exception as pypdf_error:
            raise ValueError(
                f"unreadable PDF ({len(body)} bytes): pdfium: {pdfium_error}; pypdf: {pypdf_error}. "
                "The file is corrupt, truncated or password-protected; another copy may read."
            ) from pypdf_error
    return title or "", pages, method


def _pdfium_pages(body: bytes, max_pages: int = MAX_PDF_PAGES) -> tuple[str, list[str]]:
    import pypdfium2 as pdfium  # type: ignore[import-untyped]  # ships no type information

    with _PDFIUM_LOCK:
        document = pdfium.PdfDocument(body)
        try:
            title = document.get_metadata_value("Title")
            pages: list[str] = []
            for index in range(min(len(document), max_pages)):
                page = document[index]
                textpage = page.get_textpage()
                pages.append(textpage.get_text_range()[:MAX_PAGE_CHARS])
                textpage.close()
                page.close()
                if sum(map(len, pages)) >= MAX_PDF_CHARS:
                    break
            return title, pages
        finally:
            document.close()


def _pypdf_pages(body: bytes, max_pages: int = MAX_PDF_PAGES) -> tuple[str, list[str]]:
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(body))
    title = str(reader.metadata.title or "") if reader.metadata else ""
    pages: list[str] = []
    for page in reader.pages[:max_pages]:
        pages.append((page.extract_text() or "")[:MAX_PAGE_CHARS])
        if sum(map(len, pages)) >= MAX_PDF_CHARS:
            break
    return title, pages


# --- plain text ---------------------------------------------------------------------------------


def _plain(text: str) -> Extracted:
    text = _normalise(text, keep_spacing=True)
    first = next((line for line in text.splitlines() if line.strip()), "")
    return Extracted(first.lstrip("#").strip()[:300], text, "plain")


def _normalise(text: str, keep_spacing: bool = False) -> str:
    """No trailing blanks, at most one empty line between paragraphs, and one space between words
    unless `keep_spacing` (plain text and Markdown: indentation is meaning in code and lists)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    tidied = (line.rstrip() if keep_spacing else " ".join(line.split()) for line in lines)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(tidied)).strip()
