"""The offline engine's verifier, reviser and critic: word overlap instead of a judge model.

Without an LLM nothing can read a claim the way a person would, so the offline engine says only
what word overlap can honestly tell: a claim whose content words (and numbers) all appear in one
paragraph of its cited evidence is supported, one that shares half of them is partly supported,
anything less is not (workflows/kit/verification.py holds the measure, shared with the workflow's
cheap pre-check). Rewriting an unsupported claim means replacing it with the evidence sentence
closest to it, quoted and cited, so the rewrite says what the source says and nothing more.
"""

from __future__ import annotations

from activities.offline_engine.asking import ask_of
from workflows.activity_models import (
    ClaimRewrite,
    ClaimVerdict,
    CritiqueInput,
    CritiqueOutput,
    JudgeVerdict,
    ReviseClaimsInput,
    ReviseClaimsOutput,
    VerifyClaimsInput,
    VerifyClaimsOutput,
)
from workflows.kit import verification
from workflows.kit.citations import CITATION
from workflows.models import CheckedBy, CritiqueIssue, Evidence, IssueSeverity
from workflows.text import content_terms, split_sentences, stem

#: A rewrite must share at least this many content words with the claim it replaces: below that
#: the nearest evidence sentence is about something else, and the claim is dropped instead.
REWRITE_MIN_SHARED = 2


def verify(inp: VerifyClaimsInput) -> VerifyClaimsOutput:
    verdicts = []
    for claim in inp.claims:
        check = verification.lexical_verdict(claim.text, _texts(inp.evidence, claim.source_ids))
        verdict = JudgeVerdict(check.verdict.value) if check.verdict else JudgeVerdict.UNSUPPORTED
        verdicts.append(ClaimVerdict(index=claim.index, verdict=verdict, reason=check.reason))
    return VerifyClaimsOutput(verdicts=verdicts, checked_by=CheckedBy.LEXICAL)


def revise(inp: ReviseClaimsInput) -> ReviseClaimsOutput:
    rewrites = []
    for claim in inp.claims:
        wanted = set(content_terms(claim.text))
        best: tuple[int, str, int] | None = None
        for item in inp.evidence:
            if item.source_id not in claim.source_ids:
                continue
            for sentence in split_sentences(item.text):
                shared = len(wanted & set(content_terms(sentence)))
                if shared >= REWRITE_MIN_SHARED and (best is None or shared > best[0]):
                    best = (shared, sentence.strip(), item.source_id)
        text = "" if best is None else f"{_without_end(best[1])} [{best[2]}]."
        rewrites.append(ClaimRewrite(index=claim.index, text=text))
    return ReviseClaimsOutput(rewrites=rewrites)


def critique(inp: CritiqueInput) -> CritiqueOutput:
    """Quality from what the research covered and how much of it holds up; risk from what still
    stands in the report without full support."""
    v = inp.verification
    standing = max(0, v.claims - v.removed)
    coverage = (
        inp.steps_completed / inp.steps_planned if inp.steps_planned else (1.0 if standing else 0.0)
    )
    breadth = min(1.0, inp.sources_count / max(2, 2 * max(1, inp.steps_completed)))
    supported = v.supported / standing if standing else 0.0
    quality = round((supported + coverage + breadth) / 3, 2)
    doubtful = v.partial * 0.5 + v.unverified * 0.5 + max(0, v.unsupported - v.removed)
    risk = round(min(1.0, doubtful / standing), 2) if standing else 0.0
    issues = _issues(inp, standing)
    high = [i for i in issues if i.severity is IssueSeverity.HIGH]
    return CritiqueOutput(
        is_acceptable=not high and quality >= ACCEPTABLE_QUALITY,
        issues=issues,
        rewrite_suggestion=" ".join(
            _REWRITE[i.text.split(":")[0]] for i in issues if i.text.split(":")[0] in _REWRITE
        ),
        requires_human_input=standing == 0 or inp.sources_count == 0,
        quality=quality,
        quality_reason=(
            f"{v.supported} of {standing} claims in the report are supported by their sources; "
            f"{inp.steps_completed} of {inp.steps_planned} planned steps were researched; "
            f"{inp.sources_count} sources were cited."
        ),
        hallucination_risk=risk,
        hallucination_reason=(
            f"{v.partial} claims are only partly supported and {v.removed} unsupported claims were removed; "
            "the offline engine quotes its sources, so it states nothing they do not say, "
            "but word overlap cannot judge meaning."
        ),
    )


#: Below this quality the offline critic does not accept a report.
ACCEPTABLE_QUALITY = 0.5
#: The rules, each named in the issue it raises (the name before the colon).
UNSUPPORTED_SHARE_HIGH = 0.25
UNCOVERED_SHARE = 0.5
UNCOVERED_SHARE_HIGH = 0.75
_REWRITE = {
    "question not answered": "Say plainly that the sources read do not answer the question, or find ones that do.",
    "unsupported claims": "Say only what the cited passages say, and cite each sentence.",
    "uncovered question terms": "Cover the question's missing terms, or say that the sources do not.",
    "nothing cited": "Write the answer from the sources read, citing them.",
    "off its subject": "Keep each section to what it asks: cite only sentences about its subject.",
}


def _issues(inp: CritiqueInput, standing: int) -> list[CritiqueIssue]:
    """Every rule that fires, with its figures: what a reader would object to."""
    v = inp.verification
    issues: list[CritiqueIssue] = []
    if v.claims == 0 or standing == 0:
        issues.append(
            CritiqueIssue(
                severity=IssueSeverity.HIGH,
                text="nothing cited: the report makes no claim backed by a source",
            )
        )
    elif v.removed + v.unsupported:
        share = (v.removed + max(0, v.unsupported - v.removed)) / v.claims
        issues.append(
            CritiqueIssue(
                severity=IssueSeverity.HIGH
                if share > UNSUPPORTED_SHARE_HIGH
                else IssueSeverity.MEDIUM,
                text=f"unsupported claims: {v.removed + max(0, v.unsupported - v.removed)} of {v.claims} claims "
                "were not supported by their sources",
            )
        )
    if v.off_subject:
        issues.append(off_subject_issue(v.off_subject_sections, v.off_subject))
    cited = _cited_sentences(inp.report_markdown)
    ask = ask_of(inp.meant())
    unanswered = ask.missing(cited) if cited else []
    if unanswered:
        issues.append(
            CritiqueIssue(
                severity=IssueSeverity.HIGH,
                text=f"question not answered: no cited sentence about {ask.subject} says anything about "
                f"{', '.join(map(_quoted, unanswered))}; supported claims are not an answer",
            )
        )
    # Only what the report quotes from its sources counts: its title and headings repeat the question.
    wanted = {stem(t): t for t in content_terms(inp.topic_text())}
    found = {stem(t) for t in content_terms(" ".join(cited))}
    missing = sorted(t for s, t in wanted.items() if s not in found)
    if wanted and len(missing) / len(wanted) > UNCOVERED_SHARE:
        mostly = len(missing) / len(wanted) > UNCOVERED_SHARE_HIGH
        issues.append(
            CritiqueIssue(
                severity=IssueSeverity.HIGH if mostly else IssueSeverity.MEDIUM,
                text=f"uncovered question terms: the report never mentions {', '.join(map(_quoted, missing[:8]))}",
            )
        )
    if inp.steps_completed < inp.steps_planned:
        issues.append(
            CritiqueIssue(
                severity=IssueSeverity.LOW,
                text=f"steps skipped: {inp.steps_planned - inp.steps_completed} of "
                f"{inp.steps_planned} planned steps were not researched",
            )
        )
    return issues


def off_subject_issue(sections: list[str], count: int) -> CritiqueIssue:
    """A section answering about something else is no answer to what it asks, however
    well each sentence matches its source: never accepted."""
    where = "; ".join(
        f"“{s.rpartition(': ')[0]}” cites {s.rpartition(': ')[2]}" for s in sections[:3]
    )
    return CritiqueIssue(
        severity=IssueSeverity.HIGH,
        text=f"off its subject: {count} cited sentence(s) are about another subject than their "
        f"section asks ({where or 'see the verification note'})",
    )


def _quoted(term: str) -> str:
    """A term in quotes: the planner takes quoted terms from feedback as they are (planning.py)."""
    return f'"{term}"'


def _cited_sentences(markdown: str) -> list[str]:
    """The report's sentences that cite a source, without their markers: what it claims."""
    return [
        CITATION.sub("", s)
        for line in markdown.splitlines()
        for s in split_sentences(line)
        if CITATION.search(s)
    ]


def _texts(evidence: list[Evidence], source_ids: list[int]) -> list[str]:
    return [e.text for e in evidence if e.source_id in source_ids]


def _without_end(sentence: str) -> str:
    return sentence.rstrip().rstrip(".!?").rstrip()
