"""Checking the report (seed 002's citation-aware synthesis, seed 004's critic).

Each cited sentence becomes a claim, checked against what was read of the sources it cites:
deterministically first (workflows/kit/judging.py, workflows/text/alignment.py), by the model's judge only
once it has passed its canaries; unsupported sentences are rewritten once and re-checked, and what is still unsupported leaves the
report. Partly supported sentences stay, marked. Then the critic scores the report.
"""

from __future__ import annotations

from collections.abc import Iterable

from temporalio import workflow

from workflows import patches, roles
from workflows.accounting.calls import call
from workflows.accounting.state import ResearchState
from workflows.activity_models import (
    ClaimCheck,
    CritiqueInput,
    ReviseClaimsInput,
    VerifyClaimsInput,
    VerifyClaimsOutput,
)
from workflows.checks import off_subject, retractions
from workflows.events import EventKind, emit
from workflows.kit import judging, verification
from workflows.models import (
    MAX_CRITIQUE_ISSUES,
    Claim,
    Critique,
    CritiqueIssue,
    IssueSeverity,
    Verdict,
    VerificationSummary,
)


async def check(
    state: ResearchState, report: str, claims: list[Claim], cancelled: bool
) -> tuple[str, list[Claim]]:
    """Verify every cited sentence against its evidence, then let the critic score the report.

    A cancelled research ends now rather than paying for checks; its claims stay unverified.
    """
    writeup = state.writeup
    if not state.request.verify or cancelled:
        why = (
            "verification was turned off"
            if not state.request.verify
            else "the research was cancelled"
        )
        writeup.verification = VerificationSummary(
            enabled=False, method=why, claims=len(claims), unverified=len(claims)
        )
        emit(
            state.events,
            EventKind.VERIFICATION,
            f"claims not verified ({why})",
            writeup.verification.model_dump(),
        )
        return report.rstrip() + f"\n\n*Claims were not verified ({why}).*\n", claims
    report, claims = await _verify(state, report)
    writeup.critique = critique = await _critic(state, report)
    retractions.flag(critique, claims, state.material.sources)
    assert writeup.verification is not None
    emit(
        state.events,
        EventKind.VERIFICATION,
        _verification_line(state),
        {
            **writeup.verification.model_dump(),
            "acceptable": critique.is_acceptable if critique else None,
            "issues": len(critique.issues) if critique else 0,
        },
    )
    return report, claims


def _verification_line(state: ResearchState) -> str:
    v, critique = state.writeup.verification, state.writeup.critique
    assert v is not None
    line = f"verified: {v.supported}/{v.claims} claims supported, {v.partial} partly, {v.removed} removed"
    if critique is not None:
        line += "; the critic " + (
            "accepts the report"
            if critique.is_acceptable
            else f"does not accept it ({len(critique.issues)} issues)"
        )
    return line


async def _verify(state: ResearchState, report: str) -> tuple[str, list[Claim]]:
    sentences = verification.cited_sentences(report)
    texts = [s.text for s in sentences]
    claims = [Claim(text=s.claim, source_ids=list(s.source_ids)) for s in sentences]
    # checked against what was read, deterministically first, by a model's judge only
    # once it has passed its canaries.
    method = await _judge(state, claims, range(len(claims)))
    unsupported = [i for i, c in enumerate(claims) if c.verdict is Verdict.UNSUPPORTED]
    if unsupported:
        rewrites = await _revise(state, claims, unsupported)
        for i, sentence in rewrites.items():
            report = verification.replace_sentence(report, texts[i], sentence)
            texts[i] = sentence
        await _judge(state, claims, list(rewrites))
    for i, claim in enumerate(claims):
        if claim.verdict is Verdict.UNSUPPORTED:
            report = verification.remove_sentence(report, texts[i])
            claim.removed = True
        elif claim.verdict is Verdict.PARTIAL:
            report = verification.mark_partial(report, texts[i])
    still_cited = {
        n for sentence in verification.cited_sentences(report) for n in sentence.source_ids
    }
    report = verification.drop_unused_sources(report, still_cited)
    state.writeup.verification = verification.summarize(claims, method=method)
    _count_off_subject(state, report, claims)
    calibration = state.ledger.stats.judge_calibration
    state.writeup.verification.checked_by = judging.checked_by(claims, calibration)
    state.writeup.verification.calibration = calibration
    return report.rstrip() + "\n\n" + verification.verification_note(
        state.writeup.verification
    ) + "\n", claims


def _count_off_subject(state: ResearchState, report: str, claims: list[Claim]) -> None:
    """Sentences about another subject than their section asks (Venus's rotation under
    "How long is a Martian year") count apart from the supported ones, however well they match."""
    summary, material = state.writeup.verification, state.material
    assert summary is not None
    titles = {s.id: s.title for s in material.sources}
    off = off_subject.sections_off_subject(report, state.meant(), titles, dict(material.read))
    if not off:
        return
    sentences = {o.sentence for o in off}
    was_supported = sum(
        1
        for c in claims
        if c.verdict is Verdict.SUPPORTED and not c.removed and c.text in sentences
    )
    summary.off_subject = len(sentences)
    summary.off_subject_sections = list(dict.fromkeys(f"{o.section}: {o.other}" for o in off))
    summary.supported -= min(was_supported, summary.supported)
    summary.share_supported = (
        round(summary.supported / summary.claims, 4) if summary.claims else 0.0
    )


async def _judge(state: ResearchState, claims: list[Claim], which: Iterable[int]) -> str:
    """Verdicts for `claims[i]`, i in `which` (workflows/kit/judging.py): each claim against what was
    read of the sources it cites; the model's judge (an activity) only when a model wrote the
    report and it passes its canaries, calibrated once per research. Returns the method."""
    chosen = list(which)
    stats = state.ledger.stats
    ask = None if state.writeup.engine in ("", "offline") else _ask(state)
    # a trusted judge's word is final (asked about more claims: a history recorded
    # before the patch asked only about those the word check could not settle).
    final = ask is not None and workflow.patched(patches.JUDGE_HAS_LAST_WORD)
    checked, stats.judge_calibration = await judging.judge_claims(
        [claims[i] for i in chosen],
        lambda c: state.material.read_evidence(c.source_ids),
        state.material.sources,
        state.about(),
        ask,
        stats.judge_calibration,
        final=final,
    )
    for i, claim in zip(chosen, checked, strict=True):
        claims[i] = claim
    retractions.discount([claims[i] for i in chosen], state.material.sources)
    trusted = stats.judge_calibration is not None and stats.judge_calibration.trusted
    return "lexical+judge" if ask is not None and trusted else "lexical"


def _ask(state: ResearchState) -> judging.JudgeCall:
    async def ask(inp: VerifyClaimsInput) -> VerifyClaimsOutput | None:
        return await call(state, roles.VERIFY_CLAIMS, inp)

    return ask


async def _revise(state: ResearchState, claims: list[Claim], which: list[int]) -> dict[int, str]:
    """Rewrite unsupported sentences once (bounded: a rewrite is checked, never rewritten again).
    A rewrite must be one sentence citing only what the claim cited. Updates `claims`;
    returns the new sentence per rewritten claim."""
    pool = state.material.evidence_pool()
    answer = await call(
        state,
        roles.REVISE_CLAIMS,
        ReviseClaimsInput(
            **state.about(),
            claims=[
                ClaimCheck(index=i, text=claims[i].text, source_ids=claims[i].source_ids)
                for i in which
            ],
            reasons=[claims[i].reason for i in which],
            evidence=[e for e in pool if any(e.source_id in claims[i].source_ids for i in which)],
        ),
    )
    rewritten: dict[int, str] = {}
    for rewrite in answer.rewrites if answer else []:
        parsed = verification.cited_sentences(rewrite.text)
        i = rewrite.index
        if i not in which or i in rewritten or len(parsed) != 1:
            continue
        if not set(parsed[0].source_ids) <= set(claims[i].source_ids):
            continue
        claims[i] = Claim(
            text=parsed[0].claim, source_ids=list(parsed[0].source_ids), original=claims[i].text
        )
        rewritten[i] = rewrite.text.strip()
    return rewritten


async def _critic(state: ResearchState, report: str) -> Critique | None:
    assert state.writeup.verification is not None
    steps = state.inquiry.plan.steps if state.inquiry.plan else []
    scored = await call(
        state,
        roles.CRITIQUE,
        CritiqueInput(
            **state.about(),
            report_markdown=report,
            verification=state.writeup.verification,
            sources_count=len(state.material.sources),
            steps_completed=state.inquiry.steps_done(),
            steps_planned=len(steps),
        ),
    )
    if scored is None:
        return None
    critique = Critique.model_validate(scored.model_dump(exclude={"usage"}))
    critique.issues = critique.issues[:MAX_CRITIQUE_ISSUES]
    return _not_off_subject(state.writeup.verification, critique)


def _not_off_subject(summary: VerificationSummary, critique: Critique) -> Critique:
    """Whatever the critic thought, a report with a section about something else than it
    asks is not accepted (the offline critic says so itself; a model's may not have looked).
    Before patch SECTIONS_ON_SUBJECT a history took the critic's word, and replays so."""
    if not (summary.off_subject and critique.is_acceptable):
        return critique
    if not workflow.patched(patches.SECTIONS_ON_SUBJECT):
        return critique
    where = "; ".join(
        f"“{s.rpartition(': ')[0]}” cites {s.rpartition(': ')[2]}"
        for s in summary.off_subject_sections[:3]
    )
    issue = CritiqueIssue(
        severity=IssueSeverity.HIGH,
        text=f"off its subject: {summary.off_subject} cited sentence(s) are about another "
        f"subject than their section asks ({where})",
    )
    return critique.model_copy(
        update={"is_acceptable": False, "issues": [issue, *critique.issues][:MAX_CRITIQUE_ISSUES]}
    )
