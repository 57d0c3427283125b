"""The deterministic verifier on the changes that fooled word overlap (issue 36): a claim that keeps
almost every word of its source sentence and changes the one that matters is never supported.

The examples are our own, on documentation of the same kind as the labelled set (a standard
library's docs), so they test the principles, not that set's sentences.
"""

from __future__ import annotations

import pytest

from workflows.checks.alignment import read, verdict
from workflows.checks.claim_parts import units

LOCK_DOCS = [
    "A primitive lock is in one of two states, locked or unlocked. It is created in the unlocked "
    "state. It has two basic methods, acquire() and release().\n\n"
    "When the state is unlocked, acquire() changes the state to locked and returns immediately. "
    "When the state is locked, acquire() blocks until a call to release() in another thread "
    "changes it to unlocked.\n\n"
    "The release() method should only be called in the locked state; it changes the state to "
    "unlocked and returns immediately. If an attempt is made to release an unlocked lock, a "
    "RuntimeError will be raised.",
    "lock = Lock()\n"
    "lock.acquire(timeout=5)   # waits at most 5 seconds, then returns False\n"
    "                          # when the lock could not be taken\n"
    "lock.release()            # never blocks",
]

QUOTE = "When the state is unlocked, acquire() changes the state to locked and returns immediately."


def test_a_sentence_quoted_word_for_word_is_supported() -> None:
    found = verdict(QUOTE, LOCK_DOCS)
    assert found.verdict == "supported"
    assert verdict("It has two basic methods, acquire() and release().", LOCK_DOCS).verdict == (
        "supported"
    )


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        # a swapped code name: the other method of the same sentence's kind
        ("lock.acquire() never blocks.", "names lock.acquire where the passage names lock.release"),
        # the right names, the states the other way round
        (
            "When the state is unlocked, release() changes the state to locked and returns immediately.",
            "other way round",
        ),
        # a swapped exception class
        ("If an attempt is made to release an unlocked lock, a ValueError will be raised.", ""),
        # a changed number
        ("lock.acquire(timeout=5) waits at most 10 seconds, then returns False.", ""),
        # a flipped meaning: a negation added
        ("When the state is locked, acquire() does not block until a call to release().", ""),
        # a flipped meaning: the negation dropped
        ("lock.release() blocks.", ""),
        # an opposite word
        ("A primitive lock is created in the locked state.", ""),
    ],
)
def test_one_word_that_matters_changed_is_never_supported(claim: str, why: str) -> None:
    found = verdict(claim, LOCK_DOCS)
    assert found.verdict != "supported", found
    assert why in found.reason


def test_a_swapped_name_number_or_negation_is_unsupported_with_the_reason() -> None:
    swapped = verdict("lock.acquire() never blocks.", LOCK_DOCS)
    assert swapped.verdict == "unsupported" and "lock.release" in swapped.reason
    number = verdict("A primitive lock is in one of 3 states, locked or unlocked.", LOCK_DOCS)
    assert number.verdict == "unsupported" and "never says 3" in number.reason
    negated = verdict(
        "When the state is unlocked, acquire() does not change the state to locked.", LOCK_DOCS
    )
    assert negated.verdict == "unsupported" and "negat" in negated.reason


def test_the_order_of_two_opposite_words_matters() -> None:
    docs = ["Deletion of a target list deletes each target, from left to right."]
    assert verdict("Each target is deleted from left to right.", docs).verdict != "unsupported"
    reversed_ = verdict("Deletion of a target list deletes each target, from right to left.", docs)
    assert reversed_.verdict == "unsupported" and "other way round" in reversed_.reason


def test_words_stitched_from_two_sentences_are_at_most_partial() -> None:
    claim = "The release() method changes the state to unlocked because acquire() blocks."
    found = verdict(claim, LOCK_DOCS)
    assert found.verdict == "partial"
    assert "several passages" in found.reason


def test_a_claim_that_merges_a_condition_with_its_alternative_is_at_most_partial() -> None:
    docs = [
        "If the text fits in the width, it is returned as is; otherwise, the words that fit "
        "are joined and a placeholder is appended."
    ]
    claim = "If the text fits in the width, the words are joined and a placeholder is appended."
    found = verdict(claim, docs)
    assert found.verdict == "partial" and "otherwise" in found.reason


def test_a_fair_paraphrase_is_partial_not_unsupported_and_never_supported() -> None:
    claim = "Calling release() on a lock that is not locked raises RuntimeError."
    assert verdict(claim, LOCK_DOCS).verdict == "partial"


def test_what_a_sentence_cites_about_something_else_is_unsupported_for_certain() -> None:
    found = verdict("Asyncio event loops schedule coroutines cooperatively.", LOCK_DOCS)
    assert (found.verdict, found.certain) == ("unsupported", True)
    missing = verdict("acquire() takes a blocking flag and a deadline_ns argument.", LOCK_DOCS)
    assert (missing.verdict, missing.certain) == ("unsupported", True)
    assert "deadline_ns" in missing.reason


def test_code_names_keep_their_underscores_and_a_title_names_its_subject() -> None:
    docs = ["Exit the runtime context and return a Boolean flag."]
    assert verdict("__exit__() returns a Boolean flag.", docs).verdict == "unsupported"
    titled = verdict("__exit__() returns a Boolean flag.", docs, titles=["object.__exit__"])
    assert titled.verdict != "unsupported"
    exact = ["The __exit__() method returns a Boolean flag."]
    assert verdict("The __exit__() method returns a Boolean flag.", exact).verdict == "supported"


def test_a_comment_continued_on_the_next_line_is_one_unit_with_its_code() -> None:
    found = units([LOCK_DOCS[1]])
    assert any("when the lock could not be taken" in u.text and "acquire" in u.text for u in found)
    reading = read("lock.acquire(timeout=5) waits at most 5 seconds.", LOCK_DOCS)
    assert reading.best is not None and "acquire" in reading.best.text
