"""Retrieval on questions it was never tuned on.

bench/rust-book-held-out-questions.md holds questions of the Rust book dev set's kind,
written here and never used for tuning (the book itself stays in ../shared). `make bench`
(bench/retrieval.py) researches them end to end; here the set is checked for what it
claims, and ranked as queries over the book: for how many does the local corpus put both
required chapters in its first ten (11 of 12 when written; the research then cites both for 11).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.corpus.index import LocalCorpus
from bench.retrieval import HELD_OUT, parse_dev_set
from tests.support.shared import DEV_SET, RUST_BOOK, missing

QUESTIONS = parse_dev_set(HELD_OUT.read_text(encoding="utf-8"))[0]


def test_the_held_out_set_is_a_dozen_questions_each_needing_two_chapters_or_more() -> None:
    assert len(QUESTIONS) >= 8
    assert all(q.key.startswith("H") and len(q.required) >= 2 for q in QUESTIONS)


def test_the_held_out_questions_are_not_the_dev_sets() -> None:
    if reason := missing(DEV_SET):
        pytest.skip(reason)
    dev = parse_dev_set(DEV_SET.read_text(encoding="utf-8"))[0]
    assert not {q.text for q in dev} & {q.text for q in QUESTIONS}
    assert not {frozenset(q.required) for q in dev} & {frozenset(q.required) for q in QUESTIONS}


@pytest.fixture(scope="module")
def rust_book(tmp_path_factory: pytest.TempPathFactory) -> LocalCorpus:
    if reason := missing(RUST_BOOK):
        pytest.skip(reason)
    return LocalCorpus(RUST_BOOK, tmp_path_factory.mktemp("held-out-index"))


def test_every_required_chapter_is_in_the_book(rust_book: LocalCorpus) -> None:
    names = {p.name for p in RUST_BOOK.glob("*.md")}
    assert [f for q in QUESTIONS for f in q.required if f not in names] == []


def test_the_book_ranks_both_required_chapters_in_its_first_ten_for_most_questions(
    rust_book: LocalCorpus,
) -> None:
    found = {
        q.key: [Path(h.url).name for h in rust_book.search(q.text, limit=10)] for q in QUESTIONS
    }
    both = [q.key for q in QUESTIONS if sum(f in found[q.key] for f in q.required) >= 2]
    assert len(both) >= len(QUESTIONS) - 1, sorted(set(found) - set(both))
