"""What changed since the previous run (workflows/standing/changes.py): a deterministic comparison, as a
table of cases, findings matched by what they rest on and say (not their words), sources by URL or
text, and where the report's section goes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workflows.models import Claim, Evidence, Source, Verdict
from workflows.standing.changes import compare, section, with_section
from workflows.standing_messages import PreviousRun, PreviousSource

SINCE = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)


def previous(sources: list[str], claims: list[tuple[str, Verdict]]) -> PreviousRun:
    return PreviousRun(
        research_id="run-1",
        finished_at=SINCE,
        sources=[
            PreviousSource(id=i, url=u, title=u.rsplit("/", 1)[-1])
            for i, u in enumerate(sources, 1)
        ],
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


# --- findings by what they rest on and say; sources by URL or text --------------------------------

RELEASE, OWNERSHIP = "file:///notes/release.md", "file:///notes/ownership.md"
RELEASE_TEXT = (
    "Rust 1.80 cut compile times by 12% on large workspaces. "
    "Incremental builds reuse more of the query cache."
)
OWNERSHIP_TEXT = (
    "Ownership moves a value into the thread that uses it, so no other thread keeps access to it."
)
BEFORE_FINDINGS = [
    ("Rust 1.80 cut compile times by 12% on large workspaces [1].", [1]),
    ("Moving a value into a thread leaves no other thread with access to it [2].", [2]),
    ("Incremental builds reuse more of the query cache [1].", [1]),
]


def first_run() -> PreviousRun:
    """The run before: two notes read, three findings on them."""
    return PreviousRun(
        research_id="run-1",
        finished_at=SINCE,
        sources=[
            PreviousSource(id=1, url=RELEASE, title="release", digest="d-release"),
            PreviousSource(id=2, url=OWNERSHIP, title="ownership", digest="d-ownership"),
        ],
        claims=[Claim(text=t, source_ids=ids, verdict=S) for t, ids in BEFORE_FINDINGS],
        evidence=[
            Evidence(source_id=1, position=0, text=RELEASE_TEXT),
            Evidence(source_id=2, position=0, text=OWNERSHIP_TEXT),
        ],
    )


def second_run(
    findings: list[tuple[str, list[int]]], release_text: str = RELEASE_TEXT
) -> tuple[list[Source], list[Claim], list[Evidence]]:
    """This run: the same notes, numbered the other way round ([1] ownership, [2] release); the
    release note's fingerprint follows its text."""
    digest = "d-release" if release_text == RELEASE_TEXT else "d-release-2"
    sources = [
        Source(id=1, url=OWNERSHIP, title="ownership", digest="d-ownership"),
        Source(id=2, url=RELEASE, title="release", digest=digest),
    ]
    claims = [Claim(text=t, source_ids=ids, verdict=S) for t, ids in findings]
    evidence = [
        Evidence(source_id=1, position=0, text=OWNERSHIP_TEXT),
        Evidence(source_id=2, position=0, text=release_text),
    ]
    return sources, claims, evidence


REWORDED = [
    ("On large workspaces, Rust 1.80 made compile times 12% shorter [2].", [2]),
    ("Ownership hands a value to the thread using it, so other threads lose access [1].", [1]),
    ("The query cache is reused more by incremental builds [2].", [2]),
]


def test_reworded_findings_over_unchanged_sources_are_nothing_changed() -> None:
    changes = compare(first_run(), *second_run(REWORDED))
    assert not changes.changed, changes
    assert changes.new_claims == [] and changes.dropped_claims == []
    assert changes.not_repeated == [] and changes.newly_picked == []
    text = section(changes)
    assert "Nothing changed since the previous run (run-1)" in text
    assert "New findings" not in text and "no longer" not in text


def test_a_source_whose_figure_changed_is_updated_and_its_finding_changed() -> None:
    now = [
        ("Rust 1.80 cut compile times by 15% on large workspaces [2].", [2]),
        *REWORDED[1:],
    ]
    changes = compare(first_run(), *second_run(now, RELEASE_TEXT.replace("12%", "15%")))
    assert changes.changed
    [updated] = changes.updated_sources
    assert updated.url == RELEASE and updated.what[0].startswith("12% → 15%: ")
    assert "by 15% on large workspaces" in updated.what[0]
    [finding] = changes.changed_findings
    assert finding.text.startswith("Rust 1.80 cut compile times by 15%")
    assert finding.before.startswith("Rust 1.80 cut compile times by 12%")
    assert changes.new_claims == [] and changes.dropped_claims == []
    assert changes.new_sources == [] and changes.gone_sources == []
    text = section(changes)
    assert "**Sources updated** (1):" in text and "12% → 15%" in text
    assert "**Findings that now say otherwise** (1):" in text
    assert "(was: Rust 1.80 cut compile times by 12% on large workspaces.)" in text


def test_a_finding_not_repeated_while_its_source_is_unchanged_is_no_change() -> None:
    changes = compare(first_run(), *second_run(REWORDED[:2]))
    assert not changes.changed
    assert changes.dropped_claims == []
    assert changes.not_repeated == ["Incremental builds reuse more of the query cache [1]."]
    text = section(changes)
    assert "Nothing changed since the previous run" in text
    assert "**Not repeated this time (their sources are unchanged)** (1):" in text
    assert "no longer made or supported" not in text


def test_a_finding_whose_source_changed_is_no_longer_made_when_not_repeated() -> None:
    release = RELEASE_TEXT.replace("Incremental builds reuse", "Incremental builds drop")
    changes = compare(first_run(), *second_run(REWORDED[:2], release))
    assert changes.changed
    assert changes.dropped_claims == ["Incremental builds reuse more of the query cache [1]."]
    assert changes.not_repeated == []


def test_an_identical_upload_under_another_name_is_no_new_source() -> None:
    before = PreviousRun(
        research_id="run-1",
        finished_at=SINCE,
        sources=[PreviousSource(id=1, url="file:///up/a1/report.pdf", title="report", digest="d")],
    )
    copy = Source(id=1, url="file:///up/b2/report (1).pdf", title="report (1)", digest="d")
    changes = compare(before, [copy], [])
    assert changes.new_sources == [] and changes.gone_sources == []
    assert not changes.changed
    original = Source(id=2, url="file:///up/a1/report.pdf", title="report", digest="d")
    both = compare(before, [copy, original], [])
    assert both.new_sources == [] and not both.changed


def test_a_finding_unsupported_now_is_no_longer_supported_not_unrepeated() -> None:
    sources, claims, evidence = second_run(REWORDED)
    claims[2] = claims[2].model_copy(update={"verdict": U})
    changes = compare(first_run(), sources, claims, evidence)
    assert changes.dropped_claims == ["Incremental builds reuse more of the query cache [1]."]
    assert changes.not_repeated == [] and changes.changed


def test_the_standing_changed_notice_is_not_sent_for_reworded_findings() -> None:
    """The notice is sent when `changes.changed` (workflows/research.py `_announce_end`): a run
    whose findings are only reworded decides no notice."""
    sources, claims, evidence = second_run(REWORDED)
    assert not compare(first_run(), sources, claims, evidence).changed
