"""What each Sources choice searches, and which model writes, in the words the home page shows.

Read from the web app's own settings, which are the worker's: every process of a deployment gets
one environment (`make dev` one for its dev server, worker and web app; Kubernetes one ConfigMap and
Secret), so the page offers what the worker has: "Configured" says "the Python documentation (no
web search configured)" when that is all there is, and "Web" is offered disabled, saying why under
the chooser, before anyone starts a research that would be refused.
"""

from __future__ import annotations

from settings import Settings
from workflows.kit.papers import INDEX_WORDS
from workflows.models import Sources

#: The search providers by the names people know them by (`local` is said by `corpus_words`).
PROVIDER_WORDS = {
    "duckduckgo": "DuckDuckGo",
    "searxng": "SearXNG",
    "tavily": "Tavily",
    "brave": "Brave Search",
}


def sources_words(cfg: Settings) -> list[tuple[str, str]]:
    """Each `sources` value with what it searches under CFG (the worker's settings); a choice it
    cannot search says "not configured" in a few words (the why is `unavailable_sources`, for the
    line under the chooser: a whole sentence in an option was cut off on a phone)."""
    web = _web_words(cfg)
    papers = ", ".join(INDEX_WORDS.get(n, n) for n in cfg.papers.indexes)
    searched = [
        (Sources.CONFIGURED.value, f"Configured: {configured_words(cfg)}"),
        (Sources.WEB.value, f"Web: {web}"),
        (Sources.DOCUMENTS.value, f"Your documents and {corpus_words(cfg)}"),
        (Sources.BOTH.value, f"Web ({web}) and your documents"),
        (Sources.PAPERS.value, f"Papers: {papers}"),
    ]
    unavailable = unavailable_sources(cfg)
    return [
        (value, f"{UNAVAILABLE_WORDS[value]} (not configured)" if value in unavailable else words)
        for value, words in searched
    ]


#: What an unavailable choice is called, before "(not configured)".
UNAVAILABLE_WORDS = {
    Sources.WEB.value: "Web",
    Sources.BOTH.value: "Web and your documents",
    Sources.PAPERS.value: "Papers",
}


def unavailable_sources(cfg: Settings) -> dict[str, str]:
    """The `sources` values the worker cannot search under CFG, each with why: a form offers them
    disabled, saying why under the chooser, rather than starting a research that is refused."""
    why: dict[str, str] = {}
    if not cfg.search.web_providers:
        no_web = "web search, no provider is configured (SEARCH_PROVIDER)"
        why[Sources.WEB.value] = why[Sources.BOTH.value] = no_web
    if not cfg.papers.indexes:
        why[Sources.PAPERS.value] = "papers, no scholarly index is configured (SCHOLARLY_PROVIDERS)"
    return why


def configured_words(cfg: Settings) -> str:
    """What SEARCH_PROVIDER, SEARCH_FALLBACK_PROVIDERS and SEARCH_STRATEGY search together."""
    strategy = cfg.search.strategy.strip().lower()
    names = [_provider_words(cfg, n) for n in cfg.search.provider_names(strategy == "conservative")]
    joined = (" and " if strategy == "exploratory" else ", then ").join(names)
    return joined if cfg.search.web_providers else f"{joined} (no web search configured)"


def corpus_words(cfg: Settings) -> str:
    """The local corpus: RESEARCH_CORPUS_DIR's folder, else the bundled Python documentation."""
    folder = cfg.corpus.folder
    return f"the documents in {folder.name or folder}" if folder else "the Python documentation"


def model_words(cfg: Settings) -> str:
    """Whether a model is configured, and which one writes the report."""
    if cfg.llm.engine == "offline":
        return (
            "No model is configured: the offline engine writes extractive reports from the "
            "sentences it finds (set OPENAI_API_KEY or OPENAI_BASE_URL for a model)."
        )
    return f"Model: {cfg.llm.model_for('complex')} ({cfg.llm.engine})."


def _web_words(cfg: Settings) -> str:
    return ", then ".join(_provider_words(cfg, n) for n in cfg.search.web_providers)


def _provider_words(cfg: Settings, name: str) -> str:
    return corpus_words(cfg) if name == "local" else PROVIDER_WORDS.get(name, name)
