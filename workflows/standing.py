"""What changed since the last run of a standing research: the comparison, pure and deterministic.

A standing research (a question researched again on a schedule, `starter/standing.py`) runs as
ordinary research whose request names its `standing_id`. When such a run has written its report,
the previous run of the same standing research is read from the library (the `previous_run`
activity: its sources and claims, nothing else) and compared here, with no model: sources by URL
(new, gone), claims by their text without citations (new, no longer made), and claims made by both
whose verdict moved (`changed_claims`). The report then opens with "What changed since DATE", and
the result carries the comparison as data (`ResearchResult.changes`).

Pure: no I/O, safe in the workflow sandbox.
"""

from __future__ import annotations

import re
from datetime import datetime

from pydantic import BaseModel, Field

from workflows.record import Claim, Source, Verdict

#: Activity names (activities/standing.py), called by name so the core imports no activity code.
PREVIOUS_RUN = "previous_run"
#: At most this many of each list are carried in a result and an event: a run whose corpus was
#: swapped whole is summed up, not copied out.
MAX_LISTED = 50
#: Claims whose verdict is one of these count as made (and so can be "no longer supported").
MADE = frozenset({Verdict.SUPPORTED, Verdict.PARTIAL, Verdict.UNVERIFIED})


class SourceRef(BaseModel):
    url: str
    title: str = ""


class ChangedClaim(BaseModel):
    """A claim both runs make, whose verdict moved (e.g. supported -> unsupported)."""

    text: str
    before: Verdict
    after: Verdict


class PreviousRunInput(BaseModel):
    standing_id: str
    #: This run's workflow id: never its own previous run.
    research_id: str


class PreviousRun(BaseModel):
    """What a comparison needs of the run before: its id, when it finished, sources and claims."""

    research_id: str
    finished_at: datetime
    sources: list[SourceRef] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)


class PreviousRunOutput(BaseModel):
    #: None for the first run of a standing research.
    previous: PreviousRun | None = None


class Changes(BaseModel):
    """INTERFACE.md "What changed": the run this one is compared with, and the differences."""

    since_research_id: str
    since: datetime
    new_sources: list[SourceRef] = Field(default_factory=list)
    gone_sources: list[SourceRef] = Field(default_factory=list)
    new_claims: list[str] = Field(default_factory=list)
    dropped_claims: list[str] = Field(default_factory=list)
    changed_claims: list[ChangedClaim] = Field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(
            self.new_sources
            or self.gone_sources
            or self.new_claims
            or self.dropped_claims
            or self.changed_claims
        )


_CITATION = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


def claim_key(text: str) -> str:
    """A claim's text as compared: citations dropped (source numbers differ between runs), case and
    spacing folded, trailing punctuation ignored."""
    return " ".join(_CITATION.sub("", text).lower().split()).rstrip(" .;:")


def url_key(url: str) -> str:
    """A source's URL as compared: without its fragment (a section of the same page or document)."""
    return url.split("#", 1)[0].rstrip("/")


def refs(sources: list[Source]) -> list[SourceRef]:
    seen: dict[str, SourceRef] = {}
    for source in sources:
        seen.setdefault(url_key(source.url), SourceRef(url=url_key(source.url), title=source.title))
    return list(seen.values())


def _made(claims: list[Claim]) -> dict[str, Claim]:
    return {claim_key(c.text): c for c in claims if not c.removed and c.verdict in MADE and c.text}


def compare(previous: PreviousRun, sources: list[Source], claims: list[Claim]) -> Changes:
    """This run (its sources and final claims) against the previous run, deterministically."""
    now_sources = {r.url: r for r in refs(sources)}
    before_sources = {url_key(r.url): r for r in previous.sources}
    now_claims, before_claims = _made(claims), _made(previous.claims)
    changed = [
        ChangedClaim(text=now.text, before=before_claims[key].verdict, after=now.verdict)
        for key, now in now_claims.items()
        if key in before_claims and before_claims[key].verdict is not now.verdict
    ]
    return Changes(
        since_research_id=previous.research_id,
        since=previous.finished_at,
        new_sources=[r for u, r in now_sources.items() if u not in before_sources][:MAX_LISTED],
        gone_sources=[r for u, r in before_sources.items() if u not in now_sources][:MAX_LISTED],
        new_claims=[c.text for k, c in now_claims.items() if k not in before_claims][:MAX_LISTED],
        dropped_claims=[c.text for k, c in before_claims.items() if k not in now_claims][
            :MAX_LISTED
        ],
        changed_claims=changed[:MAX_LISTED],
    )


def section(changes: Changes) -> str:
    """The report's opening section: "What changed since DATE", or that nothing did."""
    since = changes.since.strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"## What changed since {since}", ""]
    if not changes.changed:
        lines += [
            f"Nothing changed since the previous run ({changes.since_research_id}): the same "
            "sources, and the same findings with the same verdicts.",
            "",
        ]
        return "\n".join(lines)
    lines.append(f"Compared with the previous run ({changes.since_research_id}):")
    lines.append("")
    groups: list[tuple[str, list[str]]] = [
        ("New sources", [_source_line(r) for r in changes.new_sources]),
        ("Sources no longer found", [_source_line(r) for r in changes.gone_sources]),
        ("New findings", [_plain(t) for t in changes.new_claims]),
        ("Findings no longer made or supported", [_plain(t) for t in changes.dropped_claims]),
        (
            "Findings whose verdict changed",
            [
                f"{_plain(c.text)} ({c.before.value} → {c.after.value})"
                for c in changes.changed_claims
            ],
        ),
    ]
    for title, items in groups:
        if items:
            lines += [f"**{title}** ({len(items)}):", "", *(f"- {i}" for i in items), ""]
    return "\n".join(lines)


def _source_line(ref: SourceRef) -> str:
    return f"{_plain(ref.title or ref.url)} — {ref.url}"


def _plain(text: str) -> str:
    """A line of the section: no citations (they would point at this run's numbering), one line."""
    return " ".join(_CITATION.sub("", text).split())


def with_section(report: str, changes: Changes) -> str:
    """The report with the section right after its title line (or first, when it has none)."""
    lines = report.split("\n")
    title = next((i for i, line in enumerate(lines[:5]) if line.startswith("# ")), None)
    if title is None:
        return f"{section(changes)}\n{report}"
    head, rest = "\n".join(lines[: title + 1]), "\n".join(lines[title + 1 :]).lstrip("\n")
    return f"{head}\n\n{section(changes)}\n{rest}"
