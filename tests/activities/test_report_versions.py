"""The library keeps every version of a report whose sections were revised (migration 0012,
storage/revisions.py), on SQLite and PostgreSQL: the latest is what a research reads
back as, any earlier one on request; a retried save writes a version once; a save that started
from a version that is no longer the latest is refused; deleting a research deletes its versions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from temporalio.exceptions import ApplicationError

from storage import revisions, store
from tests.activities.test_library import T0, count, db_url, postgres_url, record  # noqa: F401
from workflows.models import Claim, Verdict, VerificationSummary
from workflows.revising_messages import SaveRevisionInput


def revision(base: int, report: str, by: str) -> SaveRevisionInput:
    return SaveRevisionInput(
        research_id="research-1",
        run_id="run-1",
        owner="local",
        base_version=base,
        section=2,
        heading="How it works",
        feedback="shorter",
        report_markdown=report,
        claims=[Claim(text="Short.", source_ids=[1], verdict=Verdict.SUPPORTED)],
        verification=VerificationSummary(claims=1, supported=1, share_supported=1.0),
        section_verification=VerificationSummary(claims=1, supported=1, share_supported=1.0),
        engine="offline",
        revised_by=by,
        created_at=T0 + timedelta(hours=base),
    )


def test_every_version_reads_back_and_the_latest_is_the_research(db_url: str) -> None:  # noqa: F811
    store.write(record(), db_url)
    original = store.load_research(db_url, "research-1")
    assert original is not None and original.version == 1 and len(original.versions) == 1

    saved = revisions.write(revision(1, "# Report v2\n", "revise/research-1/run-a"), db_url)
    assert (saved.version, saved.created) == (2, True)
    again = revisions.write(revision(1, "# Report v2\n", "revise/research-1/run-a"), db_url)
    assert (again.version, again.created) == (2, False)  # a retried activity: written once

    latest = store.load_research(db_url, "research-1")
    assert latest is not None and latest.version == 2
    assert latest.result.report_markdown == "# Report v2\n"
    assert [c.text for c in latest.result.claims] == ["Short."]
    assert [(v.version, v.section, v.feedback) for v in latest.versions] == [
        (1, None, None),
        (2, 2, "shorter"),
    ]
    first = store.load_research(db_url, "research-1", 1)
    assert first is not None and first.result == original.result

    with pytest.raises(ApplicationError, match="changed while the section was being revised"):
        revisions.write(revision(1, "# Report v2 again\n", "revise/research-1/run-b"), db_url)
    with pytest.raises(revisions.NoSuchVersion, match="has no version 3: it has versions 1 to 2"):
        store.load_research(db_url, "research-1", 3)

    assert store.delete_research(db_url, "research-1", "local") == 1
    assert count(db_url, "research_revision") == 0
