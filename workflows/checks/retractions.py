"""A retracted work is never cited as support without the report saying so.

A claim resting only on works an index calls retracted is `unsupported`, whatever its wording
shares with them, with a reason naming the retraction: the checking then treats it as any
unsupported sentence (rewritten once, else taken out). A claim that also cites a standing source
is judged on the evidence as usual, and the Sources list marks the retracted one
(`citations.origin`). The critic's issues name every such claim, so a reviewer sees what was
taken out and why. Only sources of papers can be retracted: research without them is unchanged.
"""

from __future__ import annotations

from workflows.models import (
    MAX_CRITIQUE_ISSUES,
    Claim,
    Critique,
    CritiqueIssue,
    IssueSeverity,
    Source,
    Verdict,
)


def retracted_ids(claim: Claim, sources: list[Source]) -> list[int]:
    """The claim's sources, when every one of them is retracted (else none)."""
    retracted = {s.id for s in sources if s.retracted}
    ids = claim.source_ids
    return list(ids) if ids and all(n in retracted for n in ids) else []


def reason(ids: list[int]) -> str:
    cited = ", ".join(f"[{n}]" for n in ids)
    return f"rests only on retracted work {cited}: a retracted paper supports nothing"


def discount(claims: list[Claim], sources: list[Source]) -> None:
    """Claims resting only on retracted works become unsupported, saying why."""
    for claim in claims:
        ids = retracted_ids(claim, sources)
        if ids:
            claim.verdict, claim.reason = Verdict.UNSUPPORTED, reason(ids)


def flag(critique: Critique | None, claims: list[Claim], sources: list[Source]) -> None:
    """The critic's issues name each claim that rested only on retracted works (first: they are
    the gravest), within the issues' limit."""
    if critique is None:
        return
    found = [
        CritiqueIssue(
            severity=IssueSeverity.HIGH,
            text=f"A claim {reason(ids)}; it was not kept as support: {claim.text[:200]}",
        )
        for claim in claims
        if (ids := retracted_ids(claim, sources))
    ]
    if found:
        critique.issues = [*found, *critique.issues][:MAX_CRITIQUE_ISSUES]
