"""The library's database: one engine per database per process, its schema migrated once (one
process at a time), SQLite set up for several processes, and database failures classified as
Temporal should see them (`failures_classified`). store.py reads and writes through it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, DataError, DBAPIError, IntegrityError, SQLAlchemyError
from temporalio.exceptions import ApplicationError

MIGRATIONS = Path(__file__).parent / "migrations"

ENGINES: dict[str, Engine] = {}
_lock = threading.Lock()
#: How long a SQLite writer waits for another process's write to finish (the save activity's
#: start-to-close timeout is 60 s; a write takes milliseconds).
SQLITE_BUSY_TIMEOUT_S = 30.0
#: PostgreSQL advisory lock key held while the schema is migrated (any constant of our own).
MIGRATION_LOCK_KEY = 0x6465657072  # "deepr"


def configured_url() -> str:
    from settings import settings

    return settings().library.db_url


def database_url(url: str) -> URL:
    """The URL as SQLAlchemy needs it: PostgreSQL through psycopg 3, a SQLite file's folder made."""
    try:
        parsed = make_url(url)
    except ArgumentError as err:
        raise ApplicationError(
            f"RESEARCH_DB_URL is not a database URL: {one_line(err)}",
            type="LibraryConfigError",
            non_retryable=True,
        ) from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    return parsed


def engine_for(url: URL) -> Engine:
    """One engine (one connection pool) per database per process, its schema migrated once."""
    key = url.render_as_string(hide_password=False)
    with _lock:
        engine = ENGINES.get(key)
        if engine is None:
            sqlite = url.get_backend_name() == "sqlite"
            try:
                engine = create_engine(
                    url,
                    pool_pre_ping=True,
                    connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S} if sqlite else {},
                )
            except (ArgumentError, ImportError) as err:
                raise ApplicationError(
                    f"cannot use the research library at {safe(url)}: {one_line(err)}",
                    type="LibraryConfigError",
                    non_retryable=True,
                ) from None
            if sqlite:
                event.listen(engine, "connect", _sqlite_for_several_processes)
            migrate(engine)
            ENGINES[key] = engine
        return engine


def _sqlite_for_several_processes(connection: Any, record: Any) -> None:
    """WAL (readers never wait for the writer, and a commit is one append), a busy timeout (a
    writer waits for another process's write instead of failing at once), and NORMAL sync, which
    WAL makes safe against corruption: a power cut may lose the last commits, never the file.

    Switching a new file to WAL needs an exclusive lock, and SQLite refuses it at once, without
    waiting, while another process opens the same new file: so that is retried."""
    cursor = connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
        while True:
            try:
                cursor.execute("PRAGMA journal_mode = WAL")
                break
            except Exception as err:  # sqlite3.OperationalError, without importing the driver here
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        cursor.execute("PRAGMA synchronous = NORMAL")
    finally:
        cursor.close()


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest Alembic revision (creates it in an empty database).

    One process at a time: workers that start together on a new library would otherwise each
    create the tables and all but one fail. The first takes the lock (SQLite: the write lock,
    `BEGIN IMMEDIATE`; PostgreSQL: an advisory lock until commit), the others wait for it and
    then find the schema current."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        if engine.dialect.name == "sqlite":
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        elif engine.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def safe(url: URL) -> str:
    return url.render_as_string(hide_password=True)


class failures_classified:  # noqa: N801 - used as a `with` statement, like a function
    """Database errors as Temporal should see them: unreachable is worth retrying; a wrong URL, or
    data the database refuses (a value too long, a constraint broken), is not. Messages are one
    line, name the database without its password and never carry it."""

    def __init__(self, url: URL) -> None:
        self._url = url

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> Literal[False]:  # never swallows: an error leaves as it came, or classified
        if err is None or isinstance(err, ApplicationError):
            return False
        message = one_line(err)
        if self._url.password:
            message = message.replace(str(self._url.password), "***")
        if isinstance(err, (ArgumentError, ImportError)):
            raise ApplicationError(
                f"cannot use the research library at {safe(self._url)}: {message}",
                type="LibraryConfigError",
                non_retryable=True,
            ) from None
        if refused_data(err):
            raise ApplicationError(
                f"the research library at {safe(self._url)} refused the data: {message}",
                type="LibraryDataError",
                non_retryable=True,
            ) from None
        if isinstance(err, (DBAPIError, SQLAlchemyError, OSError)):
            raise ApplicationError(
                f"the research library at {safe(self._url)} is unavailable: {message}",
                type="LibraryUnavailable",
            ) from None
        return False


def refused_data(err: BaseException) -> bool:
    """A DB-API DataError or IntegrityError, wrapped by SQLAlchemy or raw (sqlite3 and psycopg name
    them alike). The duplicate key of a retried write never gets here: `write` handles it."""
    if isinstance(err, (DataError, IntegrityError)):
        return True
    return any(cls.__name__ in ("DataError", "IntegrityError") for cls in type(err).__mro__)


def one_line(err: BaseException) -> str:
    text = str(getattr(err, "orig", None) or err).strip()
    return (text.splitlines() or [type(err).__name__])[0][:300]
