"""The research library's tables, one schema for SQLite and PostgreSQL (SQLAlchemy 2 rows).

Sources, claims, evidence, clarifications and reflections are rows of their own, so the library
can be asked "which research cited this URL" or "how many claims were unsupported"; the plan,
stats and scores are JSON columns, read whole. A change here needs an Alembic revision in
`migrations/versions/`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class ResearchRow(Base):
    __tablename__ = "research"
    __table_args__ = (UniqueConstraint("workflow_id", "run_id", name="uq_research_run"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    workflow_id: Mapped[str] = mapped_column(String(255), index=True)
    run_id: Mapped[str] = mapped_column(String(64))
    query: Mapped[str] = mapped_column(Text)
    outcome: Mapped[str] = mapped_column(String(32))
    mode: Mapped[str] = mapped_column(String(16))
    depth: Mapped[str] = mapped_column(String(16))
    engine: Mapped[str] = mapped_column(String(255))
    follow_up_of: Mapped[str | None] = mapped_column(String(255))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    report_markdown: Mapped[str] = mapped_column(Text)
    plan: Mapped[Any] = mapped_column(JSON, nullable=True)
    plan_iterations: Mapped[int] = mapped_column(Integer)
    stage_history: Mapped[Any] = mapped_column(JSON)
    loop_backs: Mapped[Any] = mapped_column(JSON)
    stats: Mapped[Any] = mapped_column(JSON)
    verification: Mapped[Any] = mapped_column(JSON, nullable=True)
    critique: Mapped[Any] = mapped_column(JSON, nullable=True)
    notes: Mapped[Any] = mapped_column(JSON)
    # Revision 0002: null in rows written before it.
    reviews: Mapped[Any] = mapped_column(JSON, nullable=True)
    refinements: Mapped[Any] = mapped_column(JSON, nullable=True)
    budget: Mapped[Any] = mapped_column(JSON, nullable=True)
    language: Mapped[str | None] = mapped_column(String(16), nullable=True)
    #: The request's `sources` (None: written before it was kept; read as configured).
    searched: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # Revision 0004: rows written before it belong to `local`.
    owner: Mapped[str] = mapped_column(String(200), index=True, server_default="local")
    # Revision 0005: a run of a standing research, and what changed since its previous run.
    standing_id: Mapped[str | None] = mapped_column(String(200), index=True, nullable=True)
    changes: Mapped[Any] = mapped_column(JSON, nullable=True)
    # Revision 0006: the title a person gave the research (null: none, its question is shown).
    title: Mapped[str | None] = mapped_column(String(200), nullable=True)

    sources: Mapped[list[SourceRow]] = relationship(
        order_by="SourceRow.position", cascade="all, delete-orphan"
    )
    claims: Mapped[list[ClaimRow]] = relationship(
        order_by="ClaimRow.position", cascade="all, delete-orphan"
    )
    evidence: Mapped[list[EvidenceRow]] = relationship(
        order_by="EvidenceRow.position", cascade="all, delete-orphan"
    )
    clarifications: Mapped[list[ClarificationRow]] = relationship(
        order_by="ClarificationRow.position", cascade="all, delete-orphan"
    )
    reflections: Mapped[list[ReflectionRow]] = relationship(
        order_by="ReflectionRow.position", cascade="all, delete-orphan"
    )
    # Revision 0012: the report's later versions, each with one section revised.
    revisions: Mapped[list[RevisionRow]] = relationship(
        order_by="RevisionRow.version", cascade="all, delete-orphan"
    )


class _Child:
    """Rows that belong to one research, in their order."""

    research_id: Mapped[int] = mapped_column(
        ForeignKey("research.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)


class SourceRow(_Child, Base):
    __tablename__ = "research_source"
    source_id: Mapped[int] = mapped_column(Integer)
    url: Mapped[str] = mapped_column(Text, index=True)
    title: Mapped[str] = mapped_column(Text)
    provider: Mapped[str] = mapped_column(String(64))
    #: Revision 0007: the fingerprint of its text as read (null before it, and when not read).
    digest: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: Revision 0011: a paper's metadata (`PAPER_FIELDS` of the Source; null for anything else).
    paper: Mapped[Any] = mapped_column(JSON, nullable=True)


class ClaimRow(_Child, Base):
    __tablename__ = "research_claim"
    text: Mapped[str] = mapped_column(Text)
    source_ids: Mapped[Any] = mapped_column(JSON)
    verdict: Mapped[str] = mapped_column(String(16), index=True)
    reason: Mapped[str] = mapped_column(Text)
    checked_by: Mapped[str] = mapped_column(String(16))
    original: Mapped[str | None] = mapped_column(Text)
    removed: Mapped[bool] = mapped_column()


class EvidenceRow(_Child, Base):
    __tablename__ = "research_evidence"
    source_id: Mapped[int] = mapped_column(Integer)
    passage_position: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)


class ClarificationRow(_Child, Base):
    __tablename__ = "research_clarification"
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str | None] = mapped_column(Text)


class ReflectionRow(_Child, Base):
    __tablename__ = "research_reflection"
    decision: Mapped[str] = mapped_column(String(16))
    reasoning: Mapped[str] = mapped_column(Text)
    suggested_changes: Mapped[Any] = mapped_column(JSON)
    #: Revision 0003: the steps judged together (null before it, and for one step).
    steps: Mapped[Any] = mapped_column(JSON, nullable=True)


class RevisionRow(Base):
    """A later version of a research's report (revision 0012): one section rewritten with a
    person's feedback (workflows/revising/). Version 1 is the research row's own report; each row
    is the whole report of its version, so any version reads back as it was."""

    __tablename__ = "research_revision"
    __table_args__ = (UniqueConstraint("research_id", "version", name="uq_revision_version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    research_id: Mapped[int] = mapped_column(
        ForeignKey("research.id", ondelete="CASCADE"), index=True
    )
    version: Mapped[int] = mapped_column(Integer)
    section: Mapped[int] = mapped_column(Integer)
    heading: Mapped[str] = mapped_column(Text)
    feedback: Mapped[str] = mapped_column(Text)
    report_markdown: Mapped[str] = mapped_column(Text)
    #: Every claim of this version, the whole report's counts over them, and the section's own.
    claims: Mapped[Any] = mapped_column(JSON)
    verification: Mapped[Any] = mapped_column(JSON, nullable=True)
    section_verification: Mapped[Any] = mapped_column(JSON)
    engine: Mapped[str] = mapped_column(String(255))
    #: The revision's workflow and run id: a retried save finds its version and writes nothing.
    revised_by: Mapped[str] = mapped_column(String(600), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class QuotaLockRow(Base):
    """A lease on one user's quota (revision 0010): whoever inserted the row checks and creates
    alone, on every replica, until it deletes the row or `expires_at` passes
    (starter/client/quota_locks.py)."""

    __tablename__ = "quota_locks"
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    holder: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[int] = mapped_column(Integer)


class StandingCreatedRow(Base):
    """A standing research just created (revision 0010): counted against its owner's quota until
    Temporal's list of schedules, which lags, shows it."""

    __tablename__ = "standing_created"
    standing_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str] = mapped_column(String(200), index=True)
    created_at: Mapped[int] = mapped_column(Integer)
