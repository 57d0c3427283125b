"""A model's judge is trusted only once it passes canaries made from the evidence at hand.

The judges here are plain functions standing where the model's activity (or `check`'s engine
call) stands: what they answer is what a careful model, an uncritical one and a contrary one would.
"""

from __future__ import annotations

from workflows.activity_models import (
    ClaimVerdict,
    JudgeVerdict,
    VerifyClaimsInput,
    VerifyClaimsOutput,
)
from workflows.kit import judging
from workflows.record import CheckedBy, Claim, Evidence, Source, Verdict

EVIDENCE = [
    Evidence(
        source_id=1,
        position=0,
        text="The queue holds at most 128 items. put() blocks while the queue is full, and "
        "get() blocks while it is empty.",
    ),
    Evidence(
        source_id=1,
        position=1,
        text="Use put_nowait() to add an item without blocking; it raises QueueFull when "
        "no free slot is available.",
    ),
]
SOURCES = [Source(id=1, url="file:///docs/queue.md", title="asyncio.Queue")]
CLAIMS = [
    Claim(
        text="A queue holds no more than 128 items, so a full one makes put() wait.", source_ids=[1]
    ),
    Claim(text="put_nowait() adds an item without blocking.", source_ids=[1]),
    Claim(text="Kafka partitions replicate across brokers.", source_ids=[1]),
]
ABOUT = {"query": "How does asyncio.Queue bound its size?"}


class Judge:
    """Answers every claim with `rule(claim, evidence)` and remembers what it was asked."""

    def __init__(self, rule):  # type: ignore[no-untyped-def]
        self.rule = rule
        self.asked: list[VerifyClaimsInput] = []

    async def __call__(self, inp: VerifyClaimsInput) -> VerifyClaimsOutput:
        self.asked.append(inp)
        said = " ".join(e.text for e in inp.evidence)
        return VerifyClaimsOutput(
            verdicts=[
                ClaimVerdict(index=c.index, verdict=self.rule(c.text, said), reason="read")
                for c in inp.claims
            ]
        )


def careful(text: str, said: str) -> JudgeVerdict:
    if text.rstrip(".") in said or "so a full one makes put() wait" in text:
        return JudgeVerdict.SUPPORTED
    return JudgeVerdict.UNSUPPORTED


def everything_supported(text: str, said: str) -> JudgeVerdict:
    return JudgeVerdict.SUPPORTED


def nothing_supported(text: str, said: str) -> JudgeVerdict:
    return JudgeVerdict.UNSUPPORTED


async def judged(ask: judging.JudgeCall | None) -> tuple[list[Claim], object]:
    return await judging.judge_claims(
        CLAIMS, lambda c: [e for e in EVIDENCE if e.source_id in c.source_ids], SOURCES, ABOUT, ask
    )


def test_canaries_are_a_quote_and_the_same_kind_of_sentence_changed() -> None:
    made = judging.canaries(EVIDENCE)
    kinds = [c.kind for c in made]
    assert kinds[0] == "quote" and made[0].text in EVIDENCE[0].text + EVIDENCE[1].text
    assert {"number", "name", "negation"} <= set(kinds) or len(kinds) == 4
    number = next(c for c in made if c.kind == "number")
    assert "128" not in number.text and "at most" in number.text
    assert judging.canaries(EVIDENCE) == made  # deterministic: replayed the same in a workflow


async def test_a_careful_judge_passes_its_canaries_and_decides_what_words_cannot() -> None:
    judge = Judge(careful)
    claims, calibration = await judged(judge)
    assert calibration is not None and calibration.trusted
    assert calibration.passed == calibration.canaries >= 3
    # the paraphrase, which the deterministic verifier calls partial at most, is the judge's call
    assert (claims[0].verdict, claims[0].checked_by) == (Verdict.SUPPORTED, CheckedBy.JUDGE)
    # it before it sinks the sentence; its verdict says who decided and what the words found
    assert (claims[2].verdict, claims[2].checked_by) == (Verdict.UNSUPPORTED, CheckedBy.JUDGE)
    assert "the word check found it unsupported" in claims[2].reason
    assert judging.checked_by(claims, calibration) is CheckedBy.JUDGE


async def test_before_the_patch_the_judge_never_saw_what_words_settled() -> None:
    judge = Judge(careful)
    claims, calibration = await judging.judge_claims(
        CLAIMS,
        lambda c: [e for e in EVIDENCE if e.source_id in c.source_ids],
        SOURCES,
        ABOUT,
        judge,
        final=False,
    )
    assert claims[2].verdict is Verdict.UNSUPPORTED and claims[2].checked_by is CheckedBy.LEXICAL
    asked = [c.text for call in judge.asked[1:] for c in call.claims]
    assert "Kafka" not in " ".join(asked)


async def test_a_trusted_judge_overrules_the_word_check_but_not_a_quote() -> None:
    """The judge's supported stands over a lexical unsupported (a paraphrase with a
    negation of its own), its unsupported over a lexical partial; a verbatim quote stays
    supported whatever it says."""
    evidence = [
        Evidence(
            source_id=1,
            position=0,
            text="An augmented assignment evaluates the target (which, unlike normal assignment "
            "statements, cannot be an unpacking) and the expression list. The queue holds at "
            "most 128 items, so a full one makes put() wait. Deep copy operations keep a memo "
            "dictionary of objects already copied during the current copying pass.",
        )
    ]
    quote = "The queue holds at most 128 items, so a full one makes put() wait."
    claims = [
        Claim(text=quote, source_ids=[1]),
        Claim(text="An augmented assignment's target can be an unpacking.", source_ids=[1]),
        Claim(text="Deep copies remember what they already copied in a memo.", source_ids=[1]),
    ]

    def contrary(text: str, said: str) -> JudgeVerdict:
        if text == quote:
            return JudgeVerdict.UNSUPPORTED
        if text == claims[2].text or text.rstrip(".") in said:
            return JudgeVerdict.SUPPORTED
        return JudgeVerdict.UNSUPPORTED

    judge = Judge(contrary)
    checked, calibration = await judging.judge_claims(
        claims, lambda c: evidence, SOURCES, ABOUT, judge
    )
    assert calibration is not None and calibration.trusted
    assert (checked[0].verdict, checked[0].reason) == (Verdict.SUPPORTED, judging.QUOTED)
    assert checked[1].verdict is Verdict.UNSUPPORTED and checked[1].checked_by is CheckedBy.JUDGE
    assert (checked[2].verdict, checked[2].checked_by) == (Verdict.SUPPORTED, CheckedBy.JUDGE)


async def test_an_uncritical_judge_fails_and_the_deterministic_verdicts_stand() -> None:
    judge = Judge(everything_supported)
    claims, calibration = await judged(judge)
    assert calibration is not None and not calibration.trusted
    assert any("changed number" in f for f in calibration.failures)
    assert len(judge.asked) == 1  # only its canaries: none of its verdicts counted
    assert [c.checked_by for c in claims] == [CheckedBy.LEXICAL] * 3
    assert claims[0].verdict is Verdict.PARTIAL  # what words alone can say of a paraphrase
    assert judging.checked_by(claims, calibration) is CheckedBy.LEXICAL


async def test_a_judge_that_calls_a_quote_unsupported_is_not_trusted_either() -> None:
    claims, calibration = await judged(Judge(nothing_supported))
    assert calibration is not None and not calibration.trusted
    assert "quoted word for word" in calibration.failures[0]
    assert claims[1].verdict is Verdict.SUPPORTED  # a quote, by the deterministic verifier


async def test_without_a_model_no_judge_is_asked_and_no_calibration_recorded() -> None:
    claims, calibration = await judged(None)
    assert calibration is None
    assert [c.verdict for c in claims] == [Verdict.PARTIAL, Verdict.SUPPORTED, Verdict.UNSUPPORTED]


async def test_the_calibration_is_asked_once_and_reused_for_later_claims() -> None:
    judge = Judge(careful)
    _, calibration = await judged(judge)
    calls = len(judge.asked)
    await judging.judge_claims(CLAIMS[:1], lambda c: EVIDENCE, SOURCES, ABOUT, judge, calibration)
    assert len(judge.asked) == calls + 1  # the claim's batch, no canaries again


async def test_a_judge_that_does_not_answer_is_not_trusted() -> None:
    async def silent(inp: VerifyClaimsInput) -> VerifyClaimsOutput | None:
        return None

    claims, calibration = await judged(silent)
    assert calibration is not None and not calibration.trusted
    assert calibration.failures == ["the judge did not answer its canaries"]
    assert all(c.checked_by is CheckedBy.LEXICAL for c in claims)
