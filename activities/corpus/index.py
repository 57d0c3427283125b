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
  citation names the page) and Word `.docx` (documents.py, binary.py). A file that cannot be read
  is skipped with its reason (kept in the index, logged, and listed by `starter index`), never fatal.
- **Fresh, durable and shared.** The index is a file under `index_dir`, built lazily on first use.
  Before a search or read, at most once every `refresh_interval_s` (2 s), every file's mtime and
  size are compared with the index, and what was added, changed or deleted is applied: a file
  dropped into the folder is found by the next research, with no restart. Two worker processes
  may share the index: changes are applied in short `BEGIN IMMEDIATE` transactions in WAL mode (a
  file's documents change all at once; a second writer waits, re-checks and skips what is done),
  committed every second or so, so a first build longer than a search's timeout keeps its progress.
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
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from activities.corpus.binary import DOCX_SUFFIXES, PDF_SUFFIXES, UnreadableDocument, docx_document, pdf_documents
from activities.corpus.documents import Document, Stamp, _file_document, _stamp
from activities.corpus.ranking import Ranker
from activities.corpus.snippets import MAX_QUERY_TERMS, _snippet, _Terms  # noqa: F401 - MAX_QUERY_TERMS: re-exported
from activities.corpus.stdlib import _module_documents, _stdlib_sources, _topic_documents, _topics_path
from workflows.text import content_terms, select_passages, trim
from workflows.activity_models import ReadPageOutput, SearchHit

PROVIDER = "local"
#: Bump when the schema or the way documents are extracted changes: the index file name carries
#: it, so an old index is simply left behind instead of being misread.
INDEX_VERSION = 2
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".html", ".htm"})
DOCUMENT_SUFFIXES = TEXT_SUFFIXES | PDF_SUFFIXES | DOCX_SUFFIXES
#: Files that describe a corpus rather than belong to it (the shared corpora carry a SOURCE.md
#: with provenance and licence text, which would otherwise answer every "license" question).
SKIPPED_FILES = frozenset({"source.md"})
MAX_LIMIT = 50
#: A writer may hold the index for the whole first build of the default corpus; wait for it.
BUSY_TIMEOUT_S = 300.0
#: The folder is compared with the index at most this often (a stat per file): cheap enough for
#: every search of a research, and a dropped file is found within seconds.
REFRESH_INTERVAL_S = 2.0
#: A refresh commits what it has every so often, so other processes see progress and a long
#: first build interrupted by a timeout starts again where it stopped.
COMMIT_EVERY_S = 1.0

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    error TEXT
);
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_source ON docs(source);
CREATE TABLE IF NOT EXISTS sections (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL,
    title TEXT NOT NULL,
    heading TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sections_doc ON sections(doc_id);
CREATE VIRTUAL TABLE IF NOT EXISTS sections_fts USING fts5(
    title, heading, body, content='sections', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS sections_ai AFTER INSERT ON sections BEGIN
    INSERT INTO sections_fts(rowid, title, heading, body) VALUES (new.id, new.title, new.heading, new.body);
END;
CREATE TRIGGER IF NOT EXISTS sections_ad AFTER DELETE ON sections BEGIN
    INSERT INTO sections_fts(sections_fts, rowid, title, heading, body)
    VALUES ('delete', old.id, old.title, old.heading, old.body);
END;
"""


@dataclass
class IndexChanges:
    """What one refresh did: source files added, updated and removed, and those it skipped."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: (path, why) of files changed since the last refresh that could not be read.
    skipped: list[tuple[str, str]] = field(default_factory=list)


class LocalCorpus:
    """Full-text search over one corpus; thread-safe, and safe to share between processes."""

    def __init__(self, corpus_dir: Path | None, index_dir: Path, refresh_interval_s: float = REFRESH_INTERVAL_S) -> None:
        self.corpus_dir = Path(corpus_dir).expanduser().resolve() if corpus_dir is not None else None
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
        self._lock = threading.Lock()
        self._checked_at: float | None = None

    # --- public interface -----------------------------------------------------------------------

    def search(self, query: str, limit: int = 5) -> list[SearchHit]:
        """The documents that best match `query`, best first (ties by URL, so repeatable).

        Sections are ranked (title, heading and body weighed apart), the query is widened with
        the words the best sections share (pseudo-relevance feedback), and each document is
        scored by its best sections (ranking.py says why each). The snippet comes from the
        document's best section.
        """
        terms = _Terms(content_terms(query or ""))
        limit = min(int(limit), MAX_LIMIT)
        if not terms.words or limit <= 0:
            return []
        self._refresh()
        with closing(self._connect()) as con:
            # One read transaction: a consistent snapshot even if another process updates the
            # index between the ranking and the fetching of bodies.
            con.execute("BEGIN")
            ranked = Ranker(con, terms).rank(limit)
            hits = []
            for doc in ranked:
                (body,) = con.execute("SELECT body FROM sections WHERE id = ?", (doc.best_section,)).fetchone()
                snippet = _snippet(body, terms)
                if not snippet:
                    (whole,) = con.execute("SELECT body FROM docs WHERE id = ?", (doc.doc_id,)).fetchone()
                    snippet = _snippet(whole, terms)
                hits.append(SearchHit(url=doc.url, title=doc.title, snippet=snippet, provider=PROVIDER))
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
        return ReadPageOutput(url=doc_url, title=title, text=trim(text, max(0, max_chars)))

    def refresh(self) -> IndexChanges:
        """Bring the index up to date now (what `python -m starter index` runs)."""
        return self._refresh(force=True)

    def skipped(self) -> list[tuple[str, str]]:
        """(path, why) of every file of the corpus that could not be read, by path."""
        self._refresh()
        with closing(self._connect()) as con:
            return list(con.execute("SELECT path, error FROM sources WHERE error IS NOT NULL ORDER BY path"))

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

        The cheap check (stat every source, compare with the index) runs without a write lock, and
        at most once per `refresh_interval_s`. Only when something differs is the write lock taken
        (`BEGIN IMMEDIATE`, which waits for a writer in another process), and each file's stamp
        compared again inside the transaction, so what another process did meanwhile is skipped.
        """
        changes = IndexChanges()
        with self._lock:
            now = time.monotonic()
            if not force and self._checked_at is not None and now - self._checked_at < self.refresh_interval_s:
                return changes
            with closing(self._connect()) as con:
                _prepare(con)
                current = dict(self._scan())
                stored = _stored_stamps(con)
                if stored != current:
                    self._apply(con, current, new_index=not stored, changes=changes)
            self._checked_at = time.monotonic()
        for path, why in changes.skipped:
            log.warning("research corpus: skipped %s: %s", path, why)
        return changes

    def _apply(self, con: sqlite3.Connection, current: dict[str, Stamp], new_index: bool,
               changes: IndexChanges) -> None:
        started = time.perf_counter()
        pending = deque(sorted(set(current) | set(_stored_stamps(con))))
        while pending:
            con.execute("BEGIN IMMEDIATE")
            try:
                stored = _stored_stamps(con)
                batch_started = time.perf_counter()
                while pending and time.perf_counter() - batch_started < COMMIT_EVERY_S:
                    path = pending.popleft()
                    stamp, known = current.get(path), stored.get(path)
                    if stamp == known:
                        continue
                    _delete_source(con, path)
                    if stamp is None:
                        changes.removed.append(path)
                        continue
                    documents, error = self._extract(Path(path))
                    for doc in documents:
                        _insert(con, path, doc)
                    con.execute(
                        "INSERT INTO sources(path, mtime_ns, size, error) VALUES (?, ?, ?, ?)", (path, *stamp, error)
                    )
                    (changes.updated if known is not None else changes.added).append(path)
                    if error:
                        changes.skipped.append((path, error))
                if not pending and new_index:
                    con.execute("INSERT INTO sections_fts(sections_fts) VALUES ('optimize')")
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
        if new_index and current:
            self.build_seconds = time.perf_counter() - started

    def _scan(self) -> Iterator[tuple[str, Stamp]]:
        """Every source file of the corpus with its stamp."""
        if self.corpus_dir is None:
            yield from _stdlib_sources()
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
                # A symlink may point anywhere; only files that really live in the corpus count.
                if path.is_symlink() and not path.resolve().is_relative_to(self.corpus_dir):
                    continue
                stamp = _stamp(path)
                if stamp is not None:
                    yield str(path), stamp

    def _extract(self, path: Path) -> tuple[list[Document], str | None]:
        """The documents one source file holds, or none and why: one odd file must not take the
        search of all the others down with it."""
        try:
            if self.corpus_dir is None:
                found = _topic_documents(path) if path == _topics_path() else _module_documents(path)
                return found, None
            suffix = path.suffix.lower()
            if suffix in PDF_SUFFIXES:
                return pdf_documents(path), None
            found = [docx_document(path)] if suffix in DOCX_SUFFIXES else [_file_document(path)]
            if not any(d.body.strip() for d in found):
                return [], "no text"
            return found, None
        except UnreadableDocument as err:
            return [], str(err)
        except Exception as err:  # noqa: BLE001 - whatever a file does, it costs that file only
            return [], f"{type(err).__name__}: {err}"[:300]


_instances: dict[tuple[Path | None, Path], LocalCorpus] = {}
_instances_lock = threading.Lock()


def open_corpus(corpus_dir: Path | None, index_dir: Path) -> LocalCorpus:
    """Process-wide cached instance per (corpus_dir, index_dir)."""
    key = (
        Path(corpus_dir).expanduser().resolve() if corpus_dir is not None else None,
        Path(index_dir).expanduser().resolve(),
    )
    with _instances_lock:
        if key not in _instances:
            _instances[key] = LocalCorpus(*key)
        return _instances[key]


# --- helpers: index -----------------------------------------------------------------------------


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _prepare(con: sqlite3.Connection) -> None:
    """WAL mode (readers never block the writer) and the tables, on a new or existing index.

    Switching a new file to WAL needs an exclusive lock, and SQLite answers "database is locked"
    at once, without waiting, when another process is opening the same new file: so retry.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            if con.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                con.execute("PRAGMA journal_mode = WAL")
            con.executescript(_SCHEMA)
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _stored_stamps(con: sqlite3.Connection) -> dict[str, Stamp]:
    return {path: (mtime, size) for path, mtime, size in con.execute("SELECT path, mtime_ns, size FROM sources")}


def _delete_source(con: sqlite3.Connection, path: str) -> None:
    con.execute("DELETE FROM sections WHERE doc_id IN (SELECT id FROM docs WHERE source = ?)", (path,))
    con.execute("DELETE FROM docs WHERE source = ?", (path,))
    con.execute("DELETE FROM sources WHERE path = ?", (path,))


def _insert(con: sqlite3.Connection, path: str, doc: Document) -> None:
    """A document and its sections (a URL already taken by another file keeps its first owner)."""
    cursor = con.execute(
        "INSERT OR IGNORE INTO docs(url, source, title, body) VALUES (?, ?, ?, ?)", (doc.url, path, doc.title, doc.body)
    )
    if not cursor.rowcount:
        return
    doc_id = cursor.lastrowid
    con.executemany(
        "INSERT INTO sections(doc_id, title, heading, body) VALUES (?, ?, ?, ?)",
        [(doc_id, doc.title, s.heading, s.text) for s in doc.sections()],
    )


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
