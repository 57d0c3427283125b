"""The question as the person meant it (workflows/text/clarified.py): what a plan, the searches and the
report's title say once a vague question was answered."""

from __future__ import annotations

import pytest

from workflows.activity_models import AboutQuestion
from workflows.text.clarified import meant_question

MEANT = [
    # question, the answer to the clarification question, the question as meant
    (
        "Tell me more about it",
        "asyncio task cancellation",
        "Tell me more about asyncio task cancellation",
    ),
    ("What are its limitations?", "asyncio.gather", "What are asyncio.gather's limitations?"),
    ("Where should I put them?", "integration tests", "Where should I put integration tests?"),
    (
        "Use the approach from the paper",
        "I meant the DAIL-SQL approach",
        "Use the DAIL-SQL approach from the paper",
    ),
    ("And what about the other one?", "const versus static", "And what about const versus static?"),
    ("Which one is better?", "match or if let", "Which one is better, match or if let?"),
    ("How many are there?", "unsafe superpowers", "How many unsafe superpowers are there?"),
    (
        "What's the most important trait?",
        "for async code",
        "What's the most important trait for async code?",
    ),
    (
        "How many examples are enough?",
        "for 90% accuracy on sentiment classification",
        "How many examples are enough for 90% accuracy on sentiment classification?",
    ),
    (
        "Which one is better?",
        "Which is faster, loops or iterators?",
        "Which is faster, loops or iterators?",
    ),
    (
        "Explain Python decorators",
        "class decorators",
        "Explain Python decorators: class decorators",
    ),
    ("Tell me more about it", "   ", "Tell me more about it"),
]


@pytest.mark.parametrize(("question", "answer", "meant"), MEANT)
def test_the_answer_fills_in_what_the_question_was_missing(
    question: str, answer: str, meant: str
) -> None:
    assert meant_question(question, [answer]) == meant


def test_pasted_code_is_kept_below_the_question_not_woven_into_it() -> None:
    code = 'fn main() {\n    let x: i32 = "5";\n}'
    assert meant_question("Can you fix my code?", [code]) == f"Can you fix my code?\n{code}"


def test_answers_apply_in_turn() -> None:
    assert meant_question("Tell me more about it", ["asyncio tasks", "for cancellation"]) == (
        "Tell me more about asyncio tasks for cancellation"
    )


def test_the_topic_shows_the_question_as_meant_and_as_asked() -> None:
    about = AboutQuestion(
        query="Tell me more about it", clarifications=["asyncio task cancellation"]
    )
    assert about.meant() == "Tell me more about asyncio task cancellation"
    assert about.topic_text() == (
        'Tell me more about asyncio task cancellation (asked as: "Tell me more about it") '
        "(clarified: asyncio task cancellation)"
    )
    assert AboutQuestion(query="How do lifetimes work?").topic_text() == "How do lifetimes work?"
