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

import ast
import hashlib
import importlib.util
import os
import re
import sqlite3
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from workflows.text import (
    bm25_scores,
    content_terms,
    select_passages,
    split_paragraphs,
    split_sentences,
    tokenize,
    trim,
)
from workflows.models import SNIPPET_LIMIT
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
#: At most this many distinct query terms go into one MATCH (a 5000-character query would
#: otherwise become a slow 700-way OR).
MAX_QUERY_TERMS = 32
MAX_LIMIT = 50
#: A writer may hold the index for the whole first build of the default corpus; wait for it.
BUSY_TIMEOUT_S = 300.0

#: Standard-library folders that are not documentation of the library (tests, tools, vendored or
#: installed packages) or, for pydoc_data, are indexed separately as reference topics.
_STDLIB_SKIP_DIRS = frozenset(
    {
        "test", "tests", "idlelib", "lib2to3", "ensurepip", "site-packages", "dist-packages",
        "turtledemo", "__pycache__", "pydoc_data", "lib-dynload", "__phello__",
    }
)
#: A module whose docstrings add up to less than this is not worth a search result.
_MIN_MODULE_DOC_CHARS = 120

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


@dataclass(frozen=True)
class Document:
    url: str
    title: str
    body: str


#: A source file's (mtime_ns, size): what decides whether it must be read again.
Stamp = tuple[int, int]


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


def _stamp(path: Path) -> Stamp | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


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


# --- helpers: snippets --------------------------------------------------------------------------


class _Terms:
    """A query's content words, matched loosely in titles and sentences: `borrowing` matches
    `borrow` and `borrowed`, `references` matches `reference`, and a dotted name such as
    `asyncio.gather` also matches its parts. Only for ranking and snippets; FTS5 does the search."""

    def __init__(self, words: list[str]) -> None:
        #: The words as typed: what goes into the FTS5 query.
        self.words = list(dict.fromkeys(words))[:MAX_QUERY_TERMS]
        #: The words and the parts of dotted names: what titles and sentences are matched against.
        self.parts = list(dict.fromkeys(_words(" ".join(self.words))))
        self._memo: dict[str, str | None] = {}

    def match(self, token: str) -> str | None:
        """The query word `token` stands for, if any (a shared stem, a short ending apart)."""
        if token not in self._memo:
            self._memo[token] = next((p for p in self.parts if _same_stem(token, p)), None)
        return self._memo[token]

    def of(self, text: str) -> list[str]:
        """The words of `text`, each that matches a query word spelled as that word."""
        return [self.match(w) or w for w in _words(text)]

    def coverage(self, text: str) -> float:
        """The share of the query's words that `text` contains."""
        if not self.parts:
            return 0.0
        return len(set(self.parts).intersection(self.of(text))) / len(self.parts)


def _same_stem(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 4 and len(long) - len(short) <= 3 and long.startswith(short))


def _words(text: str) -> list[str]:
    """Word tokens; a dotted name also gives its parts (`asyncio.gather`: `asyncio`, `gather`)."""
    words = []
    for token in tokenize(text):
        words.append(token)
        if "." in token:
            words.extend(p for p in token.split(".") if p)
    return words


def _is_prose(sentence: str) -> bool:
    """Sentences of words, not headings, code or tables: a snippet should read like text."""
    if len(sentence) < 25 or sentence.startswith(("```", "|", ">>>", "$ ")):
        return False
    if len(sentence) < 80 and not sentence.endswith((".", "!", "?", ":", ")", "…", '"', "”")):
        return False  # a heading or a label
    wordy = sum(c.isalpha() or c.isspace() for c in sentence)
    return wordy >= 0.75 * len(sentence)


def _prose_paragraphs(body: str) -> Iterator[str]:
    """The paragraphs of `body` outside ``` code fences (a fence may span paragraphs)."""
    in_code = False
    for paragraph in split_paragraphs(body):
        segments = paragraph.split("```")
        for k, segment in enumerate(segments):
            if not in_code and segment.strip():
                yield segment.strip()
            if k < len(segments) - 1:
                in_code = not in_code


def _snippet(body: str, terms: _Terms) -> str:
    """The prose sentence of `body` that matches most query terms (BM25 breaks ties), continued
    with the sentences after it while they fit: a readable excerpt, not FTS5's marked-up one."""
    candidates: list[tuple[list[str], int]] = []
    for source in (_prose_paragraphs(body), split_paragraphs(body)):
        paragraphs = [split_sentences(p) for p in source]
        every = [(group, j) for group in paragraphs for j in range(len(group))]
        candidates = [(group, j) for group, j in every if _is_prose(group[j])] or every
        if candidates:
            break
    if not candidates:
        return ""
    words = [terms.of(group[j]) for group, j in candidates]
    scores = bm25_scores(terms.parts, words)
    best = min(
        range(len(candidates)),
        key=lambda k: (-len(set(terms.parts).intersection(words[k])), -scores[k], k),
    )
    group, j = candidates[best]
    snippet = group[j]
    for following in group[j + 1 :]:
        if len(snippet) + 1 + len(following) > SNIPPET_LIMIT:
            break
        snippet += " " + following
    return trim(snippet, SNIPPET_LIMIT)


# --- helpers: documents in a folder -------------------------------------------------------------


def _file_document(path: Path) -> Document:
    raw = path.read_text(encoding="utf-8", errors="replace")
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        title, text = _html_text(raw)
    elif suffix in (".md", ".markdown"):
        title, text = _markdown_text(raw)
    else:
        title, text = "", raw
    return Document(url=path.as_uri(), title=title or path.name, body=_normalise(text))


def _normalise(text: str) -> str:
    """Paragraphs with collapsed whitespace, one blank line apart: what read() and snippets use."""
    return "\n\n".join(split_paragraphs(text))


_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_DIRECTIVE = re.compile(r"\{\{#[^}]*\}\}")  # mdBook {{#include ...}}: the target is not here
_MD_COMMENT = re.compile(r"<!--.*?-->", re.S)
# Only real HTML tags: `Box<T>` or `Vec<String>` in Rust prose must survive.
_MD_TAG = re.compile(
    r"</?(?:a|span|div|p|br|hr|img|sup|sub|em|strong|code|pre|kbd|details|summary|table|thead|"
    r"tbody|tr|td|th|ul|ol|li|figure|figcaption|section|Listing)(?:\s[^<>]*)?/?>"
)
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])")
_MD_LINK_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+.*$", re.M)
_MD_QUOTE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+", re.M)


def _markdown_text(raw: str) -> tuple[str, str]:
    """(first heading, readable text) of a markdown file: markup that means nothing to a reader
    (mdBook directives, HTML comments and tags, link targets, quote marks) goes; code stays."""
    text = _MD_QUOTE.sub("", _MD_COMMENT.sub("", raw))
    text = _MD_DIRECTIVE.sub("", text)
    text = _MD_LINK_DEF.sub("", text)
    text = _MD_IMAGE.sub(r"\1", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_TAG.sub("", text)
    title = ""
    lines: list[str] = []
    fence: list[str] | None = None
    for line in text.splitlines():
        if _MD_FENCE.match(line):
            if fence is None:
                fence = [line.strip()]
            else:
                if any(code.strip() for code in fence[1:]):  # drop blocks left empty
                    lines.extend([*fence, line.strip()])
                fence = None
            continue
        if fence is not None:
            fence.append(line)
            continue
        heading = _MD_HEADING.match(line)
        if heading:
            title = title or heading.group(2)
            lines.extend(["", heading.group(2), ""])
        else:
            lines.append(line)
    if fence:
        lines.extend(fence)
    return title.strip(), "\n".join(lines)


class _HTMLText(HTMLParser):
    """Visible text of an HTML page, in paragraphs, plus its <title> and first <h1>."""

    SKIP = frozenset({"script", "style", "nav", "footer", "noscript", "template", "svg"})
    BLOCK = frozenset(
        {
            "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5",
            "h6", "tr", "table", "section", "article", "main", "header", "aside", "pre",
            "blockquote", "figure", "figcaption", "hr", "form", "details", "summary",
        }
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.h1 = ""
        self._skipping = 0
        self._in_title = False
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self.SKIP:
            self._skipping += 1
        elif tag == "h1" and not self.h1:
            self._in_h1 = True
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self.SKIP:
            self._skipping = max(0, self._skipping - 1)
        elif tag == "h1":
            self._in_h1 = False
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skipping:
            self.parts.append(data)
            if self._in_h1:
                self.h1 += data


def _html_text(raw: str) -> tuple[str, str]:
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    title = " ".join((parser.title or parser.h1).split())
    return title, "".join(parser.parts)


# --- helpers: the default corpus (the interpreter's own documentation) ---------------------------


@cache
def _stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"]).resolve()


@cache
def _topics_path() -> Path | None:
    """pydoc_data/topics.py, located without running it (find_spec only imports its empty package)."""
    try:
        spec = importlib.util.find_spec("pydoc_data.topics")
    except (ImportError, ValueError):
        return None
    return Path(spec.origin).resolve() if spec and spec.origin else None


def _stdlib_sources() -> Iterator[tuple[str, Stamp]]:
    """topics.py and every public standard-library module file."""
    topics = _topics_path()
    if topics is not None and (stamp := _stamp(topics)):
        yield str(topics), stamp
    root = _stdlib_dir()
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in _STDLIB_SKIP_DIRS and not d.startswith(("_", ".")) and "-" not in d
        )
        for name in sorted(filenames):
            if not name.endswith(".py") or (name.startswith("_") and name != "__init__.py"):
                continue
            path = Path(folder, name)
            if (stamp := _stamp(path)) is not None:
                yield str(path), stamp


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(_stdlib_dir()).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


_UNDERLINE = re.compile(r"^\s*([*=\-~^\"'`#+])\1{2,}\s*$", re.M)


def _topic_documents(path: Path) -> list[Document]:
    """The language reference topics of pydoc_data/topics.py, read as a literal with `ast`."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    topics: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "topics" for t in node.targets
        ):
            topics = ast.literal_eval(node.value)
    base = path.as_uri()
    # Some topics share one text ("else" and "if"): index it once, under the topic it is named for.
    by_text: dict[str, str] = {}
    for topic, text in sorted(topics.items()):
        heading = text.strip().splitlines()[0] if text.strip() else ""
        if text not in by_text or f'"{topic}"' in heading:
            by_text[text] = topic
    documents = []
    for text, topic in sorted(by_text.items(), key=lambda item: item[1]):
        lines = text.strip().splitlines()
        has_heading = len(lines) > 1 and _UNDERLINE.fullmatch(lines[1]) is not None
        heading = lines[0].strip() if has_heading else topic
        body = _UNDERLINE.sub("", text)
        documents.append(
            Document(url=f"{base}#{topic}", title=f"Python reference: {heading}", body=_normalise(body))
        )
    return documents


def _module_documents(path: Path) -> list[Document]:
    """A module's documentation from its source: docstring, then public classes and functions
    with their signatures and docstrings. Modules that say too little are left out."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    name = _module_name(path)
    exported = _dunder_all(tree)

    def public(item: str) -> bool:
        return item in exported if exported is not None else not item.startswith("_")

    module_doc = ast.get_docstring(tree) or ""
    sections: list[str] = []
    undocumented: list[str] = []
    documented_chars = len(module_doc)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and public(node.name):
            doc = ast.get_docstring(node)
            if doc:
                sections.append(f"{_kind(node)}{name}.{_signature(node)} — {doc}")
                documented_chars += len(doc)
            else:
                undocumented.append(f"{node.name}()")
        elif isinstance(node, ast.ClassDef) and public(node.name):
            doc = ast.get_docstring(node) or ""
            bases = ", ".join(ast.unparse(b) for b in node.bases)
            parts = [f"class {name}.{node.name}" + (f"({bases})" if bases else "")]
            if doc:
                parts[0] += f" — {doc}"
                documented_chars += len(doc)
            methods = []
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    not item.name.startswith("_") or item.name == "__init__"
                ):
                    method_doc = ast.get_docstring(item)
                    if method_doc:
                        signature = _signature(item, method=True)
                        parts.append(f"{_kind(item)}{node.name}.{signature} — {method_doc}")
                        documented_chars += len(method_doc)
                    elif item.name != "__init__":
                        methods.append(item.name)
            if methods:
                parts.append(f"Other methods of {node.name}: {', '.join(methods)}.")
            if doc or len(parts) > 1:
                sections.append("\n\n".join(parts))
            else:
                undocumented.append(node.name)
    if documented_chars < _MIN_MODULE_DOC_CHARS:
        return []
    first_line = module_doc.strip().splitlines()[0].strip() if module_doc.strip() else ""
    title = f"Python module `{name}`" + (f": {first_line}" if first_line else "")
    body = [module_doc, *sections]
    if undocumented:
        body.append(f"{name} also defines: {', '.join(undocumented)}.")
    return [Document(url=path.as_uri(), title=trim(title, 200), body=_normalise("\n\n".join(body)))]


def _dunder_all(tree: ast.Module) -> set[str] | None:
    """The names in a literal `__all__`, or None when the module does not declare one."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                return {str(n) for n in ast.literal_eval(node.value)}
            except (ValueError, TypeError, SyntaxError):  # computed, e.g. `base.__all__ + [...]`
                return None
    return None


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool = False) -> str:
    """`gather(*coros_or_futures, return_exceptions=False)`: parameters and defaults, no
    annotations (they make signatures long without helping a search)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults))
    if method and pairs and pairs[0][0].arg in ("self", "cls"):
        pairs = pairs[1:]
    params = [a.arg + (f"={_short(d)}" if d is not None else "") for a, d in pairs]
    if args.vararg:
        params.append(f"*{args.vararg.arg}")
    elif args.kwonlyargs:
        params.append("*")
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        params.append(a.arg + (f"={_short(d)}" if d is not None else ""))
    if args.kwarg:
        params.append(f"**{args.kwarg.arg}")
    return f"{node.name}({', '.join(params)})"


def _kind(node: ast.AST) -> str:
    return "async " if isinstance(node, ast.AsyncFunctionDef) else ""


def _short(expr: ast.expr) -> str:
    text = ast.unparse(expr)
    return text if len(text) <= 40 else "…"


