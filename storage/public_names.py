"""The one rule for how a local source is named wherever a person or a receiver sees it: its path
inside the corpus (`guides/setup.md`, with a `#page=3` kept), an upload by its file name as
uploaded, a file of the interpreter's library by its path inside it, anything else by its file
name; never the server's absolute path (`file:///srv/app/.data/uploads/alice-1f2e.../3a9c.../notes.md`).

The research keeps the real `file://` URL (reading a page needs it), so the rule is applied on the
way out: to every string of a result, an event or a notification (`public_data` walks them all:
sources, the report's Markdown, evidence, notes, what changed), in the API, the event stream, the
downloads, the CLI, the MCP server, the pages, webhooks and email alike.
"""

from __future__ import annotations

import json
import re
import sysconfig
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar, overload
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

#: A file URL as reports and events spell it (`Path.as_uri()` quotes spaces, brackets and
#: backslashes: a backslash ends it, so in JSON a URL that ends a line keeps its `\n` after it).
FILE_URL = re.compile(r"file://[^\s<>()\[\]\"'`\\]+")


class PublicNames:
    """The folders local sources are named inside of: the corpus, the uploads (each upload named
    by its own file name), the interpreter's library."""

    def __init__(self, corpus_dir: Path | None = None, data_dir: Path | None = None) -> None:
        self.roots = [Path(corpus_dir).expanduser().resolve()] if corpus_dir else []
        self.roots.append(Path(sysconfig.get_paths()["stdlib"]).resolve())
        self.uploads = Path(data_dir).expanduser().resolve() / "uploads" if data_dir else None
        folders = [*self.roots, *([self.uploads] if self.uploads else [])]
        # Bare paths in free text (an error, a note): the folder (and an upload's owner folder and
        # id) go, the name inside stays.
        alternatives = "|".join(re.escape(f.as_posix().rstrip("/") + "/") for f in folders)
        self._bare = re.compile(f"(?:{alternatives})(?:[^/\\s]+-[0-9a-f]{{12}}/[0-9a-f]{{12}}/)?")

    @classmethod
    def of(cls, cfg: Any) -> PublicNames:
        """From the settings (RESEARCH_CORPUS_DIR, RESEARCH_DATA_DIR)."""
        return cls(cfg.corpus.folder, cfg.library.data_dir)

    @classmethod
    def of_settings(cls) -> PublicNames:
        """From this process's settings (where no settings object is at hand)."""
        from settings import settings

        return cls.of(settings())

    def name(self, url: str) -> str:
        """A `file:` URL as a person sees it; anything else as it is."""
        if not url.startswith("file:"):
            return url
        parts = urlsplit(url)
        path = PurePosixPath(unquote(parts.path))
        fragment = f"#{parts.fragment}" if parts.fragment else ""
        if self.uploads is not None and _inside(path, self.uploads):
            return (path.name or "document") + fragment  # <owner folder>/<id>/<name>: the name
        for root in self.roots:
            if _inside(path, root):
                return str(path.relative_to(PurePosixPath(root.as_posix()))) + fragment
        return (path.name or "document") + fragment

    def text(self, text: str) -> str:
        """TEXT with every file URL named, and the server's folders gone from bare paths."""
        if "file:" in text:
            text = FILE_URL.sub(lambda m: self.name(m.group(0)), text)
        return self._bare.sub("", text) if "/" in text else text

    @overload
    def data(self, value: str) -> str: ...
    @overload
    def data(self, value: dict[str, Any]) -> dict[str, Any]: ...
    @overload
    def data(self, value: list[Any] | tuple[Any, ...]) -> list[Any]: ...
    def data(self, value: object) -> object:
        """Every string inside VALUE (dicts, lists, strings) named by the rule."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value

    def dumped(self, models: list[M]) -> list[dict[str, Any]]:
        """MODELS as JSON objects, every string named by the rule (an event list, as sent)."""
        return [self.data(m.model_dump(mode="json")) for m in models]

    def model(self, model: M) -> M:
        """MODEL (a result, an event, what changed) with every string named by the rule: on its
        JSON, so a large report costs one scan (and nothing more when no path is in it)."""
        raw = model.model_dump_json()
        named = self.json_text(raw)
        return model if named == raw else type(model).model_validate_json(named)

    def json_text(self, raw: str) -> str:
        """RAW JSON with every file URL named (the name escaped for JSON) and bare folders gone."""
        if "file:" in raw:
            raw = FILE_URL.sub(lambda m: json.dumps(self.name(m.group(0)))[1:-1], raw)
        return self._bare.sub("", raw) if "/" in raw else raw


def _inside(path: PurePosixPath, folder: Path) -> bool:
    try:
        path.relative_to(PurePosixPath(folder.as_posix()))
    except ValueError:
        return False
    return True
