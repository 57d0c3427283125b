"""The verdict on each cited claim: the deterministic verifier's first, a model's judge only once
it has shown it can judge.

Why calibrate: a judge that calls everything supported was believed for every claim the word
overlap pre-check let through, and nothing noticed. So before any of a model's verdicts counts, the
model judges canaries made from the evidence at hand, mixed with nothing else: a sentence of the
evidence quoted word for word (it must be supported) and the same kind of sentence with a number,
a code name, a negation or an opposite word changed (none may be supported). A judge that gets one
wrong is not trusted: the deterministic verdicts (workflows/text/alignment.py) stand, and the summary
says who checked (`checked_by`) and why.

The same code checks a research's report (workflows/checks/checking.py, inside the workflow: `ask` is an
activity call) and any text given to `check` (starter: `ask` calls the engine directly), so the
figures measured for one hold for the other. Pure apart from `ask`: deterministic, sandbox-safe.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from workflows.activity_models import ClaimCheck, VerifyClaimsInput, VerifyClaimsOutput
from workflows.record import Calibration, CheckedBy, Claim, Evidence, Source, Verdict
from workflows.text import alignment, claim_parts, contradiction

#: The judge: one batch of claims with their evidence in, verdicts out (None: it did not answer).
JudgeCall = Callable[[VerifyClaimsInput], Awaitable[VerifyClaimsOutput | None]]
#: Claims per judge call: enough to batch, few enough that one verdict list stays short.
CLAIMS_PER_JUDGE = 12
#: Evidence sent with one batch, per cited source: the paragraphs of what was read that matter
#: most to the batch's claims, up to this many characters.
JUDGE_EVIDENCE_CHARS = 4000
#: A canary sentence: long enough to say something, short enough to be one statement.
CANARY_WORDS = (6, 45)
_AUXILIARIES = re.compile(
    r"\b(is|are|was|were|can|could|does|do|did|will|would|must|should|may|has|have)\b( not\b)?"
)


@dataclass(frozen=True)
class Canary:
    """A claim whose right verdict is known: a quote, or a quote with one thing changed."""

    text: str
    evidence: Evidence
    kind: str  # "quote", "number", "name", "negation", "opposite"

    @property
    def must_hold(self) -> bool:
        return self.kind == "quote"


# --- the deterministic verdict ---------------------------------------------------------------------


def finding_of(claim: Claim, evidence: list[Evidence], sources: list[Source]) -> alignment.Finding:
    """The deterministic verifier's finding on the claim, against the evidence it cites."""
    titles = [s.title for s in sources if s.id in claim.source_ids]
    return alignment.verdict(claim.text, [e.text for e in evidence], titles)


def deterministic(claim: Claim, finding: alignment.Finding) -> Claim:
    """The claim with the deterministic verifier's verdict and reason."""
    return claim.model_copy(
        update={
            "verdict": Verdict(finding.verdict),
            "reason": finding.reason[:500],
            "checked_by": CheckedBy.LEXICAL,
        }
    )


# --- canaries ---------------------------------------------------------------------------------------


def canaries(evidence: list[Evidence]) -> list[Canary]:
    """One quote and up to three changed sentences, made deterministically from `evidence` (the
    first sentences that allow each change), each from another sentence where possible."""
    sentences = [
        (unit.text, item)
        for item in evidence
        for unit in claim_parts.units([item.text])
        if CANARY_WORDS[0] <= len(unit.text.split()) <= CANARY_WORDS[1] and "=" not in unit.text
    ]
    if not sentences:
        return []
    every_name: dict[str, str] = {}
    for item in evidence:
        every_name.update(claim_parts.code_names(item.text))
    made = [Canary(sentences[0][0], sentences[0][1], "quote")]
    used = {sentences[0][0]}
    for kind, change in (
        ("number", _change_number),
        ("name", lambda t: _swap_name(t, every_name)),
        ("opposite", _swap_opposite),
        ("negation", _flip_negation),
    ):
        ordered = [s for s in sentences if s[0] not in used] + [
            s for s in sentences if s[0] in used
        ]
        for text, item in ordered:
            changed = change(text)
            if changed and changed != text:
                made.append(Canary(changed, item, kind))
                used.add(text)
                break
        if len(made) == 4:
            break
    return made


def _change_number(text: str) -> str | None:
    match = re.search(r"(?<![\w.,*])(\d+)(?![\w.,]\d)", text)
    if match is None:
        return None
    value = int(match.group(1))
    return text[: match.start()] + str(value * 2 + 1) + text[match.end() :]


def _swap_name(text: str, every_name: dict[str, str]) -> str | None:
    here = claim_parts.code_names(text)
    others = sorted(v for k, v in every_name.items() if k not in here and len(k) > 2)
    for key, shown in here.items():
        if others and len(key) > 2:
            return text.replace(shown, others[0], 1)
    return None


def _swap_opposite(text: str) -> str | None:
    for match in re.finditer(r"[A-Za-z-]+", text):
        word = match.group(0)
        opposite = contradiction.opposite_of(word.lower())
        if opposite:
            return text[: match.start()] + opposite + text[match.end() :]
    return None


def _flip_negation(text: str) -> str | None:
    if re.search(r"\bcannot\b", text):
        return re.sub(r"\bcannot\b", "can", text, count=1)
    match = _AUXILIARIES.search(text)
    if match is None:
        return None
    if match.group(2):
        return text[: match.end(1)] + text[match.end() :]
    return text[: match.end(1)] + " not" + text[match.end(1) :]


async def calibrate(
    made: list[Canary], about: dict[str, Any], sources: list[Source], ask: JudgeCall
) -> Calibration:
    """Ask the judge about the canaries alone; trusted only if it gets every one right."""
    if len(made) < 2:
        return Calibration(
            trusted=False,
            failures=["the evidence held no sentence to make a changed canary from"],
        )
    answer = await ask(
        VerifyClaimsInput(
            **about,
            claims=[
                ClaimCheck(index=i, text=c.text, source_ids=[c.evidence.source_id])
                for i, c in enumerate(made)
            ],
            evidence=_unique([c.evidence for c in made]),
            sources=[s for s in sources if any(s.id == c.evidence.source_id for c in made)],
        )
    )
    if answer is None:
        return Calibration(
            trusted=False, canaries=len(made), failures=["the judge did not answer its canaries"]
        )
    said = {v.index: v.verdict.value for v in answer.verdicts}
    failures = []
    for i, canary in enumerate(made):
        verdict = said.get(i)
        if canary.must_hold and verdict != "supported":
            failures.append(f"called a sentence quoted word for word {verdict or 'nothing'}")
        elif not canary.must_hold and verdict in ("supported", None):
            what = f"a changed {canary.kind}" if canary.kind != "negation" else "a negated sentence"
            failures.append(f"called {what} {verdict or 'nothing'}: {canary.text[:160]}")
    return Calibration(
        trusted=not failures,
        canaries=len(made),
        passed=len(made) - len(failures),
        failures=failures,
    )


# --- judging the claims -------------------------------------------------------------------------------


async def judge_claims(
    claims: list[Claim],
    evidence_for: Callable[[Claim], list[Evidence]],
    sources: list[Source],
    about: dict[str, Any],
    ask: JudgeCall | None,
    calibration: Calibration | None = None,
    *,
    final: bool = True,
) -> tuple[list[Claim], Calibration | None]:
    """Every claim's verdict. Without a judge, or with one that fails its canaries, the
    deterministic verdicts stand. With a trusted judge, `final`: the judge is asked
    about every claim with evidence and its word is final, but a verbatim quote stays supported
    whatever it says (the reason says so, `checked_by` stays lexical): its
    supported / unsupported stands over the lexical `partial`, and a lexical `unsupported` (a
    negation, a number, a name the cited text lacks) is put to it before it sinks a sentence.
    Not `final` (a research recorded before patch JUDGE_HAS_LAST_WORD): the judge decides only
    what the deterministic verifier cannot settle for certain. Returns the claims and the
    calibration (asked once: pass the one returned before to judge rewrites later)."""
    evidence = [evidence_for(c) for c in claims]
    findings = [finding_of(c, e, sources) for c, e in zip(claims, evidence, strict=True)]
    checked = [deterministic(c, f) for c, f in zip(claims, findings, strict=True)]
    if final:
        for i, (claim, items) in enumerate(zip(claims, evidence, strict=True)):
            if findings[i].verdict == "supported" and quoted(claim.text, items):
                checked[i].reason = QUOTED
    if ask is None or not claims:
        return checked, calibration
    if final:
        undecided = [i for i, e in enumerate(evidence) if e]
    else:
        undecided = [i for i, f in enumerate(findings) if not f.certain]
    if not undecided:
        return checked, calibration
    if calibration is None:
        pool = _unique([e for i in undecided for e in evidence[i]])
        calibration = await calibrate(canaries(pool), about, sources, ask)
    if not calibration.trusted:
        return checked, calibration
    batches = [
        undecided[k : k + CLAIMS_PER_JUDGE] for k in range(0, len(undecided), CLAIMS_PER_JUDGE)
    ]
    answers = await asyncio.gather(
        *(ask(_batch(claims, b, evidence, sources, about)) for b in batches)
    )
    return _with_judged(checked, claims, undecided, answers), calibration


def _with_judged(
    checked: list[Claim],
    claims: list[Claim],
    undecided: list[int],
    answers: Iterable[VerifyClaimsOutput | None],
) -> list[Claim]:
    """The claims with the judge's verdicts on those it was asked about. An answer the judge did
    not give (a failed call, or one the engine settled lexically) leaves the deterministic
    verdicts; a quote stays supported, whatever the judge says."""
    for answer in answers:
        if answer is None or answer.checked_by is CheckedBy.LEXICAL:
            continue
        for verdict in answer.verdicts:
            if verdict.index not in undecided:
                continue
            if checked[verdict.index].reason == QUOTED and verdict.verdict.value != "supported":
                continue
            checked[verdict.index] = claims[verdict.index].model_copy(
                update={
                    "verdict": Verdict(verdict.verdict.value),
                    "reason": _judged_reason(verdict.reason, checked[verdict.index]),
                    "checked_by": CheckedBy.JUDGE,
                }
            )
    return checked


#: The reason a verbatim quote is supported, whoever else is asked.
QUOTED = "quoted word for word from the evidence it cites: a quote is supported"


def quoted(claim: str, evidence: list[Evidence]) -> bool:
    """The claim's words, in order, stand in one cited paragraph (case, spacing and punctuation
    aside): a verbatim quote, which no judge overrules."""
    needle = _folded(claim)
    return len(needle.split()) >= 4 and any(needle in _folded(e.text) for e in evidence)


def _folded(text: str) -> str:
    return " " + " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split()) + " "


def _judged_reason(said: str, lexical: Claim) -> str:
    """The judge's reason, and what the word check had found when the judge overrules it, so
    the record says who decided and against what."""
    said = " ".join(said.split()) or "the judge gave no reason"
    if lexical.verdict is Verdict.SUPPORTED or not lexical.reason:
        return said[:500]
    return f"{said} (the judge decided; the word check found it {lexical.verdict.value}: {lexical.reason})"[
        :500
    ]


def _batch(
    claims: list[Claim],
    which: list[int],
    evidence: list[list[Evidence]],
    sources: list[Source],
    about: dict[str, Any],
) -> VerifyClaimsInput:
    cited = {n for i in which for n in claims[i].source_ids}
    words = set().union(*(claim_parts.terms(claims[i].text) for i in which))
    pool = _unique([e for i in which for e in evidence[i]])
    return VerifyClaimsInput(
        **about,
        claims=[
            ClaimCheck(index=i, text=claims[i].text, source_ids=claims[i].source_ids) for i in which
        ],
        evidence=_bounded(pool, words),
        sources=[s for s in sources if s.id in cited],
    )


def _bounded(evidence: list[Evidence], words: set[str]) -> list[Evidence]:
    """Per source, the paragraphs sharing most words with the batch's claims, up to
    JUDGE_EVIDENCE_CHARS, in their order in the source."""
    kept: list[Evidence] = []
    for source_id in dict.fromkeys(e.source_id for e in evidence):
        mine = [e for e in evidence if e.source_id == source_id]
        ranked = sorted(mine, key=lambda e: -len(claim_parts.terms(e.text) & words))
        room, chosen = JUDGE_EVIDENCE_CHARS, list[Evidence]()
        for item in ranked:
            if len(item.text) <= room or not chosen:
                chosen.append(item)
                room -= len(item.text)
        kept += [e for e in mine if e in chosen]
    return kept


def _unique(evidence: list[Evidence]) -> list[Evidence]:
    seen: set[tuple[int, str]] = set()
    kept = []
    for item in evidence:
        key = (item.source_id, item.text)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def checked_by(claims: list[Claim], calibration: Calibration | None) -> CheckedBy:
    """Who the summary names: the judge when a trusted judge decided at least one verdict."""
    if calibration is not None and calibration.trusted:
        if any(c.checked_by is CheckedBy.JUDGE for c in claims):
            return CheckedBy.JUDGE
    return CheckedBy.LEXICAL
