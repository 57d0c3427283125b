"""Reports you can trust and keep: claim verification, the critic, the library write, follow-ups.

The research runs under the time-skipping server with activity doubles; the page, the
observation and the report are written here so each verdict is known in advance.
"""

from __future__ import annotations

from typing import Any

from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from tests.support.doubles import Script
from tests.workflow.test_workflow import offline_router_script, run_research
from workflows.activity_models import (
    ClaimRewrite,
    ClaimVerdict,
    JudgeVerdict,
    ObserveOutput,
    ReadPageOutput,
    ReviseClaimsInput,
    ReviseClaimsOutput,
    SaveResearchInput,
    SynthesizeOutput,
    VerifyClaimsInput,
    VerifyClaimsOutput,
)
from workflows.kit.citations import cited_ids
from workflows.models import (
    Depth,
    Message,
    ResearchRequest,
    Speaker,
    Stage,
    Verdict,
)

PAGE = (
    "Rome's aqueducts carried water from springs in the hills. Settling tanks let sand fall out of "
    "the water before it reached the city. Most channels ran underground, and the arcades seen on "
    "postcards were the exception. The Aqua Claudia was finished in 52 AD."
)
SUPPORTED = "Settling tanks let sand fall out of the water before it reached the city [1]."
PARTLY = "The Aqua Claudia, finished in 52 AD, was the largest aqueduct [1]."
INVENTED = "Rome's aqueducts were built with help from engineers of Carthage [1]."
NARROWED = "Most channels of Rome's aqueducts ran through limestone [1]."
NARROWED_REWRITE = "Most channels ran underground [1]."
UNRELATED = "Tokio schedules async tasks cooperatively on worker threads [1]."
REPORT = f"# Aqueducts\n\n{SUPPORTED} {PARTLY}\n\n- {INVENTED}\n- {NARROWED}\n- {UNRELATED}\n\n## Sources\n\n- [1] A page — file:///docs/aqueducts.md\n"


def judge(inp: VerifyClaimsInput) -> VerifyClaimsOutput:
    """A careful judge: what the evidence says word for word is supported (so it passes its
    canaries: a quote, and quotes with a number, a name or a negation changed)."""
    said = " ".join(e.text for e in inp.evidence)
    verdicts = []
    for claim in inp.claims:
        if "largest" in claim.text:
            verdict = JudgeVerdict.PARTIAL
        elif "Carthage" in claim.text or "limestone" in claim.text:
            verdict = JudgeVerdict.UNSUPPORTED
        elif claim.text.rstrip(".") in said:
            verdict = JudgeVerdict.SUPPORTED
        else:
            verdict = JudgeVerdict.UNSUPPORTED
        verdicts.append(
            ClaimVerdict(index=claim.index, verdict=verdict, reason=f"judged {verdict.value}")
        )
    return VerifyClaimsOutput(verdicts=verdicts)


def reviser(inp: ReviseClaimsInput) -> ReviseClaimsOutput:
    return ReviseClaimsOutput(
        rewrites=[
            ClaimRewrite(index=c.index, text=NARROWED_REWRITE if "limestone" in c.text else "")
            for c in inp.claims
        ]
    )


def aqueduct_script(**overrides: Any) -> Script:
    behaviour: dict[str, Any] = {
        "read_page": lambda req: ReadPageOutput(url=req.url, title="A page", text=PAGE),
        "observe": lambda inp: ObserveOutput(
            observation=f"{SUPPORTED} Most channels ran underground [1].", source_ids=[1]
        ),
        "synthesize": lambda inp: SynthesizeOutput(markdown=REPORT, engine="double"),
        "verify_claims": judge,
        "revise_claims": reviser,
    }
    return Script(**(behaviour | overrides))


QUESTION = ResearchRequest(
    query="How did Roman aqueducts keep their water clean?", depth=Depth.LIGHT
)


async def test_each_claim_is_verified_and_what_the_evidence_does_not_support_leaves_the_report(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = aqueduct_script()
    result, _ = await run_research(time_skipping_env.client, script, QUESTION)
    claims = {c.original or c.text: c for c in result.claims}
    report = result.report_markdown

    # The cheap lexical check found the citation pointing at an unrelated source; since the patch
    # judge-has-last-word, a trusted judge's word is final, so it is put to the judge before it
    # sinks the sentence, and the reason keeps what the word check found.
    tokio = claims[UNRELATED.removesuffix(" [1].") + "."]
    assert (tokio.verdict, tokio.checked_by, tokio.removed) == (
        Verdict.UNSUPPORTED,
        "judge",
        True,
    )
    assert "content words" in tokio.reason
    judged = [c.text for call in script.calls["verify_claims"] for c in call.claims]
    assert any("Tokio" in text for text in judged)
    # The judge's unsupported verdict, not rescued by a rewrite: removed from the report, kept in claims.
    carthage = claims[INVENTED.removesuffix(" [1].") + "."]
    assert (carthage.verdict, carthage.checked_by, carthage.removed) == (
        Verdict.UNSUPPORTED,
        "judge",
        True,
    )
    assert "Carthage" not in report and "Tokio" not in report
    # Rewritten once, then re-verified: the narrowed sentence stands in the report.
    narrowed = claims[NARROWED.removesuffix(" [1].") + "."]
    assert (
        narrowed.text == "Most channels ran underground." and narrowed.verdict is Verdict.SUPPORTED
    )
    assert NARROWED_REWRITE in report and "limestone" not in report
    # Partly supported: kept, and marked as such.
    assert "*(partly supported)*" in report and "largest" in report
    assert claims[SUPPORTED.removesuffix(" [1].") + "."].verdict is Verdict.SUPPORTED

    summary = result.verification
    assert summary is not None and summary.method == "lexical+judge"
    assert (summary.claims, summary.supported, summary.partial, summary.unsupported) == (5, 2, 1, 2)
    assert (summary.removed, summary.revised, summary.share_supported) == (2, 1, 0.4)
    assert report.rstrip().endswith("*") and "Verification:" in report.splitlines()[-1]
    assert result.critique is not None and result.critique.quality == 0.8
    assert set(cited_ids(report)) <= {s.id for s in result.sources}


async def test_the_revision_is_bounded_a_rewrite_is_checked_once_and_never_rewritten_again(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    def harsh(inp: VerifyClaimsInput) -> VerifyClaimsOutput:
        return VerifyClaimsOutput(
            verdicts=[
                ClaimVerdict(index=c.index, verdict=JudgeVerdict.UNSUPPORTED, reason="no")
                for c in inp.claims
            ]
        )

    def stubborn(inp: ReviseClaimsInput) -> ReviseClaimsOutput:
        return ReviseClaimsOutput(
            rewrites=[ClaimRewrite(index=c.index, text=NARROWED_REWRITE) for c in inp.claims]
        )

    script = aqueduct_script(verify_claims=harsh, revise_claims=stubborn)
    result, _ = await run_research(time_skipping_env.client, script, QUESTION)

    assert len(script.calls["revise_claims"]) == 1
    # A judge that calls a sentence quoted word for word unsupported fails its canaries (the one
    # call it gets): the deterministic verifier judges the claims and, once, their rewrites.
    assert len(script.calls["verify_claims"]) == 1
    assert result.verification is not None and result.verification.checked_by == "lexical"
    kept = {c.text: c.verdict for c in result.claims if not c.removed}
    assert kept[SUPPORTED.removesuffix(" [1].") + "."] is Verdict.SUPPORTED  # a quote
    assert kept[NARROWED_REWRITE.removesuffix(" [1].") + "."] is Verdict.SUPPORTED  # a rewrite
    assert not any(w in text for text in kept for w in ("Carthage", "Tokio"))
    assert "Carthage" not in result.report_markdown and "Tokio" not in result.report_markdown
    # four of its five words are read, not "limestone": kept, marked, never called supported
    assert "limestone [1] *(partly supported)*." in result.report_markdown


async def test_verification_can_be_turned_off_for_speed(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = aqueduct_script()
    result, _ = await run_research(
        time_skipping_env.client, script, QUESTION.model_copy(update={"verify": False})
    )

    assert "verify_claims" not in script.calls and "critique" not in script.calls
    assert "Carthage" in result.report_markdown
    assert result.verification is not None and not result.verification.enabled
    assert result.critique is None
    assert "Claims were not verified (verification was turned off)" in result.report_markdown


async def test_the_finished_research_is_saved_once_with_its_result(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = aqueduct_script()
    result, _ = await run_research(time_skipping_env.client, script, QUESTION)

    [record] = script.calls["save_research"]
    assert isinstance(record, SaveResearchInput)
    assert record.result == result and record.workflow_id.startswith("wf-")
    assert record.finished_at >= record.started_at


async def test_a_library_that_cannot_be_written_costs_the_stored_copy_not_the_research(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    def broken(record: SaveResearchInput) -> Any:
        raise ApplicationError(
            "unknown database dialect", type="LibraryConfigError", non_retryable=True
        )

    result, _ = await run_research(
        time_skipping_env.client, aqueduct_script(save_research=broken), QUESTION
    )

    assert result.outcome is Stage.COMPLETED
    assert any("could not be saved to the research library" in note for note in result.notes)


EARLIER_REPORT = (
    "# Rust lifetimes\n\n## Summary\n\nLifetimes name how long references are valid [1].\n"
)
FOLLOW_UP_HISTORY = [
    Message(role=Speaker.USER, content="How do lifetimes work in Rust?"),
    Message(role=Speaker.ASSISTANT, content=EARLIER_REPORT),
]


async def test_a_follow_up_pronoun_is_resolved_by_the_earlier_research_not_asked_back(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = offline_router_script()
    follow_up = ResearchRequest(
        query="What are its limitations?", history=FOLLOW_UP_HISTORY, follow_up_of="research-1"
    )
    result, _ = await run_research(time_skipping_env.client, script, follow_up)

    assert Stage.CLARIFYING not in result.stage_history
    [routed] = script.calls["route"]
    assert [m.content for m in routed.messages][:2] == [m.content for m in FOLLOW_UP_HISTORY]
    assert result.follow_up_of == "research-1"
    # What the research is about includes what the pronoun stands for.
    assert "How do lifetimes work in Rust?" in script.calls["plan"][0].follows_up

    alone = offline_router_script()
    asked, _ = await run_research(
        time_skipping_env.client,
        alone,
        ResearchRequest(query="What are its limitations?", clarification_timeout_s=60),
    )
    assert Stage.CLARIFYING in asked.stage_history


LONG_PAGE = (
    "Rome's aqueducts carried water from springs in the hills.\n\n"
    "Most channels ran underground, and the arcades seen on postcards were the exception.\n\n"
    "Water commissioners inspected the channels every spring and cleared the limescale that "
    "narrowed them."
)
PARAPHRASE = "Every spring, commissioners checked the channels and removed the limescale [1]."


async def test_a_sentence_is_checked_against_what_was_read_not_only_the_observations_excerpt(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """The observation kept one paragraph of the page; the report paraphrases
    another paragraph the step read. The judge is shown that paragraph and can support it."""

    def reads_it(inp: VerifyClaimsInput) -> VerifyClaimsOutput:
        said = " ".join(e.text for e in inp.evidence)
        verdicts = []
        for claim in inp.claims:
            quoted = claim.text.rstrip(".") in said
            backed = "commissioners checked" in claim.text and "limescale" in said
            verdict = JudgeVerdict.SUPPORTED if quoted or backed else JudgeVerdict.UNSUPPORTED
            verdicts.append(ClaimVerdict(index=claim.index, verdict=verdict, reason="read"))
        return VerifyClaimsOutput(verdicts=verdicts)

    script = aqueduct_script(
        read_page=lambda req: ReadPageOutput(url=req.url, title="A page", text=LONG_PAGE),
        observe=lambda inp: ObserveOutput(
            observation="Rome's aqueducts carried water from springs in the hills [1].",
            source_ids=[1],
        ),
        synthesize=lambda inp: SynthesizeOutput(
            markdown=f"# Aqueducts\n\n{PARAPHRASE}\n", engine="openai:test"
        ),
        verify_claims=reads_it,
    )
    result, _ = await run_research(time_skipping_env.client, script, QUESTION)

    assert all("limescale" not in e.text for e in result.evidence)  # not kept for the step
    [claim] = result.claims
    assert (claim.verdict, claim.checked_by) == (Verdict.SUPPORTED, "judge")
    assert PARAPHRASE in result.report_markdown
    assert result.verification is not None and result.verification.checked_by == "judge"
    calibration = result.stats.judge_calibration
    assert calibration is not None and calibration.trusted
