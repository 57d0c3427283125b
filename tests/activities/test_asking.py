"""What a question asks of its subject (activities/offline_engine/asking.py): the reading the
offline summary's verdict rests on."""

from __future__ import annotations

import pytest

from activities.offline_engine.asking import ask_of

READINGS = [
    # question, subject, what is asked of it
    ("How does asyncio.timeout cancel a task?", "asyncio.timeout", ("cancel", "task")),
    ("What does asyncio.timeout raise when the time runs out?", "asyncio.timeout", ("raise",)),
    ("Why does shutil.rmtree fail on read-only files?", "shutil.rmtree", ("fail",)),
    (
        "How does functools.lru_cache decide which entries to evict?",
        "functools.lru_cache",
        ("decide", "entries"),
    ),
    (
        "How does itertools.groupby group consecutive items?",
        "itertools.groupby",
        ("group", "consecutive", "items"),
    ),
    ("Where should I put my sourdough loaves after baking?", "sourdough loaves", ("put",)),
]


@pytest.mark.parametrize(("question", "subject", "asked"), READINGS)
def test_a_question_is_read_as_its_subject_and_what_it_asks(
    question: str, subject: str, asked: tuple[str, ...]
) -> None:
    ask = ask_of(question)
    assert (ask.subject, ask.ask_terms) == (subject, asked)


def test_a_dotted_subject_is_named_by_its_last_part() -> None:
    ask = ask_of("How does asyncio.timeout cancel a task?")
    assert ask.answers("When a timeout occurs, it cancels the task and raises TimeoutError.")
    assert not ask.answers("When a timeout occurs, the socket is closed.")  # nothing asked of it
    assert not ask.answers("The event loop cancels the task.")  # not about the subject
