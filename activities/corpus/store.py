"""The index's SQLite side: its schema, and what a refresh writes in one short transaction.

WAL mode, so readers never block the writer. A refresh reads files first (index.py) and hands
them here, to be written in one `BEGIN IMMEDIATE` transaction that re-checks each file's stamp:
what another process wrote meanwhile is left alone.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field

from activities.corpus.documents import Document, Stamp

#: A writer may hold the index for the whole first build of the default corpus; wait for it.
BUSY_TIMEOUT_S = 300.0

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
    #: (path, why) of files changed since the last refresh that could not be read; `why` is one
    #: line, the path as the file system has it (`reader.display_name` shows it safely).
    skipped: list[tuple[str, str]] = field(default_factory=list)


#: A file read for the index: (path, its documents, why it could not be read or None).
Read = tuple[str, list[Document], str | None]


def prepare(con: sqlite3.Connection) -> None:
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


def stored_stamps(con: sqlite3.Connection) -> dict[str, Stamp]:
    return {
        path: (mtime, size)
        for path, mtime, size in con.execute("SELECT path, mtime_ns, size FROM sources")
    }


def stored_stamp(con: sqlite3.Connection, path: str) -> Stamp | None:
    rows = con.execute("SELECT mtime_ns, size FROM sources WHERE path = ?", (path,)).fetchall()
    return (rows[0][0], rows[0][1]) if rows else None


def write(
    con: sqlite3.Connection,
    batch: list[Read],
    current: dict[str, Stamp],
    changes: IndexChanges,
    optimize: bool,
) -> None:
    """What was read, in one short transaction; a file whose stamp is already stored (another
    process wrote it meanwhile) is left as it is."""
    con.execute("BEGIN IMMEDIATE")
    try:
        stored = stored_stamps(con)
        for path, documents, error in batch:
            stamp, known = current.get(path), stored.get(path)
            if stamp == known:
                continue
            delete_source(con, path)
            if stamp is None:
                changes.removed.append(path)
                continue
            for doc in documents:
                insert(con, path, doc)
            con.execute(
                "INSERT INTO sources(path, mtime_ns, size, error) VALUES (?, ?, ?, ?)",
                (path, *stamp, error),
            )
            (changes.updated if known is not None else changes.added).append(path)
            if error:
                changes.skipped.append((path, error))
        if optimize:
            con.execute("INSERT INTO sections_fts(sections_fts) VALUES ('optimize')")
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


def delete_source(con: sqlite3.Connection, path: str) -> None:
    con.execute(
        "DELETE FROM sections WHERE doc_id IN (SELECT id FROM docs WHERE source = ?)", (path,)
    )
    con.execute("DELETE FROM docs WHERE source = ?", (path,))
    con.execute("DELETE FROM sources WHERE path = ?", (path,))


def insert(con: sqlite3.Connection, path: str, doc: Document) -> None:
    """A document and its sections (a URL already taken by another file keeps its first owner)."""
    cursor = con.execute(
        "INSERT OR IGNORE INTO docs(url, source, title, body) VALUES (?, ?, ?, ?)",
        (doc.url, path, doc.title, doc.body),
    )
    if not cursor.rowcount:
        return
    doc_id = cursor.lastrowid
    con.executemany(
        "INSERT INTO sections(doc_id, title, heading, body) VALUES (?, ?, ?, ?)",
        [(doc_id, doc.title, s.heading, s.text) for s in doc.sections()],
    )
