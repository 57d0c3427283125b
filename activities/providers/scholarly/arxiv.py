"""arXiv (https://info.arxiv.org/help/api/user-manual.html): `GET {ARXIV_URL}/query?search_query=...`.

The answer is an Atom feed; arXiv's own fields are in the `http://arxiv.org/schemas/atom`
namespace: `arxiv:doi` (the published version's DOI, when the authors gave it),
`arxiv:journal_ref`, `arxiv:primary_category`. An entry's id is its abs URL with a version
(`http://arxiv.org/abs/2101.00001v2`): the paper keeps the id without it. Every arXiv paper is
open access: its PDF link is the full text. A preprint whose published DOI is known is cited by
that DOI (its hit's URL), and merges with the published version found elsewhere.

arXiv asks for no more than one request every three seconds (activities/providers/scholarly/).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from activities.providers.http import one_line
from activities.providers.scholarly.base import ScholarlyIndex, malformed, paper_hit, year_of
from workflows.activity_models import SearchHit
from workflows.kit.papers import arxiv_id, bare_doi
from workflows.record import Paper

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
#: Words of a query as arXiv's search grammar takes them (its operators and brackets dropped).
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_OPERATORS = {"and", "or", "andnot", "not"}
#: The most words put into one query: every word must match (AND), so more finds nothing.
MAX_WORDS = 6


class Arxiv(ScholarlyIndex):
    name = "arxiv"

    async def find(self, query: str, max_results: int) -> list[SearchHit]:
        search_query = search_terms(query)
        if not search_query:
            return []
        text = await self.get_text(
            "/query",
            {
                "search_query": search_query,
                "max_results": min(max(1, max_results), 100),
                "sortBy": "relevance",
            },
        )
        feed = self.xml(text)
        if feed.tag != f"{ATOM}feed":
            raise malformed(f"arxiv answered with <{feed.tag}>, not an Atom feed")
        hits = (entry_hit(entry) for entry in feed.iter(f"{ATOM}entry"))
        return [hit for hit in hits if hit is not None]


def search_terms(query: str) -> str:
    """`all:word AND all:word ...`: arXiv matches each word in any field."""
    words = [w for w in _WORD.findall(query) if w.lower() not in _OPERATORS]
    words = [w for w in words if len(w) > 2] or words
    return " AND ".join(f"all:{w}" for w in list(dict.fromkeys(words))[:MAX_WORDS])


def entry_hit(entry: ET.Element) -> SearchHit | None:
    def text(tag: str) -> str:
        return one_line(entry.findtext(tag) or "")

    identifier = arxiv_id(text(f"{ATOM}id"))
    if not identifier:  # arXiv's error feed is an entry without an abs id
        return None
    published = bare_doi(text(f"{ARXIV}doi"))
    pdf = next(
        (
            link.get("href", "")
            for link in entry.iter(f"{ATOM}link")
            if link.get("title") == "pdf" or link.get("type") == "application/pdf"
        ),
        "",
    )
    journal = text(f"{ARXIV}journal_ref")
    paper = Paper(
        doi=published or f"10.48550/arxiv.{identifier}",
        arxiv_id=identifier,
        authors=[
            name
            for author in entry.iter(f"{ATOM}author")
            if (name := one_line(author.findtext(f"{ATOM}name") or ""))
        ],
        year=year_of(text(f"{ATOM}published")),
        venue=journal or "arXiv",
        full_text_url=re.sub(r"^http://(?=(?:www\.|export\.)?arxiv\.org/)", "https://", pdf),
        abstract=text(f"{ATOM}summary"),
        kind="article" if published else "preprint",
    )
    return paper_hit("arxiv", text(f"{ATOM}title"), paper)
