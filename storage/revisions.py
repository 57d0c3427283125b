"""The versions of a stored report: a finished research whose sections people revised
(workflows/revising/) is read back at its latest version, any earlier one on request.

Version 1 is the research row's own report; each later version is a `research_revision` row
(migration 0012) holding the whole report as it then read, its claims and their counts. Reading a
research (`store.load_research`) applies the version asked for, so `show`, `result`, the page,
the API and every export give the latest without knowing about versions, and an earlier version
reads back exactly as it was.

`write` keeps a version once however often its activity is retried (the revision's workflow and
run id are unique), and refuses one that started from a version that is no longer the latest:
two revisions at once cannot undo each other (the client also starts one at a time per research).
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from temporalio.exceptions import ApplicationError

from storage.database import (
    configured_url,
    database_url,
    engine_for,
    failures_classified,
)
from storage.rows import StoredResearch, aware
from storage.schema import ResearchRow, RevisionRow
from workflows.models import Claim, VerificationSummary
from workflows.revising_messages import (
    MAX_VERSIONS,
    ReportVersion,
    SaveRevisionInput,
    SaveRevisionOutput,
)


class NoSuchVersion(LookupError):
    """A version the stored research does not have (one line, for the person who asked)."""


def write(record: SaveRevisionInput, url_text: str | None = None) -> SaveRevisionOutput:
    """Store the new version of the report, once; refused when the report has changed since the
    revision began (another revision was stored meanwhile)."""
    url = database_url(url_text or configured_url())
    with failures_classified(url), Session(engine_for(url)) as session:
        known = session.scalar(
            select(RevisionRow.version).where(RevisionRow.revised_by == record.revised_by)
        )
        if known is not None:
            return SaveRevisionOutput(version=known, created=False)
        research = session.scalar(
            select(ResearchRow.id).where(
                ResearchRow.workflow_id == record.research_id,
                ResearchRow.run_id == record.run_id,
                ResearchRow.owner == record.owner,
            )
        )
        if research is None:
            raise ApplicationError(
                f"research {record.research_id} is no longer in the library",
                type="RevisionRefused",
                non_retryable=True,
            )
        latest = _latest(session, research)
        if latest != record.base_version:
            raise _changed(record.research_id, latest)
        if latest >= MAX_VERSIONS:
            raise ApplicationError(
                f"the report of {record.research_id} has {latest} versions, the most one report "
                "keeps",
                type="RevisionRefused",
                non_retryable=True,
            )
        session.add(_row(research, record))
        try:
            session.commit()
        except IntegrityError:
            session.rollback()
            raise _changed(record.research_id, _latest(session, research)) from None
    return SaveRevisionOutput(version=record.base_version + 1)


def _latest(session: Session, research: int) -> int:
    found = session.scalar(
        select(func.max(RevisionRow.version)).where(RevisionRow.research_id == research)
    )
    return int(found or 1)


def _changed(research_id: str, latest: int) -> ApplicationError:
    return ApplicationError(
        f"the report of {research_id} changed while the section was being revised (it is now "
        f"version {latest}): revise it again",
        type="ReportChanged",
        non_retryable=True,
    )


def _row(research: int, r: SaveRevisionInput) -> RevisionRow:
    return RevisionRow(
        research_id=research,
        version=r.base_version + 1,
        section=r.section,
        heading=r.heading,
        feedback=r.feedback.replace("\x00", ""),
        report_markdown=r.report_markdown.replace("\x00", ""),
        claims=[c.model_dump(mode="json") for c in r.claims],
        verification=r.verification.model_dump(mode="json") if r.verification else None,
        section_verification=r.section_verification.model_dump(mode="json"),
        engine=r.engine,
        revised_by=r.revised_by,
        created_at=r.created_at,
    )


def applied(row: ResearchRow, stored: StoredResearch, version: int | None) -> StoredResearch:
    """STORED (read from ROW) at VERSION (None: the latest), with its list of versions."""
    revisions = list(row.revisions)
    versions = [
        ReportVersion(version=1, created_at=stored.finished_at),
        *(
            ReportVersion(
                version=r.version,
                section=r.section,
                heading=r.heading,
                feedback=r.feedback,
                created_at=aware(r.created_at),
            )
            for r in revisions
        ),
    ]
    latest = versions[-1].version
    wanted = latest if version is None else version
    if not 1 <= wanted <= latest:
        raise NoSuchVersion(
            f"research {stored.workflow_id} has no version {version}: "
            + ("it has only version 1" if latest == 1 else f"it has versions 1 to {latest}")
        )
    update: dict[str, object] = {"version": wanted, "versions": versions}
    if wanted > 1:
        r = next(r for r in revisions if r.version == wanted)
        result = stored.result.model_copy(
            update={
                "report_markdown": r.report_markdown,
                "claims": [Claim.model_validate(c) for c in r.claims],
                "verification": VerificationSummary.model_validate(r.verification)
                if r.verification
                else stored.result.verification,
            }
        )
        update["result"] = result
    return stored.model_copy(update=update)
