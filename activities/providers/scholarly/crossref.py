"""Crossref (https://api.crossref.org/swagger-ui/index.html): `GET {CROSSREF_URL}/works?query=...`.

Titles and venues are lists; authors `given` + `family` (or an organisation's `name`); the year
is `issued`'s (else `published`'s); abstracts are JATS XML, read as plain text.

**Retractions.** Crossref describes one retraction twice: the retracted work carries
`relation.is-retracted-by` or an `updated-by` entry of type `retraction` (what Retraction Watch's
data adds too), and the retraction *notice* is a work of its own whose `update-to` entry of type
`retraction` names the retracted DOI. A work is flagged retracted by the first; a notice is not a
source to cite, so it is dropped from the hits, and the work it names, when it is among them, is
flagged as well (a notice found without its work flags nothing: that work is not a source).

Crossref holds no open-access copies (its `link`s are publishers' text-mining links, often
paywalled): a Crossref-only paper is read by its abstract unless another index knows a copy.
"""

from __future__ import annotations

import re
from typing import Any

from activities.providers.http import one_line, plain, result_rows
from activities.providers.scholarly.base import ScholarlyIndex, paper_hit, year_of
from workflows.activity_models import SearchHit
from workflows.kit.papers import bare_doi
from workflows.record import Paper

KINDS = {
    "journal-article": "article",
    "posted-content": "preprint",
    "proceedings-article": "proceedings",
    "book-chapter": "chapter",
    "monograph": "book",
    "edited-book": "book",
}
_JATS_TITLE = re.compile(r"<jats:title[^>]*>.*?</jats:title>", re.S | re.I)


class Crossref(ScholarlyIndex):
    name = "crossref"

    async def find(self, query: str, max_results: int) -> list[SearchHit]:
        reply = await self.get_json(
            "/works",
            {"query": query, "rows": min(max(1, max_results), 100), "mailto": self.contact},
        )
        return work_hits(result_rows(reply, "message", "items"))


def work_hits(items: list[dict[str, Any]]) -> list[SearchHit]:
    """The works' hits, retraction notices dropped and the works they name flagged."""
    retracted_by_notice = {
        doi for item in items for doi in _updates(item.get("update-to"), "DOI") if doi
    }
    hits = []
    for item in items:
        if _updates(item.get("update-to"), "DOI"):
            continue  # a retraction notice
        hit = item_hit(item)
        if hit is not None and hit.paper is not None and hit.paper.doi in retracted_by_notice:
            hit = hit.model_copy(update={"paper": hit.paper.model_copy(update={"retracted": True})})
        if hit is not None:
            hits.append(hit)
    return hits


def item_hit(item: dict[str, Any]) -> SearchHit | None:
    relation = item.get("relation")
    relation = relation if isinstance(relation, dict) else {}
    retracted = bool(relation.get("is-retracted-by")) or bool(
        _updates(item.get("updated-by"), "type")
    )
    paper = Paper(
        doi=bare_doi(item.get("DOI")),
        authors=[name for a in _list(item.get("author")) if (name := _author(a))],
        year=next(
            (
                year
                for key in ("issued", "published", "published-print", "published-online")
                if (year := _year(item.get(key)))
            ),
            None,
        ),
        venue=_first(item.get("container-title")),
        retracted=retracted,
        abstract=plain(_JATS_TITLE.sub(" ", item.get("abstract") or "")),
        kind=KINDS.get(str(item.get("type") or ""), str(item.get("type") or "")),
    )
    url = item.get("URL")
    return paper_hit(
        "crossref", _first(item.get("title")), paper, url if isinstance(url, str) else ""
    )


def _updates(value: Any, field: str) -> list[str]:
    """`field` of each update of type retraction (Crossref's `update-to` and `updated-by`)."""
    return [
        bare_doi(u.get(field)) if field == "DOI" else str(u.get(field))
        for u in _list(value)
        if isinstance(u, dict) and str(u.get("type", "")).lower() == "retraction"
    ]


def _author(author: Any) -> str:
    if not isinstance(author, dict):
        return ""
    parts = (plain(author.get("given")).strip(), plain(author.get("family")).strip())
    return one_line(" ".join(p for p in parts if p)) or one_line(plain(author.get("name")))


def _year(date: Any) -> int | None:
    parts = date.get("date-parts") if isinstance(date, dict) else None
    first = parts[0] if isinstance(parts, list) and parts and isinstance(parts[0], list) else []
    return year_of(first[0]) if first else None


def _first(value: Any) -> str:
    values = value if isinstance(value, list) else [value]
    return next((one_line(plain(v)) for v in values if isinstance(v, str) and v.strip()), "")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
