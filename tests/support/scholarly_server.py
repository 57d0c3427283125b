"""A loopback stand-in for the scholarly indexes: OpenAlex, arXiv and Crossref (and Semantic
Scholar and PubMed's E-utilities) answering in each index's documented format from a small
catalogue of works the test gives, plus the open-access full texts the catalogue points to.

    with ScholarlyServer(CATALOGUE, Traps(rate_limited={"arxiv"})) as server:
        env = server.settings_env()      # OPENALEX_URL, ARXIV_URL, ... pointing here
        ...                              # a worker, a search_papers activity, a research
        server.requests                  # each request: index, path, query, headers, time

Routes (each index's own path under its prefix, as the settings' defaults have it):

  /openalex/works?search=&per-page=&mailto=         OpenAlex's Works list (JSON)
  /arxiv/query?search_query=all:...&max_results=    arXiv's Atom feed (arxiv: namespace)
  /crossref/works?query=&rows=&mailto=              Crossref's work-list message (JSON)
  /s2/paper/search?query=&limit=&fields=            Semantic Scholar's Graph API search (JSON)
  /pubmed/esearch.fcgi, /pubmed/efetch.fcgi         E-utilities: ids (JSON), then articles (XML)
  /oa/<key>.html, /oa/<key>.pdf                     a work's open-access full text
  /robots.txt                                       everything allowed

A work is listed by the indexes named in `Work.indexes` (arXiv only lists works with an arXiv id).
A query matches the works sharing a word of three letters or more with their title or abstract,
best first (every work for a query without such words, or with `match_all=True`).

The traps (each switchable per test; CATALOGUE has a work for each of the catalogue's own):

- the same work in several indexes (the default: every index lists every work it can);
- a preprint and its published version (`Work(arxiv_id=..., doi=...)`): arXiv gives the
  published DOI (`arxiv:doi`, `arxiv:journal_ref`), OpenAlex one merged record whose locations
  include arxiv.org/abs/ID, or (`preprint_separately=True`) two records, the preprint under
  arXiv's own DOI 10.48550/arXiv.ID;
- a retracted work (`retracted=True`): OpenAlex `is_retracted`, Crossref `relation.is-retracted-by`
  and `updated-by` of type retraction, and the retraction notice itself as another Crossref item
  (`update-to` of type retraction, pointing at the work);
- hostile titles, authors in several scripts, a DOI that resolves nowhere and a full text that
  is not there (`full_text="missing"`: a 404), in CATALOGUE;
- per index (`Traps`): a 429 with Retry-After on its first request, a malformed reply (broken
  XML or JSON), an empty result, or a fixed error status.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape, quoteattr

from tests.support.documents import make_pdf
from tests.support.http_doubles import local_server, send_json, serving

INDEXES = ("openalex", "arxiv", "crossref", "semanticscholar", "pubmed")
#: The URL prefix of each index on this server.
PREFIX = {
    "openalex": "/openalex",
    "arxiv": "/arxiv",
    "crossref": "/crossref",
    "semanticscholar": "/s2",
    "pubmed": "/pubmed",
}
CONTACT = "researcher@example.org"


@dataclass
class Work:
    """One work of the catalogue, as the indexes that list it describe it."""

    key: str  #: this server's name for it (its full text is /oa/<key>.html or .pdf)
    title: str
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str = ""
    abstract: str = ""
    #: The published DOI (as registered: mixed case allowed), "" for none.
    doi: str = ""
    #: The arXiv id (no version) when it is, or has, a preprint on arXiv.
    arxiv_id: str = ""
    retracted: bool = False
    #: What OpenAlex's best_oa_location (and Semantic Scholar's openAccessPdf) point to:
    #: "html", "pdf", "missing" (a 404) or "" (no open-access copy).
    full_text: str = ""
    #: OpenAlex lists the preprint (DOI 10.48550/arXiv.ID) and the published work separately.
    preprint_separately: bool = False
    indexes: tuple[str, ...] = INDEXES
    #: PubMed's id, when PubMed lists it.
    pmid: str = ""

    @property
    def words(self) -> set[str]:
        return set(re.findall(r"\w{3,}", f"{self.title} {self.abstract}".lower()))

    def listed_by(self, index: str) -> bool:
        if index not in self.indexes:
            return False
        if index == "arxiv":
            return bool(self.arxiv_id)
        if index == "pubmed":
            return bool(self.pmid)
        return True

    def full_text_body(self) -> str:
        """The marker a test finds in what was read: only the full text contains it."""
        return f"FULLTEXT-{self.key}: the complete text of {self.title}."


@dataclass
class Traps:
    """Request-level traps, each a set of index names."""

    #: A 429 with `Retry-After: retry_after_s` on the index's first request.
    rate_limited: set[str] = field(default_factory=set)
    retry_after_s: float = 1
    #: A reply that does not parse (arXiv: broken XML; the others: broken JSON).
    malformed: set[str] = field(default_factory=set)
    #: Nothing found, whatever the query.
    empty: set[str] = field(default_factory=set)
    #: index -> the HTTP status it always answers (e.g. 503, 400).
    status: dict[str, int] = field(default_factory=dict)


@dataclass
class Request:
    """One request the server received."""

    index: str  #: "openalex", ..., "oa" for a full text, "" for anything else
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    at: float  #: time.monotonic() when it arrived


#: A catalogue with every trap of the kind a catalogue can hold.
CATALOGUE: list[Work] = [
    Work(
        key="attention",
        title="Attention over tide pools",
        authors=["Ada Lovelace", "Alan Turing"],
        year=2019,
        venue="Journal of Marine Computation",
        abstract="We study attention mechanisms in tide pool ecology surveys.",
        doi="10.5555/JMC.2019.001",
        full_text="html",
    ),
    Work(
        key="preprint",
        title="Sparse tide pool transformers",
        authors=["Grace Hopper", "Edsger Dijkstra", "Barbara Liskov"],
        year=2021,
        venue="Transactions on Tide Pools",
        abstract="A preprint later published: sparse transformers count tide pool species.",
        doi="10.5555/ttp.2021.42",
        arxiv_id="2101.00001",
        full_text="pdf",
        preprint_separately=True,
    ),
    Work(
        key="retracted",
        title="Tide pools cure everything",
        authors=["John Fabricator"],
        year=2018,
        venue="Journal of Doubtful Results",
        abstract="Tide pool water cures every disease, we claimed.",
        doi="10.5555/jdr.2018.13",
        retracted=True,
        indexes=("openalex", "crossref"),
    ),
    Work(
        key="hostile",
        title="Tide pools & 100% {braces} under_score }, note = {x} @comment{ <b>bold</b>",
        authors=["李小龍", "Мария Иванова", "Zoë Ångström"],
        year=2020,
        venue="Proceedings of {Hostile} & Co",
        abstract="Tide pool titles with TeX specials: & % { } _ and a <i>tag</i>.",
        doi="10.5555/hostile_2020",
        indexes=("openalex", "crossref"),
    ),
    Work(
        key="nowhere",
        title="A tide pool DOI that resolves nowhere",
        authors=["Nobody Known"],
        year=2022,
        abstract="This tide pool work's DOI is registered nowhere and its full text is gone.",
        doi="10.9999/nowhere.404",
        full_text="missing",
        indexes=("openalex",),
    ),
]


class ScholarlyServer(AbstractContextManager["ScholarlyServer"]):
    """The indexes of `works` on one threaded loopback server (a context manager)."""

    def __init__(
        self,
        works: Sequence[Work] = tuple(CATALOGUE),
        traps: Traps | None = None,
        *,
        match_all: bool = False,
    ) -> None:
        self.works = list(works)
        self.traps = traps or Traps()
        self.match_all = match_all
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server = local_server(self._handler(), backlog=64)
        self._serving: AbstractContextManager[Any] | None = None

    # --- the API ----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def index_url(self, index: str) -> str:
        return self.url + PREFIX[index]

    def settings_env(self, contact: str = CONTACT) -> dict[str, str]:
        """The variables that point a worker at this server (and let its crawler read the full
        texts here: CRAWL_ALLOW_PRIVATE)."""
        return {
            "OPENALEX_URL": self.index_url("openalex"),
            "ARXIV_URL": self.index_url("arxiv"),
            "CROSSREF_URL": self.index_url("crossref"),
            "SEMANTIC_SCHOLAR_URL": self.index_url("semanticscholar"),
            "PUBMED_URL": self.index_url("pubmed"),
            "RESEARCH_CONTACT_EMAIL": contact,
            "CRAWL_ALLOW_PRIVATE": "1",
        }

    def requests_to(self, index: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.index == index]

    def full_text_url(self, work: Work) -> str:
        """Where `work`'s open-access copy is (or is said to be), "" for none."""
        if not work.full_text:
            return ""
        suffix = {"html": "html", "pdf": "pdf", "missing": "gone.html"}[work.full_text]
        return f"{self.url}/oa/{work.key}.{suffix}"

    def __enter__(self) -> ScholarlyServer:
        self._serving = serving(self._server)
        self._serving.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._serving is not None:
            self._serving.__exit__(kind, exc, tb)

    # --- answering --------------------------------------------------------------------------------

    def found(self, index: str, query: str, limit: int) -> list[Work]:
        if index in self.traps.empty:
            return []
        listed = [w for w in self.works if w.listed_by(index)]
        words = set(re.findall(r"\w{3,}", query.lower())) - {"all", "and", "andnot"}
        if self.match_all or not words:
            return listed[:limit]
        scored = [(len(words & w.words), i, w) for i, w in enumerate(listed)]
        return [w for n, _, w in sorted(scored, key=lambda t: (-t[0], t[1])) if n][:limit]

    def _first_request(self, index: str) -> bool:
        with self._lock:
            return sum(r.index == index for r in self.requests) == 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                index = next(
                    (i for i, p in PREFIX.items() if parts.path.startswith(p + "/")),
                    "oa" if parts.path.startswith("/oa/") else "",
                )
                with server._lock:
                    server.requests.append(
                        Request(
                            index, parts.path, query, dict(self.headers.items()), time.monotonic()
                        )
                    )
                try:
                    server._answer(self, index, parts.path, query)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    def _answer(
        self, handler: BaseHTTPRequestHandler, index: str, path: str, query: dict[str, str]
    ) -> None:
        traps = self.traps
        if path == "/robots.txt":
            return _send(handler, 200, "User-agent: *\nAllow: /\n", "text/plain")
        if index == "oa":
            return self._full_text(handler, path)
        if not index:
            return _send(handler, 404, "not found", "text/plain")
        if index in traps.rate_limited and self._first_request(index):
            headers = {"Retry-After": f"{traps.retry_after_s:g}"}
            return send_json(handler, 429, {"error": "Too Many Requests"}, headers)
        if index in traps.status:
            return send_json(handler, traps.status[index], {"error": "as the test asked"})
        if index in traps.malformed:
            if index in ("arxiv", "pubmed") and not path.endswith("esearch.fcgi"):
                return _send(handler, 200, '<feed xmlns="x"><entry><title>cut', "application/xml")
            return _send(handler, 200, '{"results": [{"title": "cut', "application/json")
        sub = path[len(PREFIX[index]) :]
        if index == "openalex" and sub == "/works":
            limit = int(query.get("per-page", 25))
            works = self.found(index, query.get("search", ""), limit)
            return send_json(handler, 200, self._openalex(works, limit))
        if index == "arxiv" and sub == "/query":
            limit = int(query.get("max_results", 10))
            works = self.found(index, query.get("search_query", ""), limit)
            return _send(handler, 200, self._arxiv(works), "application/atom+xml; charset=utf-8")
        if index == "crossref" and sub == "/works":
            works = self.found(index, query.get("query", ""), int(query.get("rows", 20)))
            return send_json(handler, 200, self._crossref(works))
        if index == "semanticscholar" and sub == "/paper/search":
            works = self.found(index, query.get("query", ""), int(query.get("limit", 10)))
            return send_json(handler, 200, self._semantic_scholar(works))
        if index == "pubmed" and sub == "/esearch.fcgi":
            works = self.found(index, query.get("term", ""), int(query.get("retmax", 20)))
            ids = [w.pmid for w in works]
            return send_json(
                handler, 200, {"esearchresult": {"count": str(len(ids)), "idlist": ids}}
            )
        if index == "pubmed" and sub == "/efetch.fcgi":
            wanted = query.get("id", "").split(",")
            works = [w for w in self.works if w.pmid and w.pmid in wanted]
            return _send(handler, 200, self._pubmed(works), "text/xml; charset=utf-8")
        return send_json(handler, 404, {"error": f"no such route {path}"})

    def _full_text(self, handler: BaseHTTPRequestHandler, path: str) -> None:
        name = path.removeprefix("/oa/")
        key, _, suffix = name.partition(".")
        work = next((w for w in self.works if w.key == key), None)
        if work is None or suffix not in ("html", "pdf") or work.full_text != suffix:
            return _send(handler, 404, "<h1>Not found</h1>", "text/html; charset=utf-8")
        if suffix == "pdf":
            lines = [work.full_text_body(), "Methods, results and discussion follow."]
            return _send(handler, 200, make_pdf([lines]), "application/pdf")
        page = (
            f"<!doctype html><html><head><title>{escape(work.title)}</title></head><body>"
            f"<article><h1>{escape(work.title)}</h1><p>{escape(work.full_text_body())}</p>"
            f"<p>{escape(work.abstract)} The methods, results and discussion follow in full, "
            "as an open-access copy of the article.</p></article></body></html>"
        )
        return _send(handler, 200, page, "text/html; charset=utf-8")

    # --- the formats --------------------------------------------------------------------------------

    def _openalex(self, works: list[Work], limit: int) -> dict[str, Any]:
        results: list[dict[str, Any]] = []
        for n, work in enumerate(works, 1):
            if work.preprint_separately and work.arxiv_id:
                results.append(self._openalex_record(work, n, preprint=False))
                results.append(self._openalex_record(work, 1000 + n, preprint=True))
            else:
                results.append(self._openalex_record(work, n, preprint=False))
        results = results[:limit]
        meta = {"count": len(results), "db_response_time_ms": 3, "page": 1, "per_page": limit}
        return {"meta": meta, "results": results, "group_by": []}

    def _openalex_record(self, work: Work, n: int, *, preprint: bool) -> dict[str, Any]:
        arxiv = f"https://arxiv.org/abs/{work.arxiv_id}" if work.arxiv_id else ""
        doi = f"10.48550/arXiv.{work.arxiv_id}" if preprint or not work.doi else work.doi
        locations = []
        oa = self.full_text_url(work)
        venue = {"display_name": work.venue, "type": "journal"} if work.venue else None
        if not preprint:
            locations.append(
                {
                    "is_oa": bool(oa),
                    "landing_page_url": f"https://doi.org/{doi}",
                    "pdf_url": oa if oa.endswith(".pdf") else None,
                    "source": venue,
                }
            )
        if arxiv and (preprint or not work.preprint_separately):
            locations.append(
                {
                    "is_oa": True,
                    "landing_page_url": arxiv,
                    "pdf_url": f"https://arxiv.org/pdf/{work.arxiv_id}",
                    "source": {"display_name": "arXiv (Cornell University)", "type": "repository"},
                }
            )
        best = None
        if oa:
            best = {
                "is_oa": True,
                "landing_page_url": oa if oa.endswith(".html") else f"https://doi.org/{doi}",
                "pdf_url": oa if oa.endswith(".pdf") else None,
                "source": venue,
            }
        words: dict[str, list[int]] = {}
        for i, word in enumerate(work.abstract.split()):
            words.setdefault(word, []).append(i)
        return {
            "id": f"https://openalex.org/W{n}",
            "doi": f"https://doi.org/{doi}",
            "title": work.title,
            "display_name": work.title,
            "publication_year": work.year,
            "type": "preprint" if preprint else "article",
            "is_retracted": work.retracted and not preprint,
            "ids": {"openalex": f"https://openalex.org/W{n}", "doi": f"https://doi.org/{doi}"},
            "authorships": [
                {"author_position": "first" if i == 0 else "middle", "author": {"display_name": a}}
                for i, a in enumerate(work.authors)
            ],
            "primary_location": locations[0] if locations else None,
            "locations": locations,
            "best_oa_location": best,
            "open_access": {
                "is_oa": bool(oa),
                "oa_status": "green" if oa else "closed",
                "oa_url": oa or None,
            },
            "abstract_inverted_index": words or None,
        }

    def _arxiv(self, works: list[Work]) -> str:
        entries = []
        for work in works:
            version = f"{work.arxiv_id}v2"
            extra = ""
            if work.doi:
                extra += f"<arxiv:doi>{escape(work.doi)}</arxiv:doi>"
                extra += (
                    f'<link title="doi" href="http://dx.doi.org/{escape(work.doi)}" rel="related"/>'
                )
            if work.venue:
                extra += (
                    f"<arxiv:journal_ref>{escape(work.venue)} ({work.year})</arxiv:journal_ref>"
                )
            pdf = self.full_text_url(work) if work.full_text == "pdf" else ""
            pdf = pdf or f"http://arxiv.org/pdf/{version}"
            authors = "".join(f"<author><name>{escape(a)}</name></author>" for a in work.authors)
            entries.append(
                f"""<entry>
    <id>http://arxiv.org/abs/{version}</id>
    <updated>{work.year or 2020}-02-01T00:00:00Z</updated>
    <published>{work.year or 2020}-01-01T00:00:00Z</published>
    <title>{escape(work.title)}</title>
    <summary>  {escape(work.abstract)}
</summary>
    {authors}
    {extra}
    <link href="http://arxiv.org/abs/{version}" rel="alternate" type="text/html"/>
    <link title="pdf" href={quoteattr(pdf)} rel="related" type="application/pdf"/>
    <arxiv:primary_category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
  </entry>"""
            )
        return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <link href="http://arxiv.org/api/query" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: search_query</title>
  <id>http://arxiv.org/api/stand-in</id>
  <updated>2024-01-01T00:00:00-05:00</updated>
  <opensearch:totalResults>{len(works)}</opensearch:totalResults>
  <opensearch:startIndex>0</opensearch:startIndex>
  <opensearch:itemsPerPage>{len(works)}</opensearch:itemsPerPage>
  {"".join(entries)}
</feed>
"""

    def _crossref(self, works: list[Work]) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        for work in works:
            item: dict[str, Any] = {
                "DOI": work.doi or f"10.48550/arXiv.{work.arxiv_id}",
                "title": [work.title],
                "author": [_crossref_author(a, i) for i, a in enumerate(work.authors)],
                "type": "journal-article" if work.venue else "posted-content",
                "URL": f"https://doi.org/{work.doi or '10.48550/arXiv.' + work.arxiv_id}",
                "container-title": [work.venue] if work.venue else [],
                "publisher": "Stand-in Press",
                "score": 12.5,
            }
            if work.year:
                item["issued"] = {"date-parts": [[work.year, 3, 1]]}
                item["published"] = {"date-parts": [[work.year, 3]]}
            if work.abstract:
                item["abstract"] = f"<jats:p>{escape(work.abstract)}</jats:p>"
            if work.retracted:
                notice = f"{work.doi}.retraction"
                item["relation"] = {
                    "is-retracted-by": [{"id-type": "doi", "id": notice, "asserted-by": "object"}]
                }
                item["updated-by"] = [
                    {
                        "DOI": notice,
                        "type": "retraction",
                        "label": "Retraction",
                        "source": "publisher",
                        "updated": {"date-parts": [[(work.year or 2020) + 1, 5, 1]]},
                    }
                ]
            items.append(item)
            if work.retracted:
                items.append(
                    {
                        "DOI": f"{work.doi}.retraction",
                        "title": [f"Retraction notice to “{work.title}”"],
                        "type": "journal-article",
                        "container-title": [work.venue],
                        "issued": {"date-parts": [[(work.year or 2020) + 1, 5, 1]]},
                        "update-to": [
                            {
                                "DOI": work.doi,
                                "type": "retraction",
                                "label": "Retraction",
                                "updated": {"date-parts": [[(work.year or 2020) + 1, 5, 1]]},
                            }
                        ],
                    }
                )
        message = {"facets": {}, "total-results": len(items), "items": items, "items-per-page": 20}
        return {
            "status": "ok",
            "message-type": "work-list",
            "message-version": "1.0.0",
            "message": message,
        }

    def _semantic_scholar(self, works: list[Work]) -> dict[str, Any]:
        data = []
        for n, work in enumerate(works, 1):
            ids: dict[str, Any] = {"CorpusId": 1000 + n}
            if work.doi:
                ids["DOI"] = work.doi
            if work.arxiv_id:
                ids["ArXiv"] = work.arxiv_id
            if work.pmid:
                ids["PubMed"] = work.pmid
            oa = self.full_text_url(work)
            data.append(
                {
                    "paperId": f"{n:040x}",
                    "url": f"https://www.semanticscholar.org/paper/{n:040x}",
                    "title": work.title,
                    "abstract": work.abstract or None,
                    "venue": work.venue,
                    "year": work.year,
                    "externalIds": ids,
                    "publicationTypes": ["JournalArticle"] if work.venue else None,
                    "openAccessPdf": {"url": oa, "status": "GREEN"} if oa else None,
                    "authors": [
                        {"authorId": str(i), "name": a} for i, a in enumerate(work.authors)
                    ],
                }
            )
        return {"total": len(data), "offset": 0, "data": data}

    def _pubmed(self, works: list[Work]) -> str:
        articles = []
        for work in works:
            authors = "".join(
                '<Author ValidYN="Y">'
                + (
                    f"<LastName>{escape(a.rpartition(' ')[2])}</LastName>"
                    f"<ForeName>{escape(a.rpartition(' ')[0])}</ForeName>"
                    if " " in a
                    else f"<CollectiveName>{escape(a)}</CollectiveName>"
                )
                + "</Author>"
                for a in work.authors
            )
            types = '<PublicationType UI="D016428">Journal Article</PublicationType>'
            if work.retracted:
                types += '<PublicationType UI="D016441">Retracted Publication</PublicationType>'
            ids = f'<ArticleId IdType="pubmed">{work.pmid}</ArticleId>'
            if work.doi:
                ids += f'<ArticleId IdType="doi">{escape(work.doi)}</ArticleId>'
            articles.append(
                f"""<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">
  <PMID Version="1">{work.pmid}</PMID>
  <Article PubModel="Print">
    <Journal><JournalIssue CitedMedium="Internet"><PubDate><Year>{work.year or ""}</Year></PubDate></JournalIssue>
      <Title>{escape(work.venue)}</Title></Journal>
    <ArticleTitle>{escape(work.title)}</ArticleTitle>
    <Abstract><AbstractText>{escape(work.abstract)}</AbstractText></Abstract>
    <AuthorList CompleteYN="Y">{authors}</AuthorList>
    <PublicationTypeList>{types}</PublicationTypeList>
  </Article></MedlineCitation>
  <PubmedData><ArticleIdList>{ids}</ArticleIdList></PubmedData></PubmedArticle>"""
            )
        return (
            '<?xml version="1.0" ?>\n<PubmedArticleSet>' + "".join(articles) + "</PubmedArticleSet>"
        )


def _crossref_author(name: str, i: int) -> dict[str, Any]:
    given, _, family = name.rpartition(" ")
    author: dict[str, Any] = {"family": family, "sequence": "first" if i == 0 else "additional"}
    if given:
        author["given"] = given
    return author


def _send(handler: BaseHTTPRequestHandler, status: int, body: str | bytes, kind: str) -> None:
    data = body.encode() if isinstance(body, str) else body
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except OSError:
        pass


def paced(requests: list[Request]) -> Iterator[float]:
    """The gaps, in seconds, between consecutive requests (for a test of an index's pace)."""
    times = sorted(r.at for r in requests)
    return (b - a for a, b in zip(times, times[1:], strict=False))
