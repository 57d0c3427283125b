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

import unicodedata
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, IntegrityError
from sqlalchemy.orm import Session, selectinload
from sqlalchemy.sql.elements import UnaryExpression

from storage import revisions
from storage.database import (
    MIGRATIONS,
    configured_url,
    database_url,
    engine_for,
    failures_classified,
    migrate,
    safe,
)
from storage.rows import StoredResearch, aware, research_row, stored_research
from storage.schema import ClarificationRow, ResearchRow
from workflows.activity_models import SaveResearchInput, SaveResearchOutput

__all__ = [
    "MIGRATIONS",
    "LibraryEntry",
    "StoredResearch",
    "database_url",
    "engine_for",
    "list_research",
    "load_research",
    "migrate",
    "rename_research",
    "safe",
    "started_before",
    "write",
]


# --- what the starter reads ---------------------------------------------------------------------


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
    #: The title its owner gave it (None: none of their own; the question is its title).
    title: str | None = None


def write(record: SaveResearchInput, url_text: str | None = None) -> SaveResearchOutput:
    """One transaction: the research row and all its children, or nothing. `url_text` defaults
    to RESEARCH_DB_URL. NUL bytes are dropped from every string first (`without_nul`)."""
    url = database_url(url_text or configured_url())
    with failures_classified(url):
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
            session.add(research_row(record))
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
    url: str,
    *,
    contains: str | None = None,
    limit: int = 20,
    owner: str | None = None,
    about: bool = False,
) -> list[LibraryEntry]:
    """Finished research, newest first; `contains` filters on the question (case-insensitive in
    every script, see `_matching`), and with `about` also on what the research was about: the
    answers to its clarification questions and its report; `owner` on who it belongs to (None:
    everyone's)."""
    db = database_url(url)
    with failures_classified(db), Session(engine_for(db)) as session:
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
                ResearchRow.id.in_(
                    _matching(session, contains, limit, newest_first, owner, about=about)
                )
            )
        else:
            query = query.limit(limit)
        return [_entry(row) for row in session.scalars(query)]


def _entry(row: ResearchRow) -> LibraryEntry:
    verification = row.verification or {}
    checked = verification.get("claims") if verification.get("enabled") else None
    # "N of M claims supported" counts the claims the verification checked (a cancelled research
    # keeps claims it never checked: "1 of 0"), and is not said when none was ("0 of 0").
    claims = checked if isinstance(checked, int) else len(row.claims)
    return LibraryEntry(
        workflow_id=row.workflow_id,
        run_id=row.run_id,
        query=row.query,
        outcome=row.outcome,
        finished_at=aware(row.finished_at),
        sources=len(row.sources),
        claims=claims,
        supported=verification.get("supported") if checked else None,
        owner=row.owner,
        title=row.title,
    )


class FollowUp(BaseModel):
    """A finished follow-up of a research, as a conversation lists it."""

    workflow_id: str
    query: str
    outcome: str
    #: Its owner's title for it, if renamed.
    title: str | None = None


def follow_ups(url: str, research_id: str, *, owner: str, limit: int = 20) -> list[FollowUp]:
    """OWNER's finished research that followed up RESEARCH_ID, oldest first (a conversation's
    later turns, in the order they were asked)."""
    db = database_url(url)
    with failures_classified(db), Session(engine_for(db)) as session:
        query = (
            select(
                ResearchRow.workflow_id, ResearchRow.query, ResearchRow.outcome, ResearchRow.title
            )
            .where(ResearchRow.follow_up_of == research_id, ResearchRow.owner == owner)
            .order_by(ResearchRow.started_at, ResearchRow.id)
            .limit(limit)
        )
        return [
            FollowUp(
                workflow_id=row.workflow_id, query=row.query, outcome=row.outcome, title=row.title
            )
            for row in session.execute(query)
        ]


def _matching(
    session: Session,
    text: str,
    limit: int,
    order: tuple[UnaryExpression[Any], ...],
    owner: str | None = None,
    about: bool = False,
) -> list[int]:
    """The ids of the newest `limit` research that `text` finds: in its question or the title its
    owner gave it, or (`about`)
    word by word in its question and the answers to its clarification questions ("lighthouse"
    finds "Tell me more about it" clarified as "lighthouse keepers"), or as a phrase in its
    report. Compared
    casefolded and NFC-normalised ("ÜBER" finds "über", "straße" finds "STRASSE", a typed "u" +
    combining diaeresis finds "ü"), in Python, the same on every database: SQLite's LIKE folds
    ASCII only, and PostgreSQL's lower() depends on the database's locale and never turns ß into
    ss. The research is read newest first, in batches, until `limit` have matched."""
    needle = _folded(text)
    words = needle.split()
    ids: list[int] = []
    answers: dict[int, list[str]] = {}
    if about:
        for research_id, answer in session.execute(
            select(ClarificationRow.research_id, ClarificationRow.answer)
        ):
            answers.setdefault(research_id, []).append(answer or "")
    found = select(
        ResearchRow.id, ResearchRow.query, ResearchRow.title, ResearchRow.report_markdown
    ).order_by(*order)
    if owner is not None:
        found = found.where(ResearchRow.owner == owner)
    rows = session.execute(found.execution_options(yield_per=500))
    with closing(rows):
        for research_id, question, title, report in rows:
            if len(ids) >= limit:
                break
            asked = _folded(" ".join([question, title or ""]))
            if needle in asked:
                ids.append(research_id)
                continue
            if not about:
                continue
            topic = _folded(" ".join([asked, *answers.get(research_id, [])]))
            if all(word in topic for word in words) or needle in _folded(report or ""):
                ids.append(research_id)
    return ids


def _folded(text: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def delete_research(url: str, research_id: str, owner: str) -> int:
    """Remove OWNER's stored research RESEARCH_ID (every run of it, with its child rows) from
    the library; how many runs went (0: none of OWNER's has that id)."""
    research_id = research_id.replace("\x00", "")
    db = database_url(url)
    with failures_classified(db), Session(engine_for(db)) as session, session.begin():
        rows = session.scalars(
            select(ResearchRow).where(
                ResearchRow.workflow_id == research_id, ResearchRow.owner == owner
            )
        ).all()
        for row in rows:
            session.delete(row)
        return len(rows)


def rename_research(
    url: str, research_id: str, owner: str, title: str | None
) -> LibraryEntry | None:
    """Give OWNER's stored research RESEARCH_ID (every run of it) a TITLE of their own (None: back
    to its question); its library entry (newest run) after that, or None when none of OWNER's
    has that id. The title is stored as given: `starter.client.titles.research_title` cleans and
    checks what a person typed."""
    research_id = research_id.replace("\x00", "")
    db = database_url(url)
    with failures_classified(db), Session(engine_for(db)) as session, session.begin():
        rows = session.scalars(
            select(ResearchRow)
            .where(ResearchRow.workflow_id == research_id, ResearchRow.owner == owner)
            .order_by(ResearchRow.finished_at.desc(), ResearchRow.id.desc())
        ).all()
        for row in rows:
            row.title = title
        return _entry(rows[0]) if rows else None


def load_research(url: str, research_id: str, version: int | None = None) -> StoredResearch | None:
    """One research by workflow id (its newest run) or by run id; None when it is not stored.
    NUL bytes in the id are ignored, as they were when the research was written. Its report at
    VERSION (None: the latest; `revisions.NoSuchVersion` when it has no such version)."""
    research_id = research_id.replace("\x00", "")
    db = database_url(url)
    with failures_classified(db), Session(engine_for(db)) as session:
        row = session.scalars(
            select(ResearchRow)
            .where((ResearchRow.workflow_id == research_id) | (ResearchRow.run_id == research_id))
            .order_by(ResearchRow.finished_at.desc(), ResearchRow.id.desc())
        ).first()
        return None if row is None else revisions.applied(row, stored_research(row), version)


class StartedResearch(BaseModel):
    """A stored research as a list of everyone's research shows it (with the running ones)."""

    workflow_id: str
    query: str
    outcome: str
    started_at: datetime
    finished_at: datetime
    title: str | None = None


def started_before(
    url: str, *, owner: str, before: datetime | None = None, limit: int = 20
) -> list[StartedResearch]:
    """OWNER's stored research that started before BEFORE, newest first, one per workflow id (a
    research stored for two runs is listed once)."""
    db = database_url(url)
    with failures_classified(db), Session(engine_for(db)) as session:
        query = (
            select(
                ResearchRow.workflow_id,
                ResearchRow.query,
                ResearchRow.outcome,
                ResearchRow.started_at,
                ResearchRow.finished_at,
                ResearchRow.title,
            )
            .where(ResearchRow.owner == owner)
            .order_by(ResearchRow.started_at.desc(), ResearchRow.id.desc())
            .limit(limit * 2)
        )
        if before is not None:
            bound = before.astimezone(UTC)
            naive = db.get_backend_name() == "sqlite"  # SQLite keeps UTC without its zone
            query = query.where(
                ResearchRow.started_at < (bound.replace(tzinfo=None) if naive else bound)
            )
        page: dict[str, StartedResearch] = {}
        for workflow_id, question, outcome, started, finished, title in session.execute(query):
            page.setdefault(
                workflow_id,
                StartedResearch(
                    workflow_id=workflow_id,
                    query=question,
                    outcome=outcome,
                    started_at=aware(started),
                    finished_at=aware(finished),
                    title=title,
                ),
            )
    return list(page.values())[:limit]


def owner_of(url: str, research_id: str) -> str | None:
    """Whose research RESEARCH_ID is in the library ('' for research from before owners), or None
    when it is not stored: what a start with a chosen id checks, so ids are never reused across
    owners. A SQLite library that does not exist yet holds nothing (and is not made)."""
    if _sqlite_file_missing(url):
        return None
    db = database_url(url)
    with failures_classified(db), Session(engine_for(db)) as session:
        owners = session.scalars(
            select(ResearchRow.owner).where(ResearchRow.workflow_id == research_id).limit(1)
        ).all()
        return None if not owners else str(owners[0] or "")


def _sqlite_file_missing(url: str) -> bool:
    try:
        parsed = make_url(url)
    except ArgumentError:
        return False  # database_url says what is wrong with it
    sqlite_file = parsed.get_backend_name() == "sqlite" and parsed.database not in (
        None,
        "",
        ":memory:",
    )
    return sqlite_file and not Path(str(parsed.database)).exists()
