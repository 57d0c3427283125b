"""One work, one source: the hits of several scholarly indexes merged into one per work.

The same paper comes back from OpenAlex, arXiv and Crossref, and as a preprint beside its
published version. Cited three times it would look like three sources agreeing, so the hits of one
work are merged into one hit whose metadata is the richest the indexes gave together.

- **What makes two hits one work.** The same published DOI, or the same arXiv id (an arXiv
  preprint's own DOI, `10.48550/arXiv.ID`, counts as its arXiv id). Two different published DOIs
  are two works even when they share a preprint (a conference paper and its journal version).
  Merging is transitive: a preprint that OpenAlex lists apart from its journal version is joined
  to it by arXiv's entry, which names both.
- **What the merged hit keeps.** The published version's year, venue and kind over the
  preprint's; the longest author list and abstract; any full text; retracted when any index says
  so; every index that found it; the published DOI over the arXiv one. Its URL is the published
  DOI's resolver link, else the arXiv abstract page, else the first hit's.
- **Pure.** No I/O: the activities use it on one index's answer and the workflow on the hits of
  several (deterministic, so it replays).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote

from workflows.activity_models import SearchHit
from workflows.record import SNIPPET_LIMIT, Paper
from workflows.text import trim

#: What the indexes are called where a person reads it.
INDEX_WORDS = {
    "openalex": "OpenAlex",
    "arxiv": "arXiv",
    "crossref": "Crossref",
    "semanticscholar": "Semantic Scholar",
    "pubmed": "PubMed",
}
#: arXiv's own DOIs (issued to every preprint since 2022): `10.48550/arXiv.2101.00001`.
ARXIV_DOI_PREFIX = "10.48550/arxiv."
_DOI_PREFIXES = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.I)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
#: New-style (2101.00001, 0704.0001) and old-style (hep-th/9901001) ids, with an optional version.
_ARXIV_ID = re.compile(r"(\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})(?:v\d+)?$", re.I)
_ARXIV_URL = re.compile(
    r"^https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/(.+?)(?:\.pdf)?/?$", re.I
)


def bare_doi(value: object) -> str:
    """A DOI as the record keeps it: no resolver prefix, lower case (DOIs are case-insensitive);
    "" for anything that is not one."""
    if not isinstance(value, str):
        return ""
    doi = unquote(_DOI_PREFIXES.sub("", value.strip())).strip().lower()
    return doi if _DOI.match(doi) else ""


def arxiv_id(value: object) -> str:
    """An arXiv id without its version, from an id (`2101.00001v2`, `arXiv:hep-th/9901001`), an
    abs or pdf URL, or arXiv's own DOI; "" for anything else."""
    if not isinstance(value, str):
        return ""
    text = value.strip()
    if found := _ARXIV_URL.match(text):
        text = found.group(1)
    elif bare_doi(text).startswith(ARXIV_DOI_PREFIX):
        text = bare_doi(text)[len(ARXIV_DOI_PREFIX) :]
    text = re.sub(r"^arxiv:", "", text, flags=re.I)
    found = _ARXIV_ID.fullmatch(text)
    return found.group(1) if found else ""


def published_doi(paper: Paper) -> str:
    """The DOI of the work as published: any DOI but arXiv's own."""
    return "" if paper.doi.startswith(ARXIV_DOI_PREFIX) else paper.doi


def normalized(paper: Paper) -> Paper:
    """DOI bare and lower-case; an arXiv DOI also gives the arXiv id."""
    doi = bare_doi(paper.doi)
    arxiv = arxiv_id(paper.arxiv_id) or (arxiv_id(doi) if doi.startswith(ARXIV_DOI_PREFIX) else "")
    if doi == paper.doi and arxiv == paper.arxiv_id:
        return paper
    return paper.model_copy(update={"doi": doi, "arxiv_id": arxiv})


def same_work(a: Paper, b: Paper) -> bool:
    """The same published DOI, or the same arXiv id unless their published DOIs differ."""
    a, b = normalized(a), normalized(b)
    doi_a, doi_b = published_doi(a), published_doi(b)
    if doi_a and doi_b:
        return doi_a == doi_b
    return bool(a.arxiv_id) and a.arxiv_id == b.arxiv_id


def merged(a: Paper, b: Paper) -> Paper:
    """The richest description of one work from two: the published version's fields first."""
    a, b = normalized(a), normalized(b)
    first, other = (b, a) if published_doi(b) and not published_doi(a) else (a, b)
    return Paper(
        doi=published_doi(first) or published_doi(other) or first.doi or other.doi,
        arxiv_id=first.arxiv_id or other.arxiv_id,
        authors=max(first.authors, other.authors, key=len),
        year=first.year or other.year,
        venue=first.venue or other.venue,
        retracted=first.retracted or other.retracted,
        full_text_url=first.full_text_url or other.full_text_url,
        abstract=max(first.abstract, other.abstract, key=len),
        kind=first.kind or other.kind,
        found_in=list(dict.fromkeys([*a.found_in, *b.found_in])),
    )


def paper_url(paper: Paper, landing: str = "") -> str:
    """Where a reader (and a reference manager) finds the work: the published DOI's resolver
    link, else the arXiv abstract page, else any DOI's, else the index's landing page."""
    if doi := published_doi(paper):
        return f"https://doi.org/{doi}"
    if paper.arxiv_id:
        return f"https://arxiv.org/abs/{paper.arxiv_id}"
    if paper.doi:
        return f"https://doi.org/{paper.doi}"
    return landing


def merge_hits(hits: Iterable[SearchHit]) -> list[SearchHit]:
    """One hit per work, in the order each work was first found; hits without a paper (web pages)
    are kept as they are."""
    groups: list[SearchHit] = []
    for hit in hits:
        if hit.paper is None:
            groups.append(hit)
            continue
        paper = normalized(hit.paper)
        hit = hit.model_copy(update={"paper": paper})
        matches = [
            i for i, g in enumerate(groups) if g.paper is not None and same_work(g.paper, paper)
        ]
        if not matches:
            groups.append(hit)
            continue
        into = matches[0]
        for i in matches[1:]:
            groups[into] = _joined(groups[into], groups[i])
        groups[into] = _joined(groups[into], hit)
        for i in reversed(matches[1:]):
            del groups[i]
    return groups


def _joined(kept: SearchHit, other: SearchHit) -> SearchHit:
    assert kept.paper is not None and other.paper is not None
    paper = merged(kept.paper, other.paper)
    snippet = trim(" ".join(paper.abstract.split()), SNIPPET_LIMIT) or kept.snippet
    return kept.model_copy(
        update={
            "url": paper_url(paper, kept.url),
            "snippet": snippet,
            "paper": paper,
        }
    )
