"""Semantic Scholar's Graph API (https://api.semanticscholar.org/api-docs/graph):
`GET {SEMANTIC_SCHOLAR_URL}/paper/search?query=...&fields=...`.

External ids give the DOI and the arXiv id; `openAccessPdf` the open-access copy. The API says
nothing of retractions (OpenAlex and Crossref do, and merging keeps their flag).
"""

from __future__ import annotations

from typing import Any

from activities.providers.http import one_line, plain, result_rows
from activities.providers.scholarly.base import ScholarlyIndex, paper_hit, year_of
from workflows.activity_models import SearchHit
from workflows.kit.papers import arxiv_id, bare_doi
from workflows.record import Paper

FIELDS = "title,abstract,authors,year,venue,externalIds,openAccessPdf,publicationTypes,url"
KINDS = {"JournalArticle": "article", "Conference": "proceedings", "Book": "book"}


class SemanticScholar(ScholarlyIndex):
    name = "semanticscholar"

    async def find(self, query: str, max_results: int) -> list[SearchHit]:
        reply = await self.get_json(
            "/paper/search",
            {"query": query, "limit": min(max(1, max_results), 100), "fields": FIELDS},
        )
        hits = (paper_of(row) for row in result_rows(reply, "data"))
        return [hit for hit in hits if hit is not None]


def paper_of(row: dict[str, Any]) -> SearchHit | None:
    ids, pdf = _dict(row.get("externalIds")), _dict(row.get("openAccessPdf"))
    kinds = [k for k in row.get("publicationTypes") or [] if isinstance(k, str)]
    full_text = _text(pdf.get("url"))
    paper = Paper(
        doi=bare_doi(ids.get("DOI")),
        arxiv_id=arxiv_id(ids.get("ArXiv") or ""),
        authors=[
            name
            for a in row.get("authors") or []
            if isinstance(a, dict) and (name := one_line(a.get("name")))
        ],
        year=year_of(row.get("year")),
        venue=one_line(plain(row.get("venue"))),
        full_text_url=full_text if full_text.startswith(("http://", "https://")) else "",
        abstract=plain(row.get("abstract")),
        kind=next((KINDS[k] for k in kinds if k in KINDS), ""),
    )
    return paper_hit("semanticscholar", plain(row.get("title")), paper, _text(row.get("url")))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
