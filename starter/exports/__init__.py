"""Report downloads: `export(result, fmt)` gives the bytes, the content type and a file name for
`md`, `html`, `docx` or `pdf` (the CLI's `export --format` and the web API's `/report?format=`),
and the research's references for `bib`, `ris` or `csl` (starter/exports/references/).

Every format keeps the report's `[n]` citations and numbers every source by its id, marked local
or web. A report quotes untrusted web pages, so before any format is written, control characters,
bidi overrides and characters XML cannot hold are removed from every text of the result; then no
format passes raw HTML through, and only http(s) URLs become links (never `javascript:`, `file:`,
`data:`). md and html are the library's standalone exports (starter/cli/library.py); docx is written
with python-docx, pdf with reportlab (BSD-licensed, wheels for every platform, fonts in the wheel,
no system libraries), both from one reading of the markdown (document.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

from pydantic import BaseModel

from starter.exports import document, references
from starter.exports.markup import to_html, to_markdown
from workflows.models import ResearchResult
from workflows.text import without_controls


@dataclass(frozen=True)
class Format:
    """One download: its name (`--format`, `?format=`), what a person calls it (`title`: the page's
    link text, the web app's one-line refusals), its content type, whether it is binary (never
    written to a terminal), how it is written, and the largest report it is written for in time
    (`max_chars` of markdown, `max_blocks` paragraphs; None: no limit, the text is copied): the web
    app's downloads refuse a larger one (starter/web/services/downloads.py). A reference file
    (`references`) lists the sources for a reference manager; its web pages carry the day they
    were read (`accessed`), when the caller knows it."""

    name: str
    title: str
    content_type: str
    binary: bool
    write: Callable[[ResearchResult, document.Report, date | None], bytes]
    max_chars: int | None = None
    max_blocks: int | None = None
    #: The file name's extension, when not the format's name (CSL-JSON: `.json`).
    extension: str = ""
    references: bool = False

    @property
    def label(self) -> str:
        return f"Download {self.title}"


def _word(report: document.Report) -> bytes:
    from starter.exports import word  # python-docx: loaded when a Word file is asked for

    return word.write(report)


def _references(fmt: str) -> Callable[[ResearchResult, document.Report, date | None], bytes]:
    def write(result: ResearchResult, report: document.Report, accessed: date | None) -> bytes:
        return references.export(result, fmt, accessed)

    return write


def _pdf(report: document.Report) -> bytes:
    from starter.exports import pdf  # reportlab: loaded when a PDF is asked for

    return pdf.write(report)


#: The one table of export formats: the CLI's `export --format` choices, the API's `format`, the
#: page's download links, the web app's download limits and `export` all read it. A new format:
#: its row here and its writer module. The limits were measured: 30,000 paragraphs or a 1 MB word
#: take 6-10 s alone on one core; several at once on a loaded machine, many times that.
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "md",
            "Markdown",
            "text/markdown; charset=utf-8",
            False,
            lambda result, report, accessed: to_markdown(result, report.sources).encode("utf-8"),
        ),
        Format(
            "html",
            "HTML",
            "text/html; charset=utf-8",
            False,
            lambda result, report, accessed: to_html(result, report.title, report.sources).encode(
                "utf-8"
            ),
            max_chars=2_000_000,
            max_blocks=50_000,
        ),
        Format(
            "docx",
            "Word",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            True,
            lambda result, report, accessed: _word(report),
            max_chars=1_000_000,
            max_blocks=20_000,
        ),
        Format(
            "pdf",
            "PDF",
            "application/pdf",
            True,
            lambda result, report, accessed: _pdf(report),
            max_chars=1_000_000,
            max_blocks=20_000,
        ),
        *(
            Format(
                name,
                title,
                content_type,
                False,
                _references(name),
                extension=extension,
                references=True,
            )
            for name, title, content_type, extension in (
                ("bib", "BibTeX", "application/x-bibtex", "bib"),
                ("ris", "RIS", "application/x-research-info-systems", "ris"),
                ("csl", "CSL-JSON", "application/vnd.citationstyles.csl+json", "json"),
            )
        ),
    )
}
CONTENT_TYPES = {name: f.content_type for name, f in FORMATS.items()}
#: Beyond what `without_controls` removes (controls, bidi overrides): lone surrogates and the two
#: non-characters XML refuses, which a Word file cannot hold; and the invisible zero-width space,
#: word joiner, byte-order mark and Mongolian vowel separator, which can hide text or split a
#: word a reader would search for (the joiners ZWJ and ZWNJ stay: scripts and emoji need them).
_NOT_TEXT = re.compile("[\ud800-\udfff\ufffe\uffff\u200b\u2060\ufeff\u180e]")
_FILE_NAME_CHARS = 80
_FILE_NAME_BYTES = 200
M = TypeVar("M", bound=BaseModel)


def export(
    result: ResearchResult, fmt: str, accessed: date | None = None
) -> tuple[bytes, str, str]:
    """(body, content type, file name) of the report of `result` in format `fmt`; ACCESSED, the
    day the research read its sources (the library's finished_at), dates web pages in a
    reference file."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt[:20]!r}: choose one of {', '.join(FORMATS)}")
    form = FORMATS[fmt]
    safe = clean_result(result)
    report = document.read(safe, listed=not form.references)
    name = file_name(report.title, form.extension or fmt)
    return form.write(safe, report, accessed), form.content_type, name


def file_name(title: str, fmt: str) -> str:
    """A slug of the title in its own letters plus the extension: `how-do-rust-lifetimes-work.docx`,
    `東京の歴史.md`, `über-kraniche.pdf`.
    Letters, marks and digits only: no separator, dot or control survives; at most 80 characters
    and 200 bytes, so every file system takes it."""
    text = unicodedata.normalize("NFKC", title).lower()
    kept = "".join(ch if unicodedata.category(ch)[0] in "LMN" else "-" for ch in text)
    slug = re.sub(r"-+", "-", kept).strip("-")
    if len(slug) > _FILE_NAME_CHARS:
        slug = slug[:_FILE_NAME_CHARS].rsplit("-", 1)[0]
    while len(slug.encode()) > _FILE_NAME_BYTES:
        slug = slug[:-1]
    return f"{slug.strip('-') or 'research-report'}.{fmt}"


def ascii_file_name(name: str) -> str:
    """NAME for the clients that only read an ASCII `filename=` (RFC 6266's fallback beside
    `filename*=UTF-8''...`): accents dropped, other letters gone, else `research-report`."""
    stem, _, ext = name.rpartition(".")
    plain = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")
    return f"{slug or 'research-report'}.{re.sub(r'[^a-z0-9]', '', ext.lower()) or 'txt'}"


def clean(text: str) -> str:
    """Text with line breaks made `\\n` and the unsafe characters removed."""
    return without_controls(_NOT_TEXT.sub("", text))


def clean_result(result: ResearchResult) -> ResearchResult:
    """A copy of `result` with every text in it cleaned."""
    return clean_model(result)


def clean_model(model: M) -> M:
    """A copy of `model` with every text in it cleaned: what a page shows a person, whoever wrote
    it (a model's clarification question, the critic's issues, a draft)."""
    return type(model).model_validate(_clean_all(model.model_dump()))


def _clean_all(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {k: _clean_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_all(v) for v in value]
    return value
