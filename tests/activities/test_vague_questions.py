"""Vague questions are asked back by principle, not by the dev set's sentences.

Two principles (activities/offline_engine/vagueness.py): a question whose only subject is a pronoun
or demonstrative with nothing earlier to resolve it, and an evaluation or comparison with nothing to
measure it against. The questions below are written for this test, in each kind, beside clear
questions of the same shapes that must go straight to research.
"""

from __future__ import annotations

import pytest

from activities.offline_engine import OfflineEngine
from workflows.activity_models import ClarifyInput, RouteInput
from workflows.models import Message, RoutingDecision, Speaker

#: The only subject is a pronoun or a demonstrative, and nothing before it names one.
POINTING_NOWHERE = [
    "Is it thread-safe?",
    "Does it work on Windows?",
    "How do I install it?",
    "Why is this so slow?",
    "Can these be nested?",
    "What does that one return?",
    "Should I use them in production?",
    "How do they differ?",
    "Is that still supported in the latest release?",
    "When was it deprecated?",
    "Who maintains it?",
    "How do I turn this off?",
    "Where are those stored?",
    "Can they run in parallel?",
    "Can I take it back if I find a serious bug afterwards?",
    "Is it safe to use?",
]
#: A judgment ("faster", "safe", "better") with nothing to measure it against: than what, for what?
MEASURED_BY_NOTHING = [
    "Which is safer?",
    "Which approach is more efficient?",
    "Is the new way cleaner?",
    "Which is more idiomatic?",
    "Which of the two is preferable?",
    "Which is easier?",
    "Is Rust faster?",
    "Is Python safe?",
    "Are iterators quicker?",
    "Which is the safer choice?",
    "Is async more efficient?",
    "How much faster is release mode?",
    "Are green threads cheaper?",
    "Is the borrow checker stricter?",
    "Would a linked list be simpler?",
]
#: Both at once: the pronoun rule names the missing subject first.
BOTH = [
    "Is it faster?",
    "Is this better?",
    "Would that be quicker?",
    "Is it more secure?",
    "Is that slower?",
    "Is it worth it?",
    "Is this good enough?",
    "How much faster is it?",
    "Is it cheaper?",
]
#: Same shapes, with a subject and something to measure against: researched at once.
CLEAR = [
    "Is Rust's HashMap thread-safe?",
    "Does cargo work on Windows?",
    "How do I install rustup?",
    "Can closures be nested in Rust?",
    "What does Vec::pop return?",
    "Should I use unwrap in production code?",
    "How do Box and Rc differ?",
    "Is the try! macro still supported in the 2021 edition?",
    "When was asyncio.get_event_loop deprecated?",
    "Who maintains the tokio crate?",
    "How do I turn off the unused variable warning?",
    "Where are Cargo's downloaded crates stored?",
    "Can threads in Rust run in parallel?",
    "What is a trait object and when should I use it?",
    "If a struct holds a reference, how long can it live?",
    "Is it safe to call unwrap on a None value?",
    "What does it mean when rustc reports E0502?",
    "Does it matter whether I pass a Vec or a slice?",
    "How long does it take to compile the Rust compiler?",
    "Are iterators faster than loops in Rust?",
    "Is Rust faster than Go for web servers?",
    "Is a HashMap safe to share between threads?",
    "Which is faster, Vec or VecDeque?",
    "Is Rc slower than Arc?",
    "Is unsafe Rust safer than C?",
    "Is asyncio more efficient than threads for network I/O?",
    "Is bcrypt secure enough for storing passwords?",
    "How much faster is release mode than debug mode?",
    "Is Rust memory safe?",
    "Is Python good for data science?",
    "Is there a faster way to read a file in Python?",
    "How can I make my Rust build faster?",
    "Is the trait that makes Box dereferenceable called Deref?",
]

ENGINE = OfflineEngine()


async def route(query: str, history: list[Message] | None = None) -> tuple[RoutingDecision, str]:
    messages = [*(history or []), Message(role=Speaker.USER, content=query)]
    out = await ENGINE.route(
        RouteInput(messages=messages, clarification_count=0, max_clarifications=3)
    )
    return out.decision, out.reasoning


async def ask_back(query: str) -> str:
    messages = [Message(role=Speaker.USER, content=query)]
    return (
        await ENGINE.clarify(
            ClarifyInput(messages=messages, clarification_count=0, max_clarifications=3)
        )
    ).question


@pytest.mark.parametrize("query", POINTING_NOWHERE)
async def test_a_question_about_a_pronoun_nothing_names_is_asked_back_for_its_referent(
    query: str,
) -> None:
    decision, reasoning = await route(query)
    assert decision is RoutingDecision.CLARIFICATION, reasoning
    assert reasoning.startswith("Pronoun"), reasoning
    assert "refer to" in await ask_back(query)


@pytest.mark.parametrize("query", MEASURED_BY_NOTHING)
async def test_a_judgment_with_nothing_to_measure_it_against_is_asked_back_for_its_measure(
    query: str,
) -> None:
    decision, reasoning = await route(query)
    assert decision is RoutingDecision.CLARIFICATION, reasoning
    question = await ask_back(query)
    assert "than what" in question or "for what" in question or "Which options" in question, (
        question
    )


@pytest.mark.parametrize("query", BOTH)
async def test_a_pronoun_judged_with_nothing_is_asked_back_for_what_it_is_first(query: str) -> None:
    decision, reasoning = await route(query)
    assert decision is RoutingDecision.CLARIFICATION, reasoning
    assert "refer to" in await ask_back(query)


@pytest.mark.parametrize("query", CLEAR)
async def test_the_same_shapes_with_a_subject_and_a_measure_are_researched(query: str) -> None:
    decision, reasoning = await route(query)
    assert decision is RoutingDecision.RESEARCH, reasoning


@pytest.mark.parametrize(
    "query", ["Is it thread-safe?", "Does it work on Windows?", "Is that still supported?"]
)
async def test_in_a_follow_up_the_pronoun_is_the_earlier_questions_subject(query: str) -> None:
    earlier = [
        Message(role=Speaker.USER, content="How does the tokio runtime schedule tasks?"),
        Message(role=Speaker.ASSISTANT, content="# Tokio scheduling\n\nWork stealing ... [1]"),
    ]
    decision, reasoning = await route(query, earlier)
    assert decision is RoutingDecision.RESEARCH, reasoning
    assert "tokio runtime" in reasoning
