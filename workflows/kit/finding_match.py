"""Which finding of this run is which finding of the run before: by what it rests on and what it
says, never by its words.

A model words the same finding differently on every run, so two findings are the same when they
cite the same source (as the two runs identify it: workflows/kit/source_match.py) and either rest on
the same evidence paragraph of it or share most of their content words; findings on different
sources must share nearly all of them. Numbers and code identifiers are compared on their own: a
matched finding whose figure was replaced by another ("12%" then "15%") is a changed finding, not
the same one. Pairs are taken best first, each finding at most once, so the outcome never depends
on the order claims came in. Pure and deterministic: it runs in the workflow sandbox.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workflows.kit.citations import CITATION as CITED
from workflows.record import Claim, Evidence, Verdict
from workflows.text import content_terms, stem

#: Claims whose verdict is one of these count as made (and so can be "no longer supported").
MADE = frozenset({Verdict.SUPPORTED, Verdict.PARTIAL, Verdict.UNVERIFIED})
#: Content-word overlap (Dice) two findings on a common source need when they rest on the same
#: evidence paragraph, when they do not, and when they share no source at all.
SAME_GROUND_OVERLAP = 0.25
SHARED_SOURCE_OVERLAP = 0.5
NO_SHARED_SOURCE_OVERLAP = 0.75
#: Two evidence paragraphs are the same paragraph when this much of their content words agree
#: (an excerpt may be cut a sentence earlier or later in another run).
SAME_PARAGRAPH = 0.6

CITATION = re.compile(r"\s*" + CITED.pattern)  # the one citation pattern, the space before it
#: A figure: a number with its decimals, thousands separators and percent sign.
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)*(?:\s?%|\s?percent\b)?")
#: A code identifier: `quoted`, dotted or with :: (asyncio.gather, Vec::new), snake_case, calls,
#: and words with an inner capital (HashMap, RefCell).
_IDENTIFIER = re.compile(
    r"`([^`\n]{1,80})`"
    r"|\b([A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)+(?:\(\))?"
    r"|[A-Za-z]\w*_\w+|[A-Za-z_]\w*\(\)|[A-Z][a-z0-9]+[A-Z]\w*|[a-z]+[A-Z]\w*)"
)


def plain(text: str) -> str:
    """A finding as a reader sees it in a comparison: no citations (they number each run's
    sources differently), on one line."""
    return " ".join(CITATION.sub("", text).split())


def figures(text: str) -> frozenset[str]:
    """The numbers and code identifiers a finding states, written one way (1,000 and 1000 agree)."""
    text = plain(text)
    numbers = {
        m.group(0).replace(",", "").replace(" ", "").replace("percent", "%").lstrip("+")
        for m in _NUMBER.finditer(text)
    }
    names = {(m.group(1) or m.group(2)).strip() for m in _IDENTIFIER.finditer(text)}
    # "e.g" and "i.e" are dotted like `a.b`, but no name of code
    return frozenset(numbers | {n for n in names if len(n.replace(".", "")) > 2 or "::" in n})


def terms(text: str) -> frozenset[str]:
    """A text's content words, stemmed, without figures (they are compared on their own)."""
    return frozenset(
        stem(t) for t in content_terms(plain(text)) if not any(ch.isdigit() for ch in t)
    )


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Dice's coefficient of two word sets (0 when both are empty)."""
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


def figures_replaced(a: frozenset[str], b: frozenset[str]) -> bool:
    """Each states a figure the other does not: one was replaced. A finding that only leaves a
    figure out (or adds one) says less or more, not something else."""
    return bool(a - b) and bool(b - a)


@dataclass(frozen=True)
class Finding:
    """A claim as the comparison sees it: the sources it cites (as both runs name them), the
    evidence paragraphs it rests on, its content words and figures."""

    claim: Claim
    sources: frozenset[str]
    #: (source, content words of the paragraph of that source sharing most words with the claim)
    grounds: tuple[tuple[str, frozenset[str]], ...]
    terms: frozenset[str]
    figures: frozenset[str]

    @property
    def made(self) -> bool:
        return not self.claim.removed and self.claim.verdict in MADE


def findings(
    claims: list[Claim], source_key: dict[int, str], pool: list[Evidence]
) -> list[Finding]:
    """The run's claims (with text) as findings; SOURCE_KEY names each source id across runs."""
    paragraphs: dict[int, list[frozenset[str]]] = {}
    for item in pool:
        paragraphs.setdefault(item.source_id, []).append(terms(item.text))
    found = []
    for claim in claims:
        if not claim.text.strip():
            continue
        words = terms(claim.text)
        grounds = []
        for source_id in claim.source_ids:
            candidates = paragraphs.get(source_id, [])
            if source_id in source_key and candidates:
                best = max(candidates, key=lambda p: len(p & words))
                grounds.append((source_key[source_id], best))
        found.append(
            Finding(
                claim=claim,
                sources=frozenset(source_key[i] for i in claim.source_ids if i in source_key),
                grounds=tuple(grounds),
                terms=words,
                figures=figures(claim.text),
            )
        )
    return found


def _same_ground(a: Finding, b: Finding) -> bool:
    return any(
        sa == sb and overlap(pa, pb) >= SAME_PARAGRAPH
        for sa, pa in a.grounds
        for sb, pb in b.grounds
    )


def likeness(before: Finding, now: Finding) -> float | None:
    """How surely NOW is BEFORE said again (higher is surer), or None when it is another finding."""
    words = overlap(before.terms, now.terms)
    if before.sources & now.sources:
        if words >= SAME_GROUND_OVERLAP and _same_ground(before, now):
            return 2.0 + words
        if words >= SHARED_SOURCE_OVERLAP:
            return 1.0 + words
    return words if words >= NO_SHARED_SOURCE_OVERLAP else None


@dataclass
class Pairing:
    """Findings of the run before and of this run, paired one to one; the rest unpaired."""

    pairs: list[tuple[Finding, Finding]] = field(default_factory=list)
    only_before: list[Finding] = field(default_factory=list)
    only_now: list[Finding] = field(default_factory=list)


def pair(before: list[Finding], now: list[Finding]) -> Pairing:
    """Best pairs first (ties in the runs' own order), each finding in at most one pair."""
    scored = sorted(
        (-score, i, j)
        for i, b in enumerate(before)
        for j, n in enumerate(now)
        if (score := likeness(b, n)) is not None
    )
    taken_before: set[int] = set()
    taken_now: set[int] = set()
    chosen: list[tuple[int, int]] = []
    for _, i, j in scored:
        if i not in taken_before and j not in taken_now:
            taken_before.add(i)
            taken_now.add(j)
            chosen.append((i, j))
    return Pairing(
        pairs=[(before[i], now[j]) for i, j in sorted(chosen)],
        only_before=[b for i, b in enumerate(before) if i not in taken_before],
        only_now=[n for j, n in enumerate(now) if j not in taken_now],
    )
