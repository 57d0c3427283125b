"""References as RIS (`export --format ris`), written by rispy: TY JOUR for a journal article,
UNPB for a preprint, BOOK, CHAP and CPAPER for books, chapters and conference papers, ELEC for a
web page, GEN for an own document or a work of another kind; AU per author (`Family, Given`), TI,
PY, T2 and JO (the venue; a web page's site), DO, UR, Y2 (the day the page was read), N1 (the
note), ID (the key the other formats use).

A tag is a line that starts with two letters: every value is flattened to one line first, so a
title holding a line break and `ER  -` cannot end its record or start a tag of its own.
"""

from __future__ import annotations

from rispy import RisWriter  # type: ignore[import-untyped]  # ships no type information

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

_TYPES = {
    ARTICLE: "JOUR",
    PREPRINT: "UNPB",
    BOOK: "BOOK",
    CHAPTER: "CHAP",
    PROCEEDINGS: "CPAPER",
    WEB: "ELEC",
    OWN: "GEN",
}


class _Writer(RisWriter):
    def set_header(self, count: int) -> str:
        return ""  # rispy numbers records ("1."): no reader needs it


def write(refs: list[Reference]) -> str:
    return str(_Writer().formats([_record(r) for r in refs]))


def _record(ref: Reference) -> dict[str, object]:
    source = ref.source
    record: dict[str, object] = {"type_of_reference": _TYPES.get(ref.kind, "GEN"), "id": ref.key}
    if ref.names:
        record["authors"] = [_name(n) for n in ref.names]
    record["title"] = ref.title
    if source.year:
        record["year"] = str(source.year)
    venue = flat(source.venue) if ref.kind != WEB else ref.site
    if venue:
        record["secondary_title"] = venue
        if ref.kind == ARTICLE:
            record["journal_name"] = venue
    if ref.kind == PREPRINT and source.arxiv_id:
        record["publisher"] = "arXiv"
        record["note"] = f"arXiv:{flat(source.arxiv_id)}"
    if source.doi:
        record["doi"] = flat(source.doi)
    if ref.url:
        record["urls"] = [ref.url]
    if ref.accessed is not None:
        record["access_date"] = ref.accessed.strftime("%Y/%m/%d")
    record["notes"] = [ref.note]
    return {k: _one_line(v) for k, v in record.items()}


def _name(n: Name) -> str:
    if n.literal:
        return n.literal
    return f"{n.family}, {n.given}" if n.given else n.family


def _one_line(value: object) -> object:
    if isinstance(value, list):
        return [flat(str(v)) for v in value]
    return flat(str(value))
