"""A question's clauses, each a thing asked (activities/offline_engine/questions.py).

", and" before a clause with a subject and a verb of its own asks another thing, as "and",
"as well as" or a comma before a question word or "whether" does: the research
gives it a step of its own, so the chapter that answers it is searched for (a held-out Rust book
question lost its second half, the chapter on printing errors to standard error, this way).
"""

from __future__ import annotations

import pytest

from activities.offline_engine.aspects import decompose

CLAUSES = [
    (
        "My tool should ignore case when a setting is present, and its error messages must still "
        "reach the terminal when I redirect output into a file.",
        [
            "My tool should ignore case when a setting is present",
            "error messages must still reach the terminal when I redirect output into a file",
        ],
    ),
    (
        "How is a crate published, and the workspace must build first?",
        ["How is a crate published", "the workspace must build first"],
    ),
    (
        "How do I split my crate into modules, and whether other modules see the items inside?",
        ["How do I split my crate into modules", "whether other modules see the items inside"],
    ),
    (
        "I want to know how channels pass data as well as how a mutex guards shared state.",
        ["I want to know how channels pass data", "how a mutex guards shared state"],
    ),
]
ONE_CLAUSE = [
    "How do ownership and borrowing prevent data races?",  # "and" joins two subjects
    "Why are strings and slices stored apart and read the same way?",  # and two verbs
]


@pytest.mark.parametrize(("question", "clauses"), CLAUSES)
def test_and_before_a_clause_of_its_own_splits_the_question(
    question: str, clauses: list[str]
) -> None:
    items = decompose(question).items
    assert len(items) == len(clauses)
    assert all(i.endswith(c) for i, c in zip(items, clauses, strict=True)), items  # "its" resolved


@pytest.mark.parametrize("question", ONE_CLAUSE)
def test_and_within_a_clause_does_not(question: str) -> None:
    assert decompose(question).kind != "clauses"
