"""The deterministic verifier on the changes that fooled word overlap: a claim that keeps
almost every word of its source sentence and changes the one that matters is never supported.

The examples are our own, on documentation of the same kind as the labelled set (a standard
library's docs), so they test the principles, not that set's sentences.
"""

from __future__ import annotations

import pytest

from workflows.text.alignment import read, verdict
from workflows.text.claim_parts import units

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


# --- what the word check used to miss ----------------------

BOOL_DOCS = [
    "The expression x or y first evaluates x; if x is true, its value is returned; otherwise, y "
    "is evaluated and the resulting value is returned. For example, 1 or True evaluates to 1, "
    "and a[-1] is the last item."
]
AUGMENTED_DOCS = [
    "An augmented assignment evaluates the target (which, unlike normal assignment statements, "
    "cannot be an unpacking) and the expression list, performs the binary operation specific to "
    "the type of assignment on the two operands, and assigns the result to the original target."
]
LIGHTHOUSE_NOTES = [
    "The Eddystone Lighthouse stands on rocks 14 kilometres south of Rame Head. The present tower "
    "was designed by James Douglass and first lit in 1882. Its light is visible for 22 nautical "
    "miles, and the keepers left in 1982 when it was automated. Winter gales bring waves of 10 to "
    "20 metres."
]


@pytest.mark.parametrize(
    ("claim", "because"),
    [
        ("For example, -1 or True evaluates to -1.", '"1"'),  # a sign is part of the number
        ("For example, 1 or True evaluates to 1, and a[1] is the last item.", '"-1"'),
    ],
)
def test_a_number_keeps_its_sign(claim: str, because: str) -> None:
    found = verdict(claim, BOOL_DOCS)
    assert found.verdict == "unsupported" and because in found.reason


def test_a_range_is_two_numbers_and_its_dash_no_sign() -> None:
    assert verdict("Winter gales bring waves of 10 to 20 metres.", LIGHTHOUSE_NOTES).verdict == (
        "supported"
    )
    changed = verdict("Winter gales bring waves of 10 to 30 metres.", LIGHTHOUSE_NOTES)
    assert changed.verdict == "unsupported" and "30" in changed.reason
    assert '"10 to 20"' in changed.reason  # the range the passage gives for the same thing
    assert read("Sums like 2**19937-1 stay whole.", ["Sums like 2**19937-1 stay whole."]).quotes


@pytest.mark.parametrize(
    "claim",
    [
        "An augmented assignment evaluates the target (which, unlike normal assignment "
        "statements, can be an unpacking) and the expression list, and it is not evaluated twice.",
        "Normal assignment statements cannot be an unpacking.",  # said of what it is unlike
    ],
)
def test_a_negation_in_parentheses_and_an_unlike_clause_are_read(claim: str) -> None:
    assert verdict(claim, AUGMENTED_DOCS).verdict == "unsupported"


def test_a_negation_inside_parentheses_governs_only_them() -> None:
    claim = (
        "An augmented assignment evaluates the expression list and performs the binary operation "
        "specific to the type of assignment on the two operands."
    )
    assert verdict(claim, AUGMENTED_DOCS).verdict == "supported"


@pytest.mark.parametrize(
    ("claim", "named"),
    [
        ("The present tower was designed by John Smeaton and first lit in 1882.", "John Smeaton"),
        ("The Eddystone Lighthouse stands on rocks 14 kilometres south of Start Point.", "Start"),
    ],
)
def test_a_swapped_proper_name_is_unsupported_and_named(claim: str, named: str) -> None:
    found = verdict(claim, LIGHTHOUSE_NOTES)
    assert found.verdict == "unsupported" and named in found.reason
    assert "James Douglass" in found.reason or "Rame Head" in found.reason


def test_a_number_reason_names_the_number_given_for_the_same_thing() -> None:
    found = verdict("Its light is visible for 25 nautical miles.", LIGHTHOUSE_NOTES)
    assert found.verdict == "unsupported"
    assert '"22"' in found.reason and "1882" not in found.reason and "1982" not in found.reason


def test_a_claim_stitched_across_sentences_is_at_most_partial() -> None:
    claim = "The tower designed by James Douglass was automated when the keepers left in 1982."
    assert verdict(claim, LIGHTHOUSE_NOTES).verdict != "supported"
