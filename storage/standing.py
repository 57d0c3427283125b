"""The library's answers about standing research: a run's previous run (what the comparison
needs: sources with their fingerprints, claims, and the evidence paragraphs the claims rest on)
and which runs found changes. Read-only; the rows are written by `store.write` with every
research."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from storage.database import database_url, engine_for, failures_classified
from storage.rows import aware
from storage.schema import ResearchRow
from workflows.kit.source_match import url_key
from workflows.models import Claim, Evidence, Verdict
from workflows.standing_messages import PreviousRun, PreviousSource

#: The previous run's evidence goes into the new run's history: at most this many characters of
#: it, the paragraphs of cited sources first (a medium research keeps some 20 of 600 at most).
MAX_EVIDENCE_CHARS = 24_000


def previous_run(url: str, standing_id: str, research_id: str) -> PreviousRun | None:
    """The newest completed run of STANDING_ID other than RESEARCH_ID, or None (a first run)."""
    db = database_url(url)
    with failures_classified(db), Session(engine_for(db)) as session:
        row = session.scalars(
            select(ResearchRow)
            .options(
                selectinload(ResearchRow.sources),
                selectinload(ResearchRow.claims),
                selectinload(ResearchRow.evidence),
            )
            .where(
                ResearchRow.standing_id == standing_id,
                ResearchRow.workflow_id != research_id,
                ResearchRow.outcome == "completed",
            )
            .order_by(ResearchRow.finished_at.desc(), ResearchRow.id.desc())
        ).first()
        if row is None:
            return None
        claims = [
            Claim(
                text=c.text, source_ids=c.source_ids, verdict=Verdict(c.verdict), removed=c.removed
            )
            for c in row.claims
        ]
        return PreviousRun(
            research_id=row.workflow_id,
            finished_at=aware(row.finished_at),
            sources=[
                PreviousSource(
                    url=url_key(s.url), title=s.title, id=s.source_id, digest=s.digest or ""
                )
                for s in row.sources
            ],
            claims=claims,
            evidence=_bounded_evidence(row, {i for c in claims for i in c.source_ids}),
        )


def _bounded_evidence(row: ResearchRow, cited: set[int]) -> list[Evidence]:
    """The run's evidence paragraphs of cited sources, in their order, within MAX_EVIDENCE_CHARS."""
    kept, used = [], 0
    for e in row.evidence:
        if e.source_id in cited and used + len(e.text) <= MAX_EVIDENCE_CHARS:
            kept.append(Evidence(source_id=e.source_id, position=e.passage_position, text=e.text))
            used += len(e.text)
    return kept


def changed_runs(url: str, standing_id: str) -> dict[str, bool]:
    """Each stored run of STANDING_ID: whether it found changes (False for a first run)."""
    db = database_url(url)
    with failures_classified(db), Session(engine_for(db)) as session:
        rows = session.execute(
            select(ResearchRow.workflow_id, ResearchRow.changes).where(
                ResearchRow.standing_id == standing_id
            )
        ).all()
    return {wid: _changed(changes) for wid, changes in rows}


def _changed(changes: dict[str, Any] | None) -> bool:  # `Changes` as JSON
    if not changes:
        return False
    keys = (
        "new_sources",
        "gone_sources",
        "updated_sources",
        "new_claims",
        "dropped_claims",
        "changed_claims",
        "changed_findings",
    )
    return any(changes.get(k) for k in keys)
