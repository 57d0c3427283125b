"""What changed since the previous run (workflows/standing.py): a deterministic comparison, as a
table of cases, and where the report's section goes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workflows.models import Claim, Source, Verdict
from workflows.standing import PreviousRun, SourceRef, compare, section, with_section

SINCE = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)


def previous(sources: list[str], claims: list[tuple[str, Verdict]]) -> PreviousRun:
    return PreviousRun(
        research_id="run-1",
        finished_at=SINCE,
        sources=[SourceRef(url=u, title=u.rsplit("/", 1)[-1]) for u in sources],
        claims=[Claim(text=t, source_ids=[1], verdict=v) for t, v in claims],
    )


def now_sources(urls: list[str]) -> list[Source]:
    return [Source(id=i, url=u, title=u.rsplit("/", 1)[-1]) for i, u in enumerate(urls, 1)]


S, P, U = Verdict.SUPPORTED, Verdict.PARTIAL, Verdict.UNSUPPORTED


@pytest.mark.parametrize(
    "before, after, expected",
    [
        # (sources, claims) before and now -> (new, gone, new claims, dropped claims, changed)
        (
            (["file:///a.md", "file:///b.md"], []),
            (["file:///b.md#part", "file:///c.md"], []),
            (["file:///c.md"], ["file:///a.md"], [], [], []),
        ),
        (
            ([], [("Ownership moves values [1].", S)]),
            ([], [("Ownership moves values [3].", S)]),
            ([], [], [], [], []),
        ),
        (
            ([], [("Borrows are checked [1].", S), ("Old claim [2].", S)]),
            ([], [("Borrows are checked [1].", U), ("A new finding [1].", S)]),
            (
                [],
                [],
                ["A new finding [1]."],
                ["Borrows are checked [1].", "Old claim [2]."],  # no longer supported: dropped
                [],
            ),
        ),
        (
            ([], [("Moves are cheap [1].", S)]),
            ([], [("Moves are cheap [2].", P)]),
            ([], [], [], [], ["Moves are cheap [2]."]),
        ),
        (
            ([], [("Was made [1].", P)]),
            ([], [("Was made [1].", P)]),
            ([], [], [], [], []),
        ),
    ],
    ids=["sources by URL", "citations ignored", "claims new and dropped", "verdict", "nothing"],
)
def test_the_comparison_is_by_url_and_claim_text(
    before: tuple[list[str], list[tuple[str, Verdict]]],
    after: tuple[list[str], list[tuple[str, Verdict]]],
    expected: tuple[list[str], ...],
) -> None:
    claims = [Claim(text=t, source_ids=[1], verdict=v) for t, v in after[1]]
    changes = compare(previous(*before), now_sources(after[0]), claims)
    new, gone, new_claims, dropped, changed = expected
    assert [r.url for r in changes.new_sources] == new
    assert [r.url for r in changes.gone_sources] == gone
    assert changes.new_claims == new_claims
    assert changes.dropped_claims == dropped
    assert [c.text for c in changes.changed_claims] == changed
    assert changes.changed is any(expected)


def test_a_removed_claim_is_no_longer_made() -> None:
    claims = [Claim(text="Old claim [1].", source_ids=[1], verdict=U, removed=True)]
    changes = compare(previous([], [("Old claim [1].", S)]), [], claims)
    assert changes.dropped_claims == ["Old claim [1]."]


def test_the_report_opens_with_what_changed_after_its_title() -> None:
    changes = compare(previous(["file:///a.md"], []), now_sources(["file:///c.md"]), [])
    report = with_section("# Title\n\n## Summary\n\nText [1].\n", changes)
    assert report.startswith("# Title\n\n## What changed since 2026-11-20 08:00 UTC\n")
    assert "**New sources** (1):" in report and "- c.md — file:///c.md" in report
    assert "**Sources no longer found** (1):" in report
    assert report.index("## What changed") < report.index("## Summary")


def test_nothing_changed_is_said() -> None:
    changes = compare(previous([], []), [], [])
    assert "Nothing changed since the previous run (run-1)" in section(changes)
