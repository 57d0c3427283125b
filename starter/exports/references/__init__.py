"""A research's sources as references a reference manager takes in: `references(result)`, one
`Reference` per source, which the BibTeX, RIS and CSL-JSON writers beside this module write out
(`export ID --format bib|ris|csl`, the web app's downloads, MCP `get_report`).

Why one model for three formats: the key, the names, the kind and the note must say the same in
each, so a person who imports the BibTeX file into one tool and the RIS file into another finds
the same work under the same key with the same verification note.

- **Kinds.** A paper is an article, a preprint (an arXiv id and no published DOI, or an index
  saying so), a book, a chapter or a conference paper; a web page is a page; a document of the
  research corpus or an upload is the researcher's own document, never a publication.
- **Names** as the indexes wrote them ("Ashish Vaswani", "Иван Шмидт", "王小明"): a name of two or
  more words is a person (the last word the family name, with a `van`/`de` before it); a single
  word, a name in a script written without spaces, or one with a comma or "and" inside (an
  organisation, "Smith, Jones and Co") is kept whole, never split into people.
- **Stable keys.** Made from the research alone: first author's family name, year and the
  title's first word (`vaswani2017attention`); a web page's site and title word
  (`pythonstatement`); an own document's file name. Keys that collide get `a`, `b`, ... in the order of
  the sources' ids, so the same research exported twice gives the same keys.
- **The note** says what verification found of the claims citing the source ("cited by 3
  claims: 2 supported, 1 partial", "not cited by any claim"), after "retracted" and "abstract
  only" when so.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from starter.exports.marks import cited_in
from workflows.kit.citations import origin
from workflows.models import Claim, PaperRead, ResearchResult, Source, Verdict
from workflows.text import STOPWORDS

ARTICLE = "article"
PREPRINT = "preprint"
BOOK = "book"
CHAPTER = "chapter"
PROCEEDINGS = "proceedings"
#: A paper of a kind none of the above names (a dataset, a report): a generic work.
WORK = "work"
WEB = "web"
OWN = "own"
_PAPER_KINDS = {ARTICLE, PREPRINT, BOOK, CHAPTER, PROCEEDINGS}
#: Lower-case words that belong to a family name (`van Gogh`, `de la Cruz`).
_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "da", "di", "du", "la", "le", "ten", "ter"}
)
#: Scripts written without spaces between a name's parts: a name in them is kept whole.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WEB_URL = re.compile(r"(?i)^https?://\S+$")
_AND = re.compile(r"(?i)(?:^|\s)and(?:\s|$)")
#: Verdicts in the order the note counts them.
_VERDICTS = (Verdict.SUPPORTED, Verdict.PARTIAL, Verdict.UNSUPPORTED, Verdict.UNVERIFIED)


@dataclass(frozen=True)
class Name:
    """A person (`family`, `given`) or a name kept whole (`literal`)."""

    family: str = ""
    given: str = ""
    literal: str = ""


@dataclass(frozen=True)
class Reference:
    source: Source
    key: str
    kind: str
    title: str
    names: tuple[Name, ...]
    #: A web page's host (`docs.python.org`); "" for the rest.
    site: str
    #: A paper's DOI resolver link or arXiv page, a web page's URL: http(s) only ("" for an own
    #: document, or a `javascript:` a page claimed as its address).
    url: str
    note: str
    #: The day the research read its web pages (`urldate`, `Y2`, `accessed`), when known.
    accessed: date | None


def export(result: ResearchResult, fmt: str, accessed: date | None = None) -> bytes:
    """RESULT's sources as a FMT (`bib`, `ris`, `csl`) file, in UTF-8."""
    from starter.exports.references import bibtex, csl, ris

    writer = {"bib": bibtex.write, "ris": ris.write, "csl": csl.write}[fmt]
    return writer(references(result, accessed)).encode("utf-8")


def references(result: ResearchResult, accessed: date | None = None) -> list[Reference]:
    """One reference per source of RESULT, in the order of their ids (the report's numbers)."""
    sources = sorted(result.sources, key=lambda s: s.id)
    cited = cited_in(result)
    bases = {s.id: _base_key(s) for s in sources}
    keys = _disambiguated(bases)
    out = []
    for s in sources:
        kind = kind_of(s)
        out.append(
            Reference(
                source=s,
                key=keys[s.id],
                kind=kind,
                title=flat(s.title) or flat(s.url),
                names=tuple(name(n) for n in s.authors if flat(n)),
                site=_host(s.url) if kind == WEB else "",
                url=flat(s.url) if kind != OWN and _WEB_URL.match(flat(s.url)) else "",
                note=note(s, result.claims, s.id in cited),
                accessed=accessed if kind == WEB else None,
            )
        )
    return out


def kind_of(source: Source) -> str:
    if origin(source) == "local":
        return OWN
    if not source.is_paper:
        return WEB
    kind = source.kind.strip().lower()
    if kind in _PAPER_KINDS:
        return kind
    if kind in ("posted-content", "preprint") or (source.arxiv_id and not source.doi):
        return PREPRINT
    if kind in ("journal-article", "review", "letter", "editorial", "") and source.venue:
        return ARTICLE
    return WORK


def flat(text: str) -> str:
    """TEXT on one line: every run of whitespace (newlines, tabs, line and paragraph separators)
    one space, so no value can start a line of its own in a file."""
    return " ".join(text.split())


def name(text: str) -> Name:
    """A name as written, read as a person or kept whole (the module's rule)."""
    whole = flat(text)
    words = whole.split(" ")
    if len(words) < 2 or "," in whole or _AND.search(whole) or _UNSPACED.search(whole):
        return Name(literal=whole)
    cut = len(words) - 1
    while cut > 1 and words[cut - 1] in _PARTICLES:
        cut -= 1
    return Name(family=" ".join(words[cut:]), given=" ".join(words[:cut]))


def note(source: Source, claims: list[Claim], cited: bool) -> str:
    """What a reference manager's note says of SOURCE: "retracted", "abstract only", "your own
    document", then what verification found of the report's claims that cite it (CITED: whether
    the report cites it at all: a research whose claims were not checked has none)."""
    parts = ["retracted"] if source.retracted else []
    if source.read == PaperRead.ABSTRACT.value:
        parts.append("abstract only")
    if origin(source) == "local":
        parts.append(f"your own document ({document_name(source.url)}), not a publication")
    citing = [c for c in claims if source.id in c.source_ids]
    kept = [c for c in citing if not c.removed]
    if kept:
        counts = [f"{n} {v.value}" for v in _VERDICTS if (n := sum(c.verdict == v for c in kept))]
        plural = "s" if len(kept) != 1 else ""
        parts.append(f"cited by {len(kept)} claim{plural}: {', '.join(counts)}")
    elif cited:
        parts.append("cited in the report; no claim citing it was verified")
    else:
        parts.append("not cited by any claim")
    if removed := len(citing) - len(kept):
        parts.append(f"{removed} claim{'s' if removed != 1 else ''} removed as unsupported")
    return "; ".join(parts)


def document_name(url: str) -> str:
    """An own document as a person names it: a `file:` URL's file name (the server's folders are
    nobody's business), else the name the exports already gave it (`guides/setup.md`)."""
    if url.startswith("file:"):
        return PurePosixPath(unquote(urlsplit(url).path)).name or "document"
    return flat(url) or "document"


# --- keys -----------------------------------------------------------------------------------------


def _base_key(source: Source) -> str:
    kind = kind_of(source)
    if kind == OWN:
        stem = PurePosixPath(document_name(source.url).split("#")[0]).stem
        return _ascii(stem) or "document"
    word = _first_word(source.title)
    if kind == WEB:
        return (_site_word(_host(source.url)) + word) or "page"
    people = [name(n) for n in source.authors if flat(n)]
    first = people[0] if people else Name()
    author = _ascii(first.family.split(" ")[-1] if first.family else first.literal.split(" ")[0])
    base = f"{author}{source.year or ''}{word}"
    return base if base[:1].isalpha() else f"ref{base}"  # a name in a script ASCII cannot spell


def _disambiguated(bases: dict[int, str]) -> dict[int, str]:
    """Each id's key: its base, or with `a`, `b`, ... in id order where bases collide."""
    groups: dict[str, list[int]] = {}
    for sid in sorted(bases):
        groups.setdefault(bases[sid], []).append(sid)
    keys: dict[int, str] = {}
    taken = set(groups)
    for base, ids in groups.items():
        if len(ids) == 1:
            keys[ids[0]] = base
            continue
        for n, sid in enumerate(ids):
            key = base + _letters(n)
            while key in taken:  # `smith2020a` may itself be another source's base
                key += "x"
            taken.add(key)
            keys[sid] = key
    return keys


def _letters(n: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa, ..."""
    out = ""
    n += 1
    while n:
        n, rest = divmod(n - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def _ascii(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", plain.lower())


def _first_word(title: str) -> str:
    for word in re.findall(r"\w+", title):
        folded = _ascii(word)
        if folded and word.lower() not in STOPWORDS:
            return folded
    return ""


def _host(url: str) -> str:
    try:
        return (urlsplit(flat(url)).hostname or "").removeprefix("www.")
    except ValueError:
        return ""


def _site_word(host: str) -> str:
    """The name a site goes by: `docs.python.org` -> python, `www.bbc.co.uk` -> bbc."""
    labels = [label for label in host.split(".") if label]
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in ("co", "com", "ac", "org"):
        labels = labels[:-1]
    return _ascii(labels[-2] if len(labels) >= 2 else "".join(labels))
