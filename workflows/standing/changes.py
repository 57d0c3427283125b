"""What changed since the last run of a standing research: the comparison, pure and deterministic.

A standing research (a question researched again on a schedule, `starter/client/standing.py`) runs as
ordinary research whose request names its `standing_id`. When such a run has written its report,
the previous run of the same standing research is read from the library (the `previous_run`
activity: its sources with their fingerprints, its claims and the evidence they rest on) and
compared here, with no model, into the shapes of workflows/standing_messages.py. Sources are the
same by URL or by text (workflows/kit/source_match.py: new, gone, updated with what changed in
them); findings are the same by what they rest on and what they say, not by their words
(workflows/kit/finding_match.py: new, no longer supported, saying another figure, verdict moved). A finding not repeated while its sources did not change is listed
apart and changes nothing. The report then opens with "What changed since DATE", and the result
carries the comparison as data (`ResearchResult.changes`).

Pure: no I/O, safe in the workflow sandbox.
"""

from __future__ import annotations

from workflows.kit.finding_match import Finding, figures_replaced, findings, pair, plain
from workflows.kit.source_match import match_sources, url_key, what_changed
from workflows.record import Claim, Evidence, Source
from workflows.standing_messages import (
    ChangedClaim,
    ChangedFinding,
    Changes,
    PreviousRun,
    SourceRef,
    UpdatedSource,
)

#: At most this many of each list are carried in a result and an event: a run whose corpus was
#: swapped whole is summed up, not copied out.
MAX_LISTED = 50


def refs(sources: list[Source]) -> list[SourceRef]:
    seen: dict[str, SourceRef] = {}
    for source in sources:
        seen.setdefault(url_key(source.url), SourceRef(url=url_key(source.url), title=source.title))
    return list(seen.values())


def compare(
    previous: PreviousRun,
    sources: list[Source],
    claims: list[Claim],
    evidence: list[Evidence] | None = None,
) -> Changes:
    """This run (its sources, final claims and evidence) against the previous run."""
    before_sources = [
        Source(id=s.id, url=s.url, title=s.title, digest=s.digest) for s in previous.sources
    ]
    match = match_sources(before_sources, sources)
    pool = evidence or []
    before = [f for f in findings(previous.claims, match.before_key, previous.evidence) if f.made]
    pairing = pair(before, findings(claims, match.now_key, pool))
    partner = {id(b): n for b, n in pairing.pairs}
    changes = Changes(
        since_research_id=previous.research_id,
        since=previous.finished_at,
        new_sources=refs(match.new),
        gone_sources=refs(match.gone),
        updated_sources=[
            UpdatedSource(
                url=key,
                title=next(s.title for s in sources if s.id == now_id),
                what=what_changed(
                    [e for e in previous.evidence if e.source_id == before_id],
                    [e for e in pool if e.source_id == now_id],
                ),
            )
            for key, (before_id, now_id) in match.updated.items()
        ],
    )
    for finding in before:
        _sort_before(changes, finding, partner.get(id(finding)), match.unchanged)
    for finding in (n for n in pairing.only_now if n.made):
        unchanged = finding.sources and finding.sources <= match.unchanged
        (changes.newly_picked if unchanged else changes.new_claims).append(finding.claim.text)
    return _bounded(changes)


def _sort_before(
    changes: Changes, before: Finding, now: Finding | None, unchanged: set[str]
) -> None:
    """Where a finding of the run before goes, given this run's finding paired with it (if any)."""
    text = before.claim.text
    if now is None:
        resting = before.sources and before.sources <= unchanged
        (changes.not_repeated if resting else changes.dropped_claims).append(text)
    elif not now.made:
        changes.dropped_claims.append(text)
    elif figures_replaced(before.figures, now.figures):
        changes.changed_findings.append(ChangedFinding(text=now.claim.text, before=text))
    elif before.claim.verdict is not now.claim.verdict:
        changes.changed_claims.append(
            ChangedClaim(text=now.claim.text, before=before.claim.verdict, after=now.claim.verdict)
        )


def _bounded(changes: Changes) -> Changes:
    """At most MAX_LISTED of each list."""
    lists = {
        name: value[:MAX_LISTED]
        for name in Changes.model_fields
        if isinstance(value := getattr(changes, name), list)
    }
    return changes.model_copy(update=lists)


def section(changes: Changes) -> str:
    """The report's opening section: "What changed since DATE", or that nothing did; findings the
    model merely chose differently are listed after either."""
    since = changes.since.strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"## What changed since {since}", ""]
    if not changes.changed:
        lines += [
            f"Nothing changed since the previous run ({changes.since_research_id}): the same "
            "sources with the same text, and the same findings with the same verdicts.",
            "",
        ]
    else:
        lines += [f"Compared with the previous run ({changes.since_research_id}):", ""]
    for title, items in _groups(changes):
        if items:
            lines += [f"**{title}** ({len(items)}):", "", *(f"- {i}" for i in items), ""]
    return "\n".join(lines)


def _groups(changes: Changes) -> list[tuple[str, list[str]]]:
    return [
        ("New sources", [_source_line(r) for r in changes.new_sources]),
        ("Sources no longer found", [_source_line(r) for r in changes.gone_sources]),
        (
            "Sources updated",
            [f"{_source_line(r)}: {'; '.join(r.what)}" for r in changes.updated_sources],
        ),
        ("New findings", [plain(t) for t in changes.new_claims]),
        ("Findings no longer made or supported", [plain(t) for t in changes.dropped_claims]),
        (
            "Findings that now say otherwise",
            [f"{plain(c.text)} (was: {plain(c.before)})" for c in changes.changed_findings],
        ),
        (
            "Findings whose verdict changed",
            [
                f"{plain(c.text)} ({c.before.value} → {c.after.value})"
                for c in changes.changed_claims
            ],
        ),
        (
            "Not repeated this time (their sources are unchanged)",
            [plain(t) for t in changes.not_repeated],
        ),
        (
            "Found this time in sources that did not change",
            [plain(t) for t in changes.newly_picked],
        ),
    ]


def _source_line(ref: SourceRef) -> str:
    return f"{plain(ref.title or ref.url)} — {ref.url}"


def with_section(report: str, changes: Changes) -> str:
    """The report with the section right after its title line (or first, when it has none)."""
    lines = report.split("\n")
    title = next((i for i, line in enumerate(lines[:5]) if line.startswith("# ")), None)
    if title is None:
        return f"{section(changes)}\n{report}"
    head, rest = "\n".join(lines[: title + 1]), "\n".join(lines[title + 1 :]).lstrip("\n")
    return f"{head}\n\n{section(changes)}\n{rest}"
