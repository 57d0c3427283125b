"""The research library: every finished research, kept where a user can find it again.

Temporal forgets a closed workflow after its retention period; the library does not. At the end
of a research one activity (`save_research`, activities/library.py) writes all of it (query,
clarifications, plan, reflections, sources, evidence, claims, report, stats) in one transaction,
keyed by (workflow id, run id): a retried activity, or a worker that died between the commit and
reporting it, finds the row and writes nothing twice.

Why SQLAlchemy 2 with Alembic rather than hand-written SQL: the same schema must work on SQLite
(the default, a file under `.data/`) and PostgreSQL, and it will change; SQLAlchemy hides the
dialect differences (JSON, timestamps with time zones, upserts we do not need), Alembic versions
the schema so a later release can migrate a library users already have. The tables are in
`schema.py`; this module writes, lists and loads research, and classifies database failures.

Several worker processes share one library (`docker compose up --scale worker=3`, or a few
`python worker.py` beside `make dev`): on SQLite the file is in WAL mode (readers never wait for
the writer) with a busy timeout (a writer waits its turn instead of failing with "database is
locked"), and the schema is migrated by one process at a time (`migrate`); PostgreSQL takes an
advisory lock for the migration. A research is written once whichever worker writes it, and however
often its activity is retried: (workflow id, run id) is unique, and `write` checks it.
"""

from __future__ import annotations

import threading
import time
import unicodedata
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy import create_engine, event, select
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, DataError, DBAPIError, IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, selectinload
from sqlalchemy.sql.elements import UnaryExpression
from temporalio.exceptions import ApplicationError

from activities.storage.schema import (
    ClaimRow,
    ClarificationRow,
    EvidenceRow,
    ReflectionRow,
    ResearchRow,
    SourceRow,
)
from workflows.activity_models import SaveResearchInput, SaveResearchOutput
from workflows.models import (
    Budget,
    Claim,
    Clarification,
    Critique,
    Evidence,
    LoopBack,
    Plan,
    Refinement,
    Reflection,
    ResearchResult,
    Review,
    Source,
    Stats,
    VerificationSummary,
)

MIGRATIONS = Path(__file__).parent / "migrations"


# --- what the starter reads ---------------------------------------------------------------------


class StoredResearch(BaseModel):
    workflow_id: str
    run_id: str
    started_at: datetime
    finished_at: datetime
    result: ResearchResult


class LibraryEntry(BaseModel):
    workflow_id: str
    run_id: str
    query: str
    outcome: str
    finished_at: datetime
    sources: int
    claims: int
    #: None when the research was not verified.
    supported: int | None
    owner: str = "local"


def write(record: SaveResearchInput, url_text: str | None = None) -> SaveResearchOutput:
    """One transaction: the research row and all its children, or nothing. `url_text` defaults
    to RESEARCH_DB_URL. NUL bytes are dropped from every string first (`without_nul`)."""
    url = database_url(url_text or _configured_url())
    with _failures_classified(url):
        record = without_nul(record)
        engine = engine_for(url)
        with Session(engine) as session:
            exists = session.scalar(
                select(ResearchRow.id).where(
                    ResearchRow.workflow_id == record.workflow_id,
                    ResearchRow.run_id == record.run_id,
                )
            )
            if exists is not None:
                return SaveResearchOutput(created=False)
            session.add(_row(record))
            try:
                session.commit()
            except IntegrityError:
                session.rollback()
                if (
                    session.scalar(
                        select(ResearchRow.id).where(
                            ResearchRow.workflow_id == record.workflow_id,
                            ResearchRow.run_id == record.run_id,
                        )
                    )
                    is None
                ):
                    raise  # not the duplicate: the data broke a constraint (classified as permanent)
                return SaveResearchOutput(
                    created=False
                )  # a concurrent attempt won the race: same research
    return SaveResearchOutput(created=True)


def without_nul(record: SaveResearchInput) -> SaveResearchInput:
    """The record with NUL bytes removed from every string in it. PostgreSQL refuses them in text
    (and SQLite would keep them): a page, an answer or a question that carries one must not cost
    the research its place in the library."""
    return SaveResearchInput.model_validate(_strip_nul(record.model_dump(mode="json")))


def _strip_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_strip_nul(key): _strip_nul(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_strip_nul(item) for item in value]
    return value


def list_research(
    url: str, *, contains: str | None = None, limit: int = 20, owner: str | None = None
) -> list[LibraryEntry]:
    """Finished research, newest first; `contains` filters on the question (case-insensitive in
    every script, see `_matching`), `owner` on who it belongs to (None: everyone's)."""
    db = database_url(url)
    with _failures_classified(db), Session(engine_for(db)) as session:
        newest_first = (ResearchRow.finished_at.desc(), ResearchRow.id.desc())
        query = (
            select(ResearchRow)
            .options(
                selectinload(ResearchRow.sources), selectinload(ResearchRow.claims)
            )  # counted below
            .order_by(*newest_first)
        )
        if owner is not None:
            query = query.where(ResearchRow.owner == owner)
        if contains:
            query = query.where(
                ResearchRow.id.in_(_matching(session, contains, limit, newest_first, owner))
            )
        else:
            query = query.limit(limit)
        return [
            LibraryEntry(
                workflow_id=row.workflow_id,
                run_id=row.run_id,
                query=row.query,
                outcome=row.outcome,
                finished_at=_aware(row.finished_at),
                sources=len(row.sources),
                claims=len(row.claims),
                supported=(row.verification or {}).get("supported")
                if (row.verification or {}).get("enabled")
                else None,
                owner=row.owner,
            )
            for row in session.scalars(query)
        ]


def _matching(
    session: Session,
    text: str,
    limit: int,
    order: tuple[UnaryExpression[Any], ...],
    owner: str | None = None,
) -> list[int]:
    """The ids of the newest `limit` research whose question contains `text`, compared casefolded
    and NFC-normalised ("ÜBER" finds "über", "straße" finds "STRASSE", a typed "u" + combining
    diaeresis finds "ü"). Compared in Python, the same on every database: SQLite's LIKE folds ASCII
    only, and PostgreSQL's lower() depends on the database's locale and never turns ß into ss.
    The questions are read newest first, in batches, until `limit` have matched."""
    needle = _folded(text)
    ids: list[int] = []
    questions = select(ResearchRow.id, ResearchRow.query).order_by(*order)
    if owner is not None:
        questions = questions.where(ResearchRow.owner == owner)
    rows = session.execute(questions.execution_options(yield_per=500))
    with closing(rows):
        for research_id, question in rows:
            if len(ids) >= limit:
                break
            if needle in _folded(question):
                ids.append(research_id)
    return ids


def _folded(text: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def load_research(url: str, research_id: str) -> StoredResearch | None:
    """One research by workflow id (its newest run) or by run id; None when it is not stored.
    NUL bytes in the id are ignored, as they were when the research was written."""
    research_id = research_id.replace("\x00", "")
    db = database_url(url)
    with _failures_classified(db), Session(engine_for(db)) as session:
        row = session.scalars(
            select(ResearchRow)
            .where((ResearchRow.workflow_id == research_id) | (ResearchRow.run_id == research_id))
            .order_by(ResearchRow.finished_at.desc(), ResearchRow.id.desc())
        ).first()
        return None if row is None else _stored(row)


# --- the database -------------------------------------------------------------------------------

_engines: dict[str, Engine] = {}
_lock = threading.Lock()
#: How long a SQLite writer waits for another process's write to finish (the save activity's
#: start-to-close timeout is 60 s; a write takes milliseconds).
SQLITE_BUSY_TIMEOUT_S = 30.0
#: PostgreSQL advisory lock key held while the schema is migrated (any constant of our own).
MIGRATION_LOCK_KEY = 0x6465657072  # "deepr"


def _configured_url() -> str:
    from config import settings

    return settings().research_db_url


def database_url(url: str) -> URL:
    """The URL as SQLAlchemy needs it: PostgreSQL through psycopg 3, a SQLite file's folder made."""
    try:
        parsed = make_url(url)
    except ArgumentError as err:
        raise ApplicationError(
            f"RESEARCH_DB_URL is not a database URL: {_one_line(err)}",
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
        engine = _engines.get(key)
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
                    f"cannot use the research library at {safe(url)}: {_one_line(err)}",
                    type="LibraryConfigError",
                    non_retryable=True,
                ) from None
            if sqlite:
                event.listen(engine, "connect", _sqlite_for_several_processes)
            migrate(engine)
            _engines[key] = engine
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


class _failures_classified:
    """Database errors as Temporal should see them: unreachable is worth retrying; a wrong URL, or
    data the database refuses (a value too long, a constraint broken), is not. Messages are one
    line, name the database without its password and never carry it."""

    def __init__(self, url: URL) -> None:
        self._url = url

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: Any
    ) -> bool:
        if err is None or isinstance(err, ApplicationError):
            return False
        message = _one_line(err)
        if self._url.password:
            message = message.replace(str(self._url.password), "***")
        if isinstance(err, (ArgumentError, ImportError)):
            raise ApplicationError(
                f"cannot use the research library at {safe(self._url)}: {message}",
                type="LibraryConfigError",
                non_retryable=True,
            ) from None
        if _refused_data(err):
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


def _refused_data(err: BaseException) -> bool:
    """A DB-API DataError or IntegrityError, wrapped by SQLAlchemy or raw (sqlite3 and psycopg name
    them alike). The duplicate key of a retried write never gets here: `write` handles it."""
    if isinstance(err, (DataError, IntegrityError)):
        return True
    return any(cls.__name__ in ("DataError", "IntegrityError") for cls in type(err).__mro__)


def _one_line(err: BaseException) -> str:
    text = str(getattr(err, "orig", None) or err).strip()
    return (text.splitlines() or [type(err).__name__])[0][:300]


# --- rows <-> research --------------------------------------------------------------------------


def _row(record: SaveResearchInput) -> ResearchRow:
    r = record.result
    return ResearchRow(
        workflow_id=record.workflow_id,
        run_id=record.run_id,
        query=r.query,
        outcome=r.outcome.value,
        mode=r.mode.value,
        depth=r.depth.value,
        engine=r.engine,
        follow_up_of=r.follow_up_of,
        started_at=record.started_at,
        finished_at=record.finished_at,
        report_markdown=r.report_markdown,
        plan=r.plan.model_dump(mode="json") if r.plan else None,
        plan_iterations=r.plan_iterations,
        stage_history=[s.value for s in r.stage_history],
        loop_backs=[lb.model_dump(mode="json") for lb in r.loop_backs],
        stats=r.stats.model_dump(mode="json"),
        notes=list(r.notes),
        verification=r.verification.model_dump(mode="json") if r.verification else None,
        critique=r.critique.model_dump(mode="json") if r.critique else None,
        reviews=[v.model_dump(mode="json") for v in r.reviews],
        refinements=[f.model_dump(mode="json") for f in r.refinements],
        budget=r.budget.model_dump(mode="json") if r.budget else None,
        language=r.language,
        owner=r.owner,
        sources=[
            SourceRow(position=i, source_id=s.id, url=s.url, title=s.title, provider=s.provider)
            for i, s in enumerate(r.sources)
        ],
        claims=[
            ClaimRow(
                position=i,
                text=c.text,
                source_ids=c.source_ids,
                verdict=c.verdict.value,
                reason=c.reason,
                checked_by=c.checked_by.value,
                original=c.original,
                removed=c.removed,
            )
            for i, c in enumerate(r.claims)
        ],
        evidence=[
            EvidenceRow(position=i, source_id=e.source_id, passage_position=e.position, text=e.text)
            for i, e in enumerate(r.evidence)
        ],
        clarifications=[
            ClarificationRow(position=i, question=c.question, answer=c.answer)
            for i, c in enumerate(r.clarifications)
        ],
        reflections=[
            ReflectionRow(
                position=i,
                decision=f.decision.value,
                reasoning=f.reasoning,
                suggested_changes=f.suggested_changes,
                steps=f.steps or None,
            )
            for i, f in enumerate(r.reflections)
        ],
    )


def _stored(row: ResearchRow) -> StoredResearch:
    result = ResearchResult(
        query=row.query,
        outcome=row.outcome,
        report_markdown=row.report_markdown,
        engine=row.engine,
        sources=[
            Source(id=s.source_id, url=s.url, title=s.title, provider=s.provider)
            for s in row.sources
        ],
        claims=[
            Claim(
                text=c.text,
                source_ids=c.source_ids,
                verdict=c.verdict,
                reason=c.reason,
                checked_by=c.checked_by,
                original=c.original,
                removed=c.removed,
            )
            for c in row.claims
        ],
        clarifications=[
            Clarification(question=c.question, answer=c.answer) for c in row.clarifications
        ],
        plan=Plan.model_validate(row.plan) if row.plan else None,
        plan_iterations=row.plan_iterations,
        reflections=[
            Reflection(
                decision=f.decision,
                reasoning=f.reasoning,
                suggested_changes=f.suggested_changes,
                steps=f.steps or [],
            )
            for f in row.reflections
        ],
        stage_history=row.stage_history,
        stats=Stats.model_validate(row.stats),
        depth=row.depth,
        mode=row.mode,
        loop_backs=[LoopBack.model_validate(lb) for lb in row.loop_backs],
        evidence=[
            Evidence(source_id=e.source_id, position=e.passage_position, text=e.text)
            for e in row.evidence
        ],
        verification=VerificationSummary.model_validate(row.verification)
        if row.verification
        else None,
        critique=Critique.model_validate(row.critique) if row.critique else None,
        follow_up_of=row.follow_up_of,
        notes=row.notes,
        reviews=[Review.model_validate(v) for v in row.reviews or []],
        refinements=[Refinement.model_validate(f) for f in row.refinements or []],
        budget=Budget.model_validate(row.budget) if row.budget else None,
        language=row.language or "en",
        owner=row.owner or "local",
    )
    return StoredResearch(
        workflow_id=row.workflow_id,
        run_id=row.run_id,
        started_at=_aware(row.started_at),
        finished_at=_aware(row.finished_at),
        result=result,
    )


def _aware(moment: datetime) -> datetime:
    """SQLite hands timestamps back without their zone; they were written in UTC."""

    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
