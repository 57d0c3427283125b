"""A research as people outside the server see it (the web pages, the API, the downloads, the CLI
and MCP): `public_result(result, corpus_dir, data_dir)`.

- Every text cleaned as the downloads clean it (`starter.exports.clean`): no controls, no bidi
  overrides or isolates, no zero-width characters that could make the page say what it does not.
- Every local source named by the one rule of `storage/public_names.py` (its path inside
  the corpus, an upload's file name), in its URL and wherever the report, the evidence, the notes
  or what changed spell it: never the server's absolute path.
"""

from __future__ import annotations

from pathlib import Path

from settings import Settings
from starter.exports import clean_result
from storage.public_names import PublicNames
from workflows.models import ResearchResult


def public_result(
    result: ResearchResult, corpus_dir: Path | None = None, data_dir: Path | None = None
) -> ResearchResult:
    safe = clean_result(result)
    if any(s.url.startswith("file:") and not s.provider for s in safe.sources):
        safe = safe.model_copy(
            update={
                "sources": [
                    s.model_copy(update={"provider": "local"})
                    if s.url.startswith("file:") and not s.provider
                    else s
                    for s in safe.sources
                ]
            }
        )
    return PublicNames(corpus_dir, data_dir).model(safe)


def public_for(result: ResearchResult, cfg: Settings) -> ResearchResult:
    """RESULT as anyone but the server sees it, under the settings CFG."""
    return public_result(result, cfg.corpus.folder, cfg.library.data_dir)
