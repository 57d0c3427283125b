"""The checking roles of the OpenAI engine: the judge of the report's claims, the reviser of those
judged unsupported, and the critic.

Apart from the roles that decide and write (engine.py) because what they keep of a reply is a
rule of its own: a verdict only for a claim that was asked about (and a word-for-word quote of its
evidence always supported), a rewrite citing only what the claim cited, an issue only when a
reader can act on it.
"""

from __future__ import annotations

from activities.openai_engine import grounding
from activities.openai_engine.chat import Chat
from activities.openai_engine.formatting import (
    NONE,
    _cut,
    _evidence,
    _ids,
    _wrapped,
    about,
    language,
    trusted,
    untrusted,
)
from activities.openai_engine.replies import _only_known_citations
from workflows import activity_models as m
from workflows.models import CritiqueIssue, IssueSeverity


async def verify_claims(chat: Chat, inp: m.VerifyClaimsInput) -> m.VerifyClaimsOutput:
    """The judge's verdict per claim; a claim the model skipped stays out of the answer and
    the workflow keeps it `unverified` rather than guessing."""
    asked = {c.index for c in inp.claims}
    reply, usage = await chat.ask(
        "verify_claims",
        **about(inp),
        claims=_wrapped(
            "\n".join(f"{c.index}. {c.text} (cites {_ids(c.source_ids)})" for c in inp.claims),
            "report",
        ),
        evidence=_evidence(inp.evidence),
    )
    verdicts = {v.index: v for v in reply.verdicts if v.index in asked}
    for claim in inp.claims:  # a quote of the cited evidence is supported, whatever the judge
        judged = verdicts.get(claim.index)
        if grounding.verbatim(claim.text, claim.source_ids, inp.evidence) and (
            judged is None or judged.verdict is not m.JudgeVerdict.SUPPORTED
        ):
            verdicts[claim.index] = m.ClaimVerdict(
                index=claim.index,
                verdict=m.JudgeVerdict.SUPPORTED,
                reason="its words stand, in order, in the evidence it cites",
            )
    return m.VerifyClaimsOutput(
        verdicts=sorted(verdicts.values(), key=lambda v: v.index), usage=usage
    )


async def revise_claims(chat: Chat, inp: m.ReviseClaimsInput) -> m.ReviseClaimsOutput:
    """Rewrites that cite only the ids the claim cited: a rewrite may narrow, never re-source."""
    allowed = {c.index: set(c.source_ids) for c in inp.claims}
    reasons = dict(zip((c.index for c in inp.claims), inp.reasons, strict=False))
    reply, usage = await chat.ask(
        "revise_claims",
        **about(inp),
        claims=_wrapped(
            "\n".join(
                f"{c.index}. {c.text} (cites {_ids(c.source_ids)}; judged unsupported: {reasons.get(c.index, NONE)})"
                for c in inp.claims
            ),
            "report",
        ),
        evidence=_evidence(inp.evidence),
        language=language(inp.language),
    )
    rewrites = [
        r.model_copy(update={"text": _only_known_citations(r.text, allowed[r.index]).strip()})
        for r in reply.rewrites
        if r.index in allowed
    ]
    return m.ReviseClaimsOutput(rewrites=rewrites, usage=usage)


async def critique(chat: Chat, inp: m.CritiqueInput) -> m.CritiqueOutput:
    v = inp.verification
    reply, usage = await chat.ask(
        "critique",
        **about(inp),
        report=untrusted(_cut(inp.report_markdown, 12000), "report"),
        verification=trusted(
            f"{v.claims} claims: {v.supported} supported, {v.partial} partly supported, "
            f"{v.unsupported} unsupported ({v.removed} removed, {v.revised} rewritten), {v.unverified} unverified"
        ),
        sources_count=inp.sources_count,
        steps=trusted(f"{inp.steps_completed} of {inp.steps_planned} planned steps researched"),
    )
    return _actionable(m.CritiqueOutput(**dict(reply), usage=usage))


#: Fewer words than this is no issue a writer can act on: a small model echoes its schema's words
#: ("Text", "High") as issues (SmolLM2-135M does), which would drive refinements about nothing.
ISSUE_MIN_WORDS = 4


#: What the reader is told of a rejection whose issues were all schema echoes.
UNNAMED_ISSUE = "The critic found the report incomplete without naming what is missing."


def _actionable(critique: m.CritiqueOutput) -> m.CritiqueOutput:
    """The critique with only the issues a reader can make sense of. A rejection whose issues
    were all echoes still stands (researching what is missing is what makes a small model's thin
    report whole), said in words of the engine's own rather than "Text" or "High"."""
    issues = [i for i in critique.issues if len(i.text.split()) >= ISSUE_MIN_WORDS]
    suggestion = critique.rewrite_suggestion
    if len(suggestion.split()) < ISSUE_MIN_WORDS:
        suggestion = ""
    if not critique.is_acceptable and not issues and not suggestion:
        issues = [CritiqueIssue(severity=IssueSeverity.MEDIUM, text=UNNAMED_ISSUE)]
    return critique.model_copy(update={"issues": issues, "rewrite_suggestion": suggestion})
