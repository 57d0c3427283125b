"""The `local` search provider: a folder of documents, or the Python docs, in a SQLite FTS5 index.

Why this shape:

- **No network, no third-party code.** `sqlite3` ships with Python and its FTS5 extension gives
  BM25 ranking, Porter stemming and phrase queries; the ranking on top of it is ours
  (`ranking.py`: sections, field weights, pseudo-relevance feedback, document aggregation).
- **A real corpus on every machine.** With no `corpus_dir`, the corpus is the documentation that
  ships inside the interpreter: the language reference topics of `pydoc_data.topics` and the
  docstrings of the standard library, read from *source* with `ast`. Nothing is copied into the
  repository and no standard-library module is imported (some act on import: `antigravity` opens
  a browser, `this` prints a poem).
- **Your own documents**, at any depth: Markdown, text, HTML, PDF (one document per page, so a
  citation names the page) and Word `.docx` (documents.py, binary.py), each read as untrusted
  (reader.py: regular files inside the folder only, checked on the opened descriptor; at most
  CORPUS_MAX_FILE_BYTES; parsed in a memory- and time-limited extraction child). A file that
  cannot be read is skipped with its reason (kept in the index, logged, and listed by
  `starter index`), never fatal.
- **Fresh, durable and shared.** The index is a file under `index_dir`, built lazily on first use.
  Before a search or read, at most once every `refresh_interval_s` (2 s), every file's mtime and
  size are compared with the index, and what was added, changed or deleted is applied: a file
  dropped into the folder is found by the next research, with no restart. Two worker processes
  may share the index: changes are applied in short `BEGIN IMMEDIATE` transactions in WAL mode (a
  file's documents change all at once; a second writer waits, re-checks and skips what is done),
  committed every second or so, so a first build longer than a search's timeout keeps its progress.
  Files are read before the transaction that writes them, never inside it, and a search does not
  wait for a refresh under way in another thread (but for the first of its process).
- **Safe reading.** `read()` serves text from the index only. A URL that is not a document of this
  corpus (an LLM may well ask for `file:///etc/passwd`) gives `None`; no path is ever opened
  because a caller named it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import sys
import sysconfig
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import unquote, urlsplit

from activities.corpus.binary import DOCX_SUFFIXES, PDF_SUFFIXES
from activities.corpus.documents import Document, Stamp, stamp_of
from activities.corpus.ranking import Memo, Ranker
from activities.corpus.reader import display_name, one_line, read_documents
from activities.corpus.snippets import (  # noqa: F401 - MAX_QUERY_TERMS: re-exported
    MAX_QUERY_TERMS,
    Terms,
    query_terms,
    snippet_of,
)
from activities.corpus.stdlib import (
    module_documents,
    stdlib_sources,
    topic_documents,
    topics_path,
)
from activities.corpus.store import (
    BUSY_TIMEOUT_S,
    IndexChanges,
    Read,
    prepare,
    stored_stamp,
    stored_stamps,
    write,
)
from activities.fingerprint import content_digest
from workflows.activity_models import ReadPageOutput, SearchHit
from workflows.text import select_passages, trim

PROVIDER = "local"
#: Bump when the schema or the way documents are extracted changes: the index file name carries
#: it, so an old index is simply left behind instead of being misread.
INDEX_VERSION = 4  # 4: titles without Markdown marks
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".html", ".htm"})
DOCUMENT_SUFFIXES = TEXT_SUFFIXES | PDF_SUFFIXES | DOCX_SUFFIXES
#: Files that describe a corpus rather than belong to it (the shared corpora carry a SOURCE.md
#: with provenance and licence text, which would otherwise answer every "license" question).
SKIPPED_FILES = frozenset({"source.md"})
MAX_LIMIT = 50
#: The folder is compared with the index at most this often (a stat per file): cheap enough for
#: every search of a research, and a dropped file is found within seconds.
REFRESH_INTERVAL_S = 2.0
#: A refresh commits what it has every so often, so other processes see progress and a long
#: first build interrupted by a timeout starts again where it stopped.
COMMIT_EVERY_S = 1.0
#: ... or once this much text was read, whichever comes first: what waits to be written stays small.
COMMIT_EVERY_CHARS = 20_000_000

log = logging.getLogger(__name__)


class LocalCorpus:
    """Full-text search over one corpus; thread-safe, and safe to share between processes."""

    def __init__(
        self,
        corpus_dir: Path | None,
        index_dir: Path,
        refresh_interval_s: float = REFRESH_INTERVAL_S,
        max_file_bytes: int | None = None,
    ) -> None:
        self.corpus_dir = (
            Path(corpus_dir).expanduser().resolve() if corpus_dir is not None else None
        )
        self.index_dir = Path(index_dir).expanduser().resolve()
        if self.corpus_dir is None:
            version = ".".join(map(str, sys.version_info[:3]))
            key = f"{sysconfig.get_paths()['stdlib']}|{version}|{INDEX_VERSION}"
            name = f"python-{version}-{_digest(key)}.sqlite"
        else:
            slug = re.sub(r"[^A-Za-z0-9_-]+", "-", self.corpus_dir.name).strip("-")[:40] or "root"
            name = f"corpus-{slug}-{_digest(f'{self.corpus_dir}|{INDEX_VERSION}')}.sqlite"
        self.index_path = self.index_dir / name
        self.refresh_interval_s = refresh_interval_s
        #: Seconds the last brand-new index took to build (None until this instance built one).
        self.build_seconds: float | None = None
        #: Held by the one thread of this process that brings the index up to date.
        self._refreshing = threading.Lock()
        self._checked_at: float | None = None
        #: What ranking reuses while the indexed files stay as they were (ranking.Memo).
        self._memo = Memo()
        self._seen_stamps: dict[str, Stamp] | None = None
        self._max_file_bytes = max_file_bytes
        #: The most text the index keeps of this corpus (a user's uploads: UPLOAD_QUOTA_TEXT_CHARS);
        #: a file past it is skipped with the reason. None: no limit.
        self.max_text_chars: int | None = None
        self._text_left: int | None = None

    # --- public interface -----------------------------------------------------------------------

    def search(self, query: str, limit: int = 5) -> list[SearchHit]:
        """The documents that best match `query`, best first (ties by URL, so repeatable).

        Sections are ranked (title, heading and body weighed apart), the query is widened with
        the words the best sections share (pseudo-relevance feedback), and each document is
        scored by its best sections (ranking.py says why each). The snippet comes from the
        document's best section.
        """
        terms = Terms(query_terms(query or ""))
        limit = min(int(limit), MAX_LIMIT)
        if not terms.words or limit <= 0:
            return []
        self._refresh()
        with closing(self._connect()) as con:
            # One read transaction: a consistent snapshot even if another process updates the
            # index between the ranking and the fetching of bodies.
            con.execute("BEGIN")
            ranked = Ranker(con, terms, self._memo).rank(limit)
            hits = []
            for doc in ranked:
                (body,) = con.execute(
                    "SELECT body FROM sections WHERE id = ?", (doc.best_section,)
                ).fetchone()
                snippet = snippet_of(body, terms)
                if not snippet:
                    (whole,) = con.execute(
                        "SELECT body FROM docs WHERE id = ?", (doc.doc_id,)
                    ).fetchone()
                    snippet = snippet_of(whole, terms)
                hits.append(
                    SearchHit(url=doc.url, title=doc.title, snippet=snippet, provider=PROVIDER)
                )
            con.execute("COMMIT")
        return hits

    def read(self, url: str, focus: str, max_chars: int) -> ReadPageOutput | None:
        """The document's title and its passages most relevant to `focus`, at most max_chars.

        None if `url` is not a document of this corpus: the text comes from the index, so a URL
        naming any other file (or a crafted `..` path) finds nothing and nothing is opened.
        """
        self._refresh()
        with closing(self._connect()) as con:
            row = None
            for candidate in _url_variants(url):
                row = con.execute(
                    "SELECT url, title, body FROM docs WHERE url = ?", (candidate,)
                ).fetchone()
                if row:
                    break
        if row is None:
            return None
        doc_url, title, body = row
        text = select_passages(body, focus or title, max_chars) if max_chars > 0 else ""
        return ReadPageOutput(
            url=doc_url,
            title=title,
            text=trim(text, max(0, max_chars)),
            digest=content_digest(body),
        )

    def refresh(self) -> IndexChanges:
        """Bring the index up to date now (what `python -m starter index` runs)."""
        return self._refresh(force=True)

    def skipped(self) -> list[tuple[str, str]]:
        """(path, why) of every file of the corpus that could not be read, by path (show the path
        with `reader.display_name`: a file name may hold a newline)."""
        self._refresh()
        with closing(self._connect()) as con:
            return list(
                con.execute("SELECT path, error FROM sources WHERE error IS NOT NULL ORDER BY path")
            )

    @property
    def max_file_bytes(self) -> int:
        """The largest file read (CORPUS_MAX_FILE_BYTES unless given); larger ones are skipped."""
        if self._max_file_bytes is None:
            from settings import settings  # here: the default corpus needs no settings

            self._max_file_bytes = settings().corpus.max_file_bytes
        return self._max_file_bytes

    @property
    def description(self) -> str:
        """What the corpus is, for the CLI and reports: "Python 3.11 documentation (421 documents)"."""
        self._refresh()
        with closing(self._connect()) as con:
            (count,) = con.execute("SELECT count(*) FROM docs").fetchone()
        if self.corpus_dir is None:
            major, minor = sys.version_info[:2]
            return f"Python {major}.{minor} documentation ({count} documents)"
        return f"{self.corpus_dir} ({count} documents)"

    # --- the index --------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        """A fresh connection per call: cheap, and never shared between threads."""
        self.index_dir.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.index_path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        return con

    def _refresh(self, force: bool = False) -> IndexChanges:
        """Bring the index up to date with the files: add new and changed ones, drop deleted ones.

        At most once per `refresh_interval_s`, every source is stat'ed and compared with the index.
        What differs is read first, with no lock of the index and no transaction held (a folder's
        files are parsed in an extraction child, reader.py), then written in a short `BEGIN
        IMMEDIATE` transaction about every second, each file's stamp compared again inside it, so
        what another process did meanwhile is skipped. One thread of a process refreshes at a time;
        a search that finds a refresh under way searches what is indexed, without waiting, unless
        nothing may be indexed yet (the first refresh of this process) or it is `refresh()`.
        """
        changes = IndexChanges()
        if not self._due(force) or not self._refreshing.acquire(
            blocking=force or self._checked_at is None
        ):
            return changes
        try:
            if self._due(force):  # not done by the thread this one waited for
                self._update(changes)
                self._checked_at = time.monotonic()
        finally:
            self._refreshing.release()
        for path, why in changes.skipped:
            log.warning("research corpus: skipped %s: %s", display_name(path), why)
        return changes

    def _due(self, force: bool) -> bool:
        checked = self._checked_at
        return force or checked is None or time.monotonic() - checked >= self.refresh_interval_s

    def _update(self, changes: IndexChanges) -> None:
        if self.corpus_dir is not None:
            self.max_file_bytes  # noqa: B018 - a bad setting fails the refresh, not every file
        with closing(self._connect()) as con:
            prepare(con)
            current = dict(self._scan())
            stored = stored_stamps(con)
            if stored != self._seen_stamps:  # this process's index or another's changed it
                self._memo.clear()
            self._seen_stamps = stored
            if stored == current:
                return
            self._seen_stamps = None  # written below: start over at the next check
            started, new_index = time.perf_counter(), not stored
            pending = deque(
                sorted(p for p in set(current) | set(stored) if current.get(p) != stored.get(p))
            )
            self._text_left = self._room_for_text(con, set(pending))
            while pending:
                batch = self._read_batch(con, pending, current)
                write(con, batch, current, changes, optimize=new_index and not pending)
            self._memo.clear()
        if new_index and current:
            self.build_seconds = time.perf_counter() - started

    def _read_batch(
        self, con: sqlite3.Connection, pending: deque[str], current: dict[str, Stamp]
    ) -> list[Read]:
        """The next files, read for about COMMIT_EVERY_S, outside any transaction; a file another
        process has indexed meanwhile is not read again."""
        batch: list[Read] = []
        started, chars = time.perf_counter(), 0
        while (
            pending
            and time.perf_counter() - started < COMMIT_EVERY_S
            and chars < COMMIT_EVERY_CHARS
        ):
            path = pending.popleft()
            stamp = current.get(path)
            if stamp is None:
                batch.append((path, [], None))  # deleted
            elif stored_stamp(con, path) != stamp:
                documents, error = self._within_text_limit(*self._extract(Path(path)))
                chars += sum(len(d.body) for d in documents)
                batch.append((path, documents, error))
        return batch

    def _room_for_text(self, con: sqlite3.Connection, changing: set[str]) -> int | None:
        """How much more text MAX_TEXT_CHARS lets the index keep, besides the files that stay."""
        if self.max_text_chars is None:
            return None
        rows = con.execute("SELECT source, SUM(LENGTH(body)) FROM docs GROUP BY source")
        kept = sum(size or 0 for source, size in rows if source not in changing)
        return self.max_text_chars - kept

    def _within_text_limit(
        self, documents: list[Document], error: str | None
    ) -> tuple[list[Document], str | None]:
        """A file's documents, or none when their text would pass MAX_TEXT_CHARS (and why)."""
        if self._text_left is None or not documents:
            return documents, error
        size = sum(len(d.body) for d in documents)
        if size > self._text_left:
            return [], (
                f"over the text your documents may hold ({self.max_text_chars:,} characters): "
                "delete some, then upload this one again"
            )
        self._text_left -= size
        return documents, error

    def _scan(self) -> Iterator[tuple[str, Stamp]]:
        """Every source file of the corpus with its stamp."""
        if self.corpus_dir is None:
            yield from stdlib_sources()
            return
        if not self.corpus_dir.is_dir():
            raise FileNotFoundError(f"research corpus directory {self.corpus_dir} does not exist")
        for folder, dirnames, filenames in os.walk(self.corpus_dir):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                path = Path(folder, name)
                if (
                    name.startswith((".", "~$"))  # hidden files, Office's lock files
                    or name.lower() in SKIPPED_FILES
                    or path.suffix.lower() not in DOCUMENT_SUFFIXES
                ):
                    continue
                # Whatever it is (a symlink, a FIFO), reader.py decides on what it opens.
                stamp = stamp_of(path)
                if stamp is not None:
                    yield str(path), stamp

    def _extract(self, path: Path) -> tuple[list[Document], str | None]:
        """The documents one source file holds, or none and why: one odd file must not take the
        search of all the others down with it."""
        try:
            if self.corpus_dir is None:
                found = topic_documents(path) if path == topics_path() else module_documents(path)
                return found, None
            found = read_documents(self.corpus_dir, path, self.max_file_bytes)
            if not any(d.body.strip() for d in found):
                return [], "no text"
            return found, None
        except ValueError as err:  # UnreadableDocument, or the child's verdict on the file
            return [], one_line(str(err))[:300]
        except Exception as err:  # noqa: BLE001 - whatever a file does, it costs that file only
            return [], one_line(f"{type(err).__name__}: {err}")[:300]


_instances: dict[tuple[Path | None, Path], LocalCorpus] = {}
_instances_lock = threading.Lock()


def open_corpus(
    corpus_dir: Path | None, index_dir: Path, max_text_chars: int | None = None
) -> LocalCorpus:
    """Process-wide cached instance per (corpus_dir, index_dir); MAX_TEXT_CHARS, when given, is
    the most text it keeps (`LocalCorpus.max_text_chars`)."""
    key = (
        Path(corpus_dir).expanduser().resolve() if corpus_dir is not None else None,
        Path(index_dir).expanduser().resolve(),
    )
    with _instances_lock:
        if key not in _instances:
            _instances[key] = LocalCorpus(*key)
        if max_text_chars is not None:
            _instances[key].max_text_chars = max_text_chars
        return _instances[key]


# --- helpers: index -----------------------------------------------------------------------------


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _url_variants(url: str) -> list[str]:
    """The URL as given, and as Path.as_uri() would spell it (an LLM may decode `%20`)."""
    url = url.strip()
    variants = [url]
    try:
        parts = urlsplit(url)
        if parts.scheme == "file" and parts.path:
            fragment = f"#{parts.fragment}" if parts.fragment else ""
            variants.append(Path(unquote(parts.path)).as_uri() + fragment)
    except ValueError:
        pass
    return variants
