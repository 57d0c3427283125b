"""The verifier's hand on what a model writes (activities/openai_engine/grounding.py), through the
real engine against a scripted endpoint: what a small model writes that its sources do not hold
never reaches a reader, and what a good model writes is kept as it wrote it."""

from __future__ import annotations

import re
from typing import Any

from activities.openai_engine import OpenAIEngine
from tests.activities.test_openai_engine import (  # noqa: F401 - fixtures
    FakeLLM,
    clean_env,
    completion,
    engine,
    llm,
)
from tests.support.other_notes import LIGHTHOUSES
from workflows.activity_models import (
    ClaimCheck,
    ObserveInput,
    PlanInput,
    SynthesizeInput,
    VerifyClaimsInput,
    WriteQueriesInput,
)
from workflows.models import Evidence, Passage, Plan, PlanStep, Source

OWNERSHIP = (
    "Every value in a Rust program has exactly one owner. When the owner goes out of scope, "
    "the value is dropped and its memory is freed."
)
MOVES = "Assigning a String to another variable moves ownership; the first variable can no longer be used."
PASSAGES = [
    Passage(source_id=1, title="Ownership", url="file:///notes/ownership.md", text=OWNERSHIP),
    Passage(source_id=2, title="Moves", url="file:///notes/moves.md", text=MOVES),
]
QUESTION = "How does ownership work in Rust?"


def observed(text: str, ids: list[int]) -> Any:
    return completion(
        {
            "observation": text,
            "source_ids": ids,
            "needs_more": False,
            "suggested_agent": None,
            "suggested_query": None,
        }
    )


async def test_an_observation_the_sources_bear_out_is_kept_as_the_model_wrote_it(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    text = "Each value in Rust has exactly one owner [1]. Assigning a String moves ownership [2]."
    llm.replies = [observed(text, [1, 2])]
    out = await engine.observe(
        ObserveInput(query=QUESTION, step=PlanStep(title="Ownership rules"), passages=PASSAGES)
    )
    assert out.observation == text


async def test_a_small_models_observation_is_replaced_by_the_sources_own_sentences(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    llm.replies = [
        observed("{2} is a rule that prevents data being borrowed on assignment [1].", [2])
    ]
    out = await engine.observe(
        ObserveInput(query=QUESTION, step=PlanStep(title="Ownership moves"), passages=PASSAGES)
    )
    assert "prevents data being borrowed" not in out.observation
    assert "moves ownership" in out.observation and "[2]" in out.observation
    assert out.source_ids[0] == 2  # its chosen source first


async def test_a_report_of_words_the_sources_do_not_hold_is_quoted_from_them_and_says_so(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    llm.replies = [
        completion(
            {
                "markdown": "# Report\n\nRust is a language of spaceships [1].",
                "claims": [{"text": "Rust is a language of spaceships.", "source_ids": [1]}],
            }
        )
    ]
    evidence = [
        Evidence(source_id=1, position=0, text=OWNERSHIP),
        Evidence(source_id=2, position=0, text=MOVES),
    ]
    sources = [Source(id=p.source_id, url=p.url, title=p.title) for p in PASSAGES]
    plan_step = PlanStep(
        title="Ownership rules",
        observation="Every value in a Rust program has exactly one owner [1].",
        source_ids=[1],
        status="completed",
    )

    out = await engine.synthesize(
        SynthesizeInput(
            query=QUESTION,
            plan=Plan(title="Ownership", steps=[plan_step]),
            sources=sources,
            evidence=evidence,
        )
    )
    assert "spaceships" not in out.markdown
    assert "exactly one owner [1]" in out.markdown
    assert "quoted from those sources" in out.markdown
    assert "no LLM" not in out.markdown  # the offline engine's own footer does not apply
    assert out.claims and all(c.source_ids for c in out.claims)


async def test_a_plan_of_schema_words_is_made_up_by_the_engines_planner(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    llm.replies = [
        completion(
            {
                "title": "StepDraft",
                "thought": "t",
                "steps": [
                    {
                        "title": "StepDraft",
                        "description": "ownership in Rust",
                        "queries": ["$defs"],
                    },
                    {"title": "Title", "description": "d", "queries": []},
                ],
            }
        )
    ]
    plan = await engine.plan(
        PlanInput(
            query=QUESTION,
            background="",
            completed_steps=[],
            min_steps=1,
            max_steps=3,
            iteration=1,
        )
    )
    titles = [s.title for s in plan.steps]
    assert plan.title != "StepDraft" and "StepDraft" not in titles and "Title" not in titles
    assert titles and all("ownership" in t.lower() or "rust" in t.lower() for t in titles)


async def test_queries_about_nothing_asked_are_replaced_and_sensible_ones_kept(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    llm.replies = [
        completion({"queries": ["$defs/Steps", "Title"]}),
        completion({"queries": ["rust ownership rules", "borrow checker"]}),
    ]
    replaced = await engine.write_queries(WriteQueriesInput(query=QUESTION, max_queries=2))
    kept = await engine.write_queries(WriteQueriesInput(query=QUESTION, max_queries=2))
    assert "$defs/Steps" not in replaced.queries and replaced.queries
    assert kept.queries == ["rust ownership rules", "borrow checker"]  # one is on topic: all kept


async def test_a_judge_never_sinks_a_claim_that_stands_word_for_word_in_its_source(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    llm.replies = [
        completion(
            {
                "verdicts": [
                    {"index": 0, "verdict": "unsupported", "reason": "no"},
                    {"index": 1, "verdict": "unsupported", "reason": "made up"},
                ]
            }
        )
    ]
    out = await engine.verify_claims(
        VerifyClaimsInput(
            query=QUESTION,
            claims=[
                ClaimCheck(
                    index=0,
                    text="Every value in a Rust program has exactly one owner.",
                    source_ids=[1],
                ),
                ClaimCheck(index=1, text="Rust values live forever.", source_ids=[1]),
            ],
            evidence=[Evidence(source_id=1, position=0, text=OWNERSHIP)],
            sources=[],
        )
    )
    verdicts = {v.index: v.verdict.value for v in out.verdicts}
    assert verdicts == {0: "supported", 1: "unsupported"}


async def test_a_capable_models_report_in_its_own_words_is_kept_as_it_wrote_it(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    """No sentence stands word for word in the sources (the deterministic verifier calls
    each at most partial), but every one paraphrases what it cites: the model's words reach the
    reader, and the calibrated judge decides each sentence later."""
    markdown = (
        "# Ownership\n\nIn a Rust program every value has one single owner [1]. "
        "Once its owner leaves scope, the value is dropped and the memory freed [1]. "
        "Giving a String to another variable hands its ownership over, and the first "
        "variable can no longer be used [2]."
    )
    llm.replies = [
        completion(
            {
                "markdown": markdown,
                "claims": [
                    {
                        "text": "In a Rust program every value has one single owner.",
                        "source_ids": [1],
                    },
                    {
                        "text": "Once its owner leaves scope, the value is dropped and the memory freed.",
                        "source_ids": [1],
                    },
                    {
                        "text": "Giving a String to another variable hands its ownership over, "
                        "and the first variable can no longer be used.",
                        "source_ids": [2],
                    },
                ],
            }
        )
    ]
    evidence = [
        Evidence(source_id=1, position=0, text=OWNERSHIP),
        Evidence(source_id=2, position=0, text=MOVES),
    ]
    sources = [Source(id=p.source_id, url=p.url, title=p.title) for p in PASSAGES]
    step = PlanStep(
        title="Ownership rules", observation=OWNERSHIP + " [1]", source_ids=[1], status="completed"
    )
    out = await engine.synthesize(
        SynthesizeInput(
            query=QUESTION,
            plan=Plan(title="Ownership", steps=[step]),
            sources=sources,
            evidence=evidence,
        )
    )
    assert "one single owner [1]" in out.markdown
    assert "quoted from those sources" not in out.markdown


#: A step's sources as a small model meets them: one on the step, one beside it (read for the same
#: search) whose sentences name the question's language but not its subject.
ON_STEP = (
    "Every value in a Rust program has exactly one owner at a time. "
    "When the owner goes out of scope, Rust drops the value and frees its memory. "
    "Assigning a heap-backed value to another variable moves ownership, and the old variable "
    "can no longer be used."
)
BESIDE = (
    "Reviewers in Rust projects often look for clones added only to silence a borrow error. "
    "Some programs that are safe are still rejected by the borrow checker today."
)
STEP_SOURCES = [
    Passage(source_id=3, title="Ownership", url="file:///notes/ownership.md", text=ON_STEP),
    Passage(source_id=4, title="Limits", url="file:///notes/limits.md", text=BESIDE),
]
OWNERSHIP_STEP = PlanStep(title="How does ownership work in Rust")


async def test_a_copied_sentence_about_something_else_gives_way_to_the_steps_own(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    """SmolLM2 copied a sentence that is there, but not about the step: every word of it stands
    in its source, and a report written from it answered nothing asked."""
    copied = (
        "Reviewers in Rust projects often look for clones added only to silence a borrow error [4]."
    )
    llm.replies = [observed(copied, [4])]
    out = await engine.observe(
        ObserveInput(query=QUESTION, step=OWNERSHIP_STEP, passages=STEP_SOURCES)
    )
    assert "Reviewers" not in out.observation
    assert "exactly one owner at a time [3]" in out.observation
    assert out.source_ids == [3]


async def test_one_copied_sentence_on_the_step_is_joined_by_the_others_its_sources_hold(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    copied = "When the owner goes out of scope, Rust drops the value and frees its memory [3]."
    llm.replies = [observed(copied, [3])]
    out = await engine.observe(
        ObserveInput(query=QUESTION, step=OWNERSHIP_STEP, passages=STEP_SOURCES)
    )
    assert out.observation.startswith(copied[:-4])  # the model's choice first
    assert "exactly one owner at a time [3]" in out.observation
    assert len(re.findall(r"\[3\]", out.observation)) == 2  # joined, not replaced
    assert "Reviewers" not in out.observation


async def test_words_of_its_own_citing_a_source_off_the_step_are_quoted_from_the_steps_sources(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    llm.replies = [observed("Ownership is a kind of garbage collector for borrows [4].", [4])]
    out = await engine.observe(
        ObserveInput(query=QUESTION, step=OWNERSHIP_STEP, passages=STEP_SOURCES)
    )
    assert "garbage collector" not in out.observation
    assert "[3]" in out.observation and 3 in out.source_ids


async def test_a_model_that_chose_the_weakest_source_does_not_thin_the_step_to_it(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    """SmolLM2, observing "How did the Fresnel lens change lighthouse range?", wrote words of its
    own and chose the page on a light's range: quoted from that page alone, the observation was
    one sentence, though the Fresnel lens's own page, read by the same step, held the answer."""
    passages = [
        Passage(
            source_id=n, title=text.splitlines()[0].lstrip("# "), url=f"file:///{name}", text=text
        )
        for n, (name, text) in enumerate(LIGHTHOUSES.items(), start=1)
    ]
    by_name = {p.url.rsplit("/", 1)[1]: p.source_id for p in passages}
    llm.replies = [
        observed("The lens made the light brighter and the range longer.", [by_name["range.md"]])
    ]
    question = "How did the Fresnel lens change lighthouse range?"
    out = await engine.observe(
        ObserveInput(query=question, step=PlanStep(title=question), passages=passages)
    )
    assert out.source_ids[0] == by_name["range.md"]  # the model's choice leads
    fresnel = by_name["fresnel-lens.md"]
    assert fresnel in out.source_ids
    assert "rings of prisms" in out.observation or "Cordouan" in out.observation
    assert len(re.findall(r"\[\d+\]", out.observation)) >= 3


async def test_one_faithful_sentence_of_its_own_is_kept_and_joined_by_what_else_the_step_read(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    """A small model's one faithful sentence where the step's pages held more: the report is
    written from observations, and thin ones make a thin report."""
    own = "Each value in a Rust program has one owner at any time [3]."
    llm.replies = [observed(own, [3])]
    out = await engine.observe(
        ObserveInput(query=QUESTION, step=OWNERSHIP_STEP, passages=STEP_SOURCES)
    )
    assert out.observation.startswith(own)  # the model's words, as it wrote them
    assert "drops the value and frees its memory [3]" in out.observation
    assert "exactly one owner at a time" not in out.observation  # what it said, not said twice
    assert "Reviewers" not in out.observation
    assert out.source_ids == [3]


async def test_an_observation_cut_off_twice_is_the_steps_sentences_quoted_and_said_to_be_so(
    llm: FakeLLM, engine: OpenAIEngine
) -> None:
    """SmolLM2 on a busy machine ran out of reply tokens twice observing "How long is a year on
    Mars": the workflow's fallback said "could not write an observation" though mars.md was read."""
    llm.replies = [
        completion('{"observation": "Every value in a Rust', finish_reason="length"),
        completion(" program has exactly one owner at a", finish_reason="length"),
    ]
    out = await engine.observe(
        ObserveInput(query=QUESTION, step=OWNERSHIP_STEP, passages=STEP_SOURCES)
    )
    assert "exactly one owner at a time [3]" in out.observation
    assert out.source_ids == [3]
    assert out.usage.fell_back and "token" in out.usage.fell_back  # not the model's answer
