"""References as BibTeX (`export --format bib`): papers as @article (journal = venue), @book,
@incollection, @inproceedings or @misc; preprints as @misc with `eprint` and
`archivePrefix = {arXiv}`; web pages as @online with `url` and `urldate`; own documents as @misc
whose note says so.

Written here rather than by bibtexparser's writer, because everything hinges on the escaping and
that writer leaves it to the caller (its LaTeX-encoding middleware also turns "é" and "王" into
macros: names in any script must stay as written, in UTF-8).

- **Every text field escaped** with LaTeX's own text-mode commands: `\\& \\% \\$ \\# \\_`, and
  `\\textbackslash{}`, `\\textbraceleft{}`, `\\textbraceright{}`, `\\textasciitilde{}`,
  `\\textasciicircum{}`. Not `\\{`: BibTeX and every parser that follows it count a brace after a
  backslash too, so an unbalanced brace in a title would end the field early, and
  `}, note = {x}` would become a field of its own. With no raw brace but the writer's, a hostile
  title stays one field of one entry.
- **Titles brace-protected** (`{{...}}`), so styles keep their capitals.
- **Names** `Family, Given` joined with ` and `; a name kept whole (an organisation, a name with a
  comma or "and" inside, a CJK name) inside braces, one name whatever it holds.
- **URLs and DOIs** are verbatim fields (biblatex reads them as written): left as they are but
  for braces, backslashes and spaces, percent-encoded as a URL may always be.
"""

from __future__ import annotations

import re

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
)

_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
}
_SPECIAL = re.compile("[" + re.escape("".join(_LATEX)) + "]")
_VERBATIM_UNSAFE = re.compile(r"[{}\\\s]")
#: The entry type of each kind, and the field that names its venue.
_TYPES = {
    ARTICLE: ("article", "journal"),
    BOOK: ("book", "publisher"),
    CHAPTER: ("incollection", "booktitle"),
    PROCEEDINGS: ("inproceedings", "booktitle"),
    PREPRINT: ("misc", "howpublished"),
    WEB: ("online", ""),
    OWN: ("misc", ""),
}


def write(refs: list[Reference]) -> str:
    return "\n".join(_entry(r) for r in refs)


def escape(text: str) -> str:
    """TEXT as a BibTeX value that LaTeX (and any decoder of its commands) reads back as TEXT."""
    return _SPECIAL.sub(lambda m: _LATEX[m.group(0)], " ".join(text.split()))


def verbatim(text: str) -> str:
    """A URL or DOI for a verbatim field: what would break the entry percent-encoded."""
    return _VERBATIM_UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode()), text)


def _entry(ref: Reference) -> str:
    source = ref.source
    entry_type, venue_field = _TYPES.get(ref.kind, ("misc", "howpublished"))
    fields: list[tuple[str, str]] = []
    if ref.names:
        fields.append(("author", " and ".join(_name(n) for n in ref.names)))
    fields.append(("title", "{" + escape(ref.title) + "}"))
    if venue_field and source.venue.strip():
        fields.append((venue_field, escape(source.venue)))
    if source.year:
        fields.append(("year", str(source.year)))
    if source.doi:
        fields.append(("doi", verbatim(source.doi)))
    if source.arxiv_id:
        fields += [("eprint", verbatim(source.arxiv_id)), ("archiveprefix", "arXiv")]
    if ref.url:
        fields.append(("url", verbatim(ref.url)))
    if ref.accessed is not None:
        fields.append(("urldate", ref.accessed.isoformat()))
    fields.append(("note", escape(ref.note)))
    body = "".join(f"  {key} = {{{value}}},\n" for key, value in fields)
    return f"@{entry_type}{{{ref.key},\n{body}}}\n"


def _name(n: Name) -> str:
    if n.literal:
        return "{" + escape(n.literal) + "}"
    return f"{escape(n.family)}, {escape(n.given)}" if n.given else escape(n.family)
