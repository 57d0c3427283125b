"""PubMed through NCBI's E-utilities (https://www.ncbi.nlm.nih.gov/books/NBK25499/):
`esearch.fcgi` finds the PubMed ids of a query (JSON), `efetch.fcgi` reads their records (XML).

A record gives the title, abstract (its labelled parts joined), authors, journal, year, DOI and
PubMed Central id (PMC's copy is free to read: the full text); a record whose publication types
include "Retracted Publication" is flagged retracted. NCBI asks callers to name their tool and a
contact (`tool`, `email`). A search is two requests, which the pace counts.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from activities.providers.http import one_line
from activities.providers.scholarly.base import ScholarlyIndex, paper_hit, year_of
from workflows.activity_models import SearchHit
from workflows.kit.papers import bare_doi
from workflows.record import Paper

TOOL = "deep-research"


class PubMed(ScholarlyIndex):
    name = "pubmed"

    async def find(self, query: str, max_results: int) -> list[SearchHit]:
        polite = {"tool": TOOL, "email": self.contact}
        found = await self.get_json(
            "/esearch.fcgi",
            {
                "db": "pubmed",
                "term": query,
                "retmax": min(max(1, max_results), 100),
                "retmode": "json",
                **polite,
            },
        )
        result = found.get("esearchresult")
        ids = result.get("idlist") if isinstance(result, dict) else None
        ids = [str(i) for i in ids or [] if str(i).isdigit()]
        if not ids:
            return []
        text = await self.get_text(
            "/efetch.fcgi",
            {"db": "pubmed", "id": ",".join(ids), "retmode": "xml", **polite},
        )
        records = self.xml(text).iter("PubmedArticle")
        hits = (record_hit(record) for record in records)
        return [hit for hit in hits if hit is not None]


def record_hit(record: ET.Element) -> SearchHit | None:
    def words(element: ET.Element | None) -> str:
        return one_line("".join(element.itertext())) if element is not None else ""

    article = record.find("MedlineCitation/Article")
    pmid = words(record.find("MedlineCitation/PMID"))
    if article is None or not pmid:
        return None
    ids = {i.get("IdType"): words(i) for i in record.iterfind("PubmedData/ArticleIdList/ArticleId")}
    parts = [
        f"{part.get('Label')}: {words(part)}" if part.get("Label") else words(part)
        for part in article.iterfind("Abstract/AbstractText")
    ]
    authors = [
        words(a.find("CollectiveName"))
        or " ".join(filter(None, (words(a.find("ForeName")), words(a.find("LastName")))))
        for a in article.iterfind("AuthorList/Author")
    ]
    date = article.find("Journal/JournalIssue/PubDate")
    year = (
        year_of(words(date.find("Year")) or words(date.find("MedlineDate")))
        if date is not None
        else None
    )
    types = {words(t) for t in article.iterfind("PublicationTypeList/PublicationType")}
    pmc = ids.get("pmc", "")
    paper = Paper(
        doi=bare_doi(ids.get("doi")),
        authors=[a for a in authors if a],
        year=year,
        venue=words(article.find("Journal/Title")),
        retracted="Retracted Publication" in types,
        full_text_url=f"https://pmc.ncbi.nlm.nih.gov/articles/{pmc}/" if pmc else "",
        abstract=" ".join(p for p in parts if p),
        kind="article",
    )
    landing = f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
    return paper_hit("pubmed", words(article.find("ArticleTitle")), paper, landing)
