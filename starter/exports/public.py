"""A research as people outside the server see it (the web pages and downloads):
`public_result(result, corpus_dir)`.

- Every text cleaned as the downloads clean it (`starter.exports.clean`): no controls, no bidi
  overrides or isolates, no zero-width characters that could make the page say what it does not.
- A source of the local corpus shown by its name inside the corpus (`guides/setup.md`, with a
  `#page=3` kept), never by the server's absolute path (`file:///srv/app/corpus/guides/setup.md`);
  a file outside the corpus folder (or the default corpus's, the interpreter's library) by its
  file name alone; so are the sources a standing research's run lists as new or gone.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from starter.exports import clean_result
from workflows.models import ResearchResult


def public_result(result: ResearchResult, corpus_dir: Path | None = None) -> ResearchResult:
    safe = clean_result(result)
    roots = [Path(corpus_dir).expanduser().resolve()] if corpus_dir else []
    roots.append(Path(sysconfig.get_paths()["stdlib"]).resolve())
    update: dict[str, Any] = {}
    if any(s.url.startswith("file:") for s in safe.sources):
        update["sources"] = [
            s.model_copy(
                update={"url": corpus_name(s.url, roots), "provider": s.provider or "local"}
            )
            if s.url.startswith("file:")
            else s
            for s in safe.sources
        ]
    if safe.changes is not None:  # a standing research's run: the sources new and gone since
        update["changes"] = safe.changes.model_copy(
            update={
                kind: [
                    s.model_copy(update={"url": corpus_name(s.url, roots)})
                    if s.url.startswith("file:")
                    else s
                    for s in getattr(safe.changes, kind)
                ]
                for kind in ("new_sources", "gone_sources", "updated_sources")
            }
        )
    return safe.model_copy(update=update) if update else safe


def corpus_name(url: str, roots: list[Path]) -> str:
    """FILE_URL as a name inside the first of ROOTS that holds it, else its file name."""
    parts = urlsplit(url)
    path = PurePosixPath(unquote(parts.path))
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    for root in roots:
        try:
            return str(path.relative_to(PurePosixPath(root.as_posix()))) + fragment
        except ValueError:
            continue
    return (path.name or "document") + fragment
