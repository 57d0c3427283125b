"""Rows <-> research: a finished research as the library's rows (`research_row`), and back
(`stored_research`). The tables are in schema.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from storage.schema import (
    ClaimRow,
    ClarificationRow,
    EvidenceRow,
    ReflectionRow,
    ResearchRow,
    SourceRow,
)
from workflows.activity_models import SaveResearchInput
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
    ReflectionDecision,
    ResearchResult,
    Review,
    Source,
    Stats,
    VerificationSummary,
)
from workflows.revising_messages import ReportVersion
from workflows.standing_messages import Changes


class StoredResearch(BaseModel):
    workflow_id: str
    run_id: str
    started_at: datetime
    finished_at: datetime
    result: ResearchResult
    #: The title a person gave it in the library (None: none of their own; its question is shown).
    title: str | None = None
    #: The version of its report `result` holds (1: as the research wrote it; later ones each
    #: revised one section, storage/revisions.py), and every version there is.
    version: int = 1
    versions: list[ReportVersion] = Field(default_factory=list)


def research_row(record: SaveResearchInput) -> ResearchRow:
    """The research row with its child rows (sources, claims, evidence, clarifications, reflections)."""
    r = record.result
    return ResearchRow(**_columns(record), **_children(r))


def _columns(record: SaveResearchInput) -> dict[str, Any]:
    r = record.result
    return dict(
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
        searched=r.searched.value,
        owner=r.owner,
        standing_id=r.standing_id,
        changes=r.changes.model_dump(mode="json") if r.changes else None,
    )


def _children(r: ResearchResult) -> dict[str, Any]:
    return dict(
        sources=[
            SourceRow(
                position=i,
                source_id=s.id,
                url=s.url,
                title=s.title,
                provider=s.provider,
                digest=s.digest or None,
                paper=_paper_of(s),
            )
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


def stored_research(row: ResearchRow) -> StoredResearch:
    """The research as it was written, from its row and child rows."""
    result = ResearchResult(**_fields(row), **_found(row))
    return StoredResearch(
        workflow_id=row.workflow_id,
        run_id=row.run_id,
        started_at=aware(row.started_at),
        finished_at=aware(row.finished_at),
        result=result,
        title=row.title,
    )


#: What a source row keeps of a paper in its JSON column (the Source's fields of "A paper as a
#: source"; a web page or a document has none of them set).
PAPER_FIELDS = ("doi", "arxiv_id", "authors", "year", "venue", "read", "retracted", "kind")


def _paper_of(source: Source) -> dict[str, Any] | None:
    kept = {name: getattr(source, name) for name in PAPER_FIELDS if getattr(source, name)}
    return kept or None


def _found(row: ResearchRow) -> dict[str, Any]:
    """What the research found, from the child rows."""
    return dict(
        sources=[
            Source(
                id=s.source_id,
                url=s.url,
                title=s.title,
                provider=s.provider,
                digest=s.digest or "",
                **(s.paper or {}),
            )
            for s in row.sources
        ],
        # a claim row's columns are the claim's fields, by the same names
        claims=[Claim.model_validate(c, from_attributes=True) for c in row.claims],
        clarifications=[
            Clarification(question=c.question, answer=c.answer) for c in row.clarifications
        ],
        reflections=[
            Reflection(
                decision=ReflectionDecision(f.decision),
                reasoning=f.reasoning,
                suggested_changes=f.suggested_changes,
                steps=f.steps or [],
            )
            for f in row.reflections
        ],
        evidence=[
            Evidence(source_id=e.source_id, position=e.passage_position, text=e.text)
            for e in row.evidence
        ],
    )


def _fields(row: ResearchRow) -> dict[str, Any]:
    """The research row's own columns."""
    return dict(
        query=row.query,
        outcome=row.outcome,
        report_markdown=row.report_markdown,
        engine=row.engine,
        plan=Plan.model_validate(row.plan) if row.plan else None,
        plan_iterations=row.plan_iterations,
        stage_history=row.stage_history,
        stats=Stats.model_validate(row.stats),
        depth=row.depth,
        mode=row.mode,
        loop_backs=[LoopBack.model_validate(lb) for lb in row.loop_backs],
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
        searched=row.searched or "configured",
        owner=row.owner or "local",
        standing_id=row.standing_id,
        changes=Changes.model_validate(row.changes) if row.changes else None,
    )


def aware(moment: datetime) -> datetime:
    """SQLite hands timestamps back without their zone; they were written in UTC."""

    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
