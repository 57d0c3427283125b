"""OpenAlex (https://docs.openalex.org): `GET {OPENALEX_URL}/works?search=...`.

A work's abstract comes as an inverted index (word -> positions, for copyright reasons) and is
put back in order; its open-access copy is `best_oa_location` (its PDF, else `open_access.oa_url`,
else the location's landing page); an arXiv id is read from a location on arxiv.org/abs/ID (or
from arXiv's own DOI). OpenAlex flags retracted works itself (`is_retracted`).
"""

from __future__ import annotations

from typing import Any

from activities.providers.http import plain, result_rows
from activities.providers.scholarly.base import ScholarlyIndex, paper_hit, year_of
from workflows.activity_models import SearchHit
from workflows.kit.papers import arxiv_id, bare_doi
from workflows.record import Paper

#: The fields a hit needs (OpenAlex's `select`): a tenth of a full work's bytes.
FIELDS = (
    "id,doi,title,display_name,publication_year,type,is_retracted,authorships,"
    "primary_location,locations,best_oa_location,open_access,abstract_inverted_index"
)
#: OpenAlex's kinds as the reference exports name them.
KINDS = {"book-chapter": "chapter", "proceedings-article": "proceedings"}


class OpenAlex(ScholarlyIndex):
    name = "openalex"

    async def find(self, query: str, max_results: int) -> list[SearchHit]:
        reply = await self.get_json(
            "/works",
            {
                "search": query,
                "per-page": min(max(1, max_results), 200),
                "select": FIELDS,
                "mailto": self.contact,
            },
        )
        hits = (work_hit(row) for row in result_rows(reply, "results"))
        return [hit for hit in hits if hit is not None]


def work_hit(work: dict[str, Any]) -> SearchHit | None:
    locations = [loc for loc in _list(work.get("locations")) if isinstance(loc, dict)]
    primary = _dict(work.get("primary_location"))
    doi = bare_doi(work.get("doi"))
    arxiv = next(
        (found for loc in locations if (found := arxiv_id(loc.get("landing_page_url") or ""))),
        "",
    )
    paper = Paper(
        doi=doi,
        arxiv_id=arxiv,
        authors=[
            name
            for a in _list(work.get("authorships"))
            if (name := plain(_dict(_dict(a).get("author")).get("display_name")).strip())
        ],
        year=year_of(work.get("publication_year")),
        venue=plain(_dict(primary.get("source")).get("display_name")).strip(),
        retracted=work.get("is_retracted") is True,
        full_text_url=_open_access(work),
        abstract=abstract(work.get("abstract_inverted_index")),
        kind=KINDS.get(str(work.get("type") or ""), str(work.get("type") or "")),
    )
    landing = primary.get("landing_page_url") or work.get("id") or ""
    return paper_hit(
        "openalex", plain(work.get("display_name") or work.get("title")), paper, landing
    )


def abstract(inverted: Any) -> str:
    """The abstract back in order from {word: [positions]}."""
    if not isinstance(inverted, dict):
        return ""
    placed = sorted(
        (position, word)
        for word, positions in inverted.items()
        if isinstance(word, str) and isinstance(positions, list)
        for position in positions
        if isinstance(position, int)
    )
    return plain(" ".join(word for _, word in placed))


def _open_access(work: dict[str, Any]) -> str:
    best = _dict(work.get("best_oa_location"))
    for url in (
        best.get("pdf_url"),
        _dict(work.get("open_access")).get("oa_url"),
        best.get("landing_page_url"),
    ):
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            return url
    return ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
