"""The `local` search provider: a folder of documents, or the Python docs, in a SQLite FTS5 index.

Why this shape:

- **No network, no third-party code.** `sqlite3` ships with Python and its FTS5 extension gives
  BM25 ranking, Porter stemming and phrase queries, which is all a research step needs to find
  the right few documents.
- **A real corpus on every machine.** With no `corpus_dir`, the corpus is the documentation that
  ships inside the interpreter: the language reference topics of `pydoc_data.topics` and the
  docstrings of the standard library, read from *source* with `ast`. Nothing is copied into the
  repository and no standard-library module is imported (some act on import: `antigravity` opens
  a browser, `this` prints a poem).
- **Durable and shared.** The index is a file under `index_dir`, built lazily on first use and
  brought up to date (by file mtime and size) before each search or read. Two worker processes
  may share it: each change is one `BEGIN IMMEDIATE` transaction in WAL mode, so a reader never
  sees a half-built index and a second writer waits, re-checks and finds nothing left to do.
- **Safe reading.** `read()` serves text from the index only. A URL that is not a document of this
  corpus (an LLM may well ask for `file:///etc/passwd`) gives `None`; no path is ever opened
  because a caller named it.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import unquote, urlsplit

from activities.corpus.documents import Document, Stamp, _file_document, _stamp
from activities.corpus.snippets import MAX_QUERY_TERMS, _snippet, _Terms  # noqa: F401 - MAX_QUERY_TERMS: re-exported
from activities.corpus.stdlib import _module_documents, _stdlib_sources, _topic_documents, _topics_path
from workflows.text import content_terms, select_passages, trim
from workflows.activity_models import ReadPageOutput, SearchHit

PROVIDER = "local"
#: Bump when the schema or the way documents are extracted changes: the index file name carries
#: it, so an old index is simply left behind instead of being misread.
INDEX_VERSION = 1
DOCUMENT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".html", ".htm"})
#: Files that describe a corpus rather than belong to it (the shared corpora carry a SOURCE.md
#: with provenance and licence text, which would otherwise answer every "license" question).
SKIPPED_FILES = frozenset({"source.md"})
#: Title matches count this many times more than body matches in the BM25 ranking.
TITLE_WEIGHT = 5.0
MAX_LIMIT = 50
#: A writer may hold the index for the whole first build of the default corpus; wait for it.
BUSY_TIMEOUT_S = 300.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_source ON docs(source);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(
    title, body, content='docs', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS docs_ai AFTER INSERT ON docs BEGIN
    INSERT INTO docs_fts(rowid, title, body) VALUES (new.id, new.title, new.body);
END;
CREATE TRIGGER IF NOT EXISTS docs_ad AFTER DELETE ON docs BEGIN
    INSERT INTO docs_fts(docs_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
END;
"""

class LocalCorpus:
    """Full-text search over one corpus; thread-safe, and safe to share between processes."""

    def __init__(self, corpus_dir: Path | None, index_dir: Path) -> None:
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
        #: Seconds the last brand-new index took to build (None until this instance built one).
        self.build_seconds: float | None = None
        self._lock = threading.Lock()

    # --- public interface -----------------------------------------------------------------------

    def search(self, query: str, limit: int = 5) -> list[SearchHit]:
        """The documents that best match `query`, best first (ties by URL, so repeatable).

        FTS5's BM25 picks the candidates; a title that names the query's words then lifts its
        document. (FTS5 weighs the title column higher too, but BM25 gives a word found in most
        documents almost no weight, so in a book where "references" is everywhere the chapter
        called "References and Borrowing" would not otherwise stand out.)
        """
        terms = _Terms(content_terms(query or ""))
        limit = min(int(limit), MAX_LIMIT)
        if not terms.words or limit <= 0:
            return []
        # Every term becomes an FTS5 string (a phrase of its own tokens), so nothing the user
        # typed can be read as FTS syntax: AND, NEAR(, *, -, : and quotes are all just text.
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms.words)
        self._refresh()
        with closing(self._connect()) as con:
            # One read transaction: a consistent snapshot even if another process updates the
            # index between the ranking and the fetching of bodies.
            con.execute("BEGIN")
            candidates = con.execute(
                "SELECT d.id, d.url, d.title, -bm25(docs_fts, ?, 1.0) FROM docs_fts "
                "JOIN docs d ON d.id = docs_fts.rowid WHERE docs_fts MATCH ? "
                "ORDER BY bm25(docs_fts, ?, 1.0), d.url LIMIT ?",
                (TITLE_WEIGHT, match, TITLE_WEIGHT, max(4 * limit, 40)),
            ).fetchall()
            ranked = sorted(
                candidates, key=lambda c: (-c[3] * (1 + terms.coverage(c[2])), c[1])
            )[:limit]
            hits = []
            for doc_id, url, title, _ in ranked:
                (body,) = con.execute("SELECT body FROM docs WHERE id = ?", (doc_id,)).fetchone()
                snippet = _snippet(body, terms)
                hits.append(SearchHit(url=url, title=title, snippet=snippet, provider=PROVIDER))
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

    def _refresh(self) -> None:
        """Bring the index up to date with the files: add new and changed ones, drop deleted ones.

        The cheap check (stat every source, compare with the index) runs without a write lock.
        Only when something differs is the write lock taken (`BEGIN IMMEDIATE`, which waits for a
        writer in another process), the comparison repeated inside the transaction, and the
        difference applied and committed at once.
        """
        with self._lock, closing(self._connect()) as con:
            _prepare(con)
            current = dict(self._scan())
            if _stored_stamps(con) == current:
                return
            started = time.perf_counter()
            con.execute("BEGIN IMMEDIATE")
            try:
                stored = _stored_stamps(con)
                new_index = not stored
                for path in stored.keys() - current.keys():
                    con.execute("DELETE FROM docs WHERE source = ?", (path,))
                    con.execute("DELETE FROM sources WHERE path = ?", (path,))
                for path, stamp in sorted(current.items()):
                    if stored.get(path) == stamp:
                        continue
                    con.execute("DELETE FROM docs WHERE source = ?", (path,))
                    for doc in self._extract(Path(path)):
                        con.execute(
                            "INSERT OR IGNORE INTO docs(url, source, title, body) VALUES (?, ?, ?, ?)",
                            (doc.url, path, doc.title, doc.body),
                        )
                    con.execute(
                        "INSERT OR REPLACE INTO sources(path, mtime_ns, size) VALUES (?, ?, ?)",
                        (path, *stamp),
                    )
                if new_index:
                    con.execute("INSERT INTO docs_fts(docs_fts) VALUES ('optimize')")
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
                    name.startswith(".")
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

    def _extract(self, path: Path) -> list[Document]:
        """The documents one source file holds. A file that cannot be read or parsed holds none:
        one odd file must not take the search of all the others down with it."""
        try:
            if self.corpus_dir is None:
                return _topic_documents(path) if path == _topics_path() else _module_documents(path)
            return [_file_document(path)]
        except Exception:
            return []


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
    return {path: (mtime, size) for path, mtime, size in con.execute("SELECT * FROM sources")}


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
