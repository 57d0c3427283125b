"""What the pages say about a report review's rounds: the round shown, what
**Revise report** does in it, and, on the finished report, how its review went. The page's script
(static/waiting.js) says the same while the research runs; the page without JavaScript and the
finished report take these."""

from __future__ import annotations

from typing import Any

from workflows.kit.sections import UNCHANGED
from workflows.models import DecidedBy, ResearchStatus, Review, ReviewDecision, ReviewTarget


def round_text(round_: int, most: int) -> str:
    """The round shown, "Review round 2 of 3" ("Review round 1" when the research does not say how many)."""
    return f"Review round {round_}" + (f" of {most}" if most else "")


def revise_help(round_: int, most: int) -> str:
    """What Revise report does in this round: another round follows, or its revision is final."""
    if most > 1 and round_ < most:
        return (
            "Revise report rewrites it with your feedback, checks it again and shows you the "
            "revision for another review round."
        )
    if most > 1:
        return (
            "This is the last round: Revise report rewrites it once more with your feedback, and "
            f"that revision is final: {most} review rounds were used, you are not asked again."
        )
    return (
        "Revise report rewrites it once with your feedback; that revision is final: "
        "you are not asked again."
    )


#: What the review panel says of a revision it shows (the page's script says the same).
REVISED = "The draft below is the revision: rewritten with your feedback and checked again."
SAME = (
    "The draft below is the revision you asked for, but it came out the same as before: the "
    "engine that writes this report could not act on your feedback."
)


#: The review panel's words, for the page's script (static/waiting.js) to say the same.
PANEL_WORDS = {"unchanged": UNCHANGED, "revised": REVISED, "same": SAME}


def review_context(status: ResearchStatus) -> dict[str, Any]:
    """What the page's review panel without JavaScript says in the round it shows."""
    rounds, most = status.review_rounds, status.review_rounds_max
    return {
        "review_round": rounds,
        "round_text": round_text(rounds, most),
        "revise_help": revise_help(rounds, most),
        "revision_line": revision_line(rounds, status.draft_report_markdown or ""),
    }


def revision_line(round_: int, draft: str) -> str | None:
    """The review panel's line on the draft it shows: none in round 1; a revision that came out
    as the draft was is not called "rewritten with your feedback"."""
    if round_ <= 1:
        return None
    return SAME if UNCHANGED in draft else REVISED


def revised_notice(reviews: list[Review], report: str = "") -> str | None:
    """The finished report's line on its review: None when it was never revised. A REPORT whose
    rewrite came out as the draft was says so, never "revised with your feedback"."""
    rounds = [r for r in reviews if r.target is ReviewTarget.REPORT]
    revisions = sum(1 for r in rounds if r.decision is ReviewDecision.REVISE)
    if not revisions:
        return None
    if UNCHANGED in report:
        return (
            "You asked for a revision, but the rewrite came out the same as the draft: the engine "
            "that writes this report could not act on your feedback."
        )
    times = "once" if revisions == 1 else f"{revisions} times"
    said = f"Revised {times} after your review, with your feedback"
    last = rounds[-1]
    if last.decision is ReviewDecision.REVISE:
        used = f": {len(rounds)} review rounds were used" if len(rounds) > 1 else ""
        return f"{said}; this revision is final{used}."
    if last.by is DecidedBy.TIMEOUT:
        return f"{said}; nobody reviewed the last revision in time, so it stands."
    return f"{said}; you approved the revision."
