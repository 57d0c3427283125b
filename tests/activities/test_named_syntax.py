"""Questions that name syntax: "the for, while and with statements" is a list
of three things the documentation has a page each about, not three stop words and "statements".
The offline planner makes a step per name, the local corpus searches each named stop word as a
phrase with its noun, and a title naming the query's rare word is lifted more than one naming
its common words."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.corpus import LocalCorpus
from activities.corpus.snippets import query_terms
from activities.offline_engine.aspects import decompose
from activities.offline_engine.kinds import kind_list


@pytest.mark.parametrize(
    ("question", "items", "scope"),
    [
        (
            "What exactly do Python's del, return and pass statements do?",
            ["the del statement", "the return statement", "the pass statement"],
            "in Python",
        ),
        (
            "What do the for, while and with statements do in Python?",
            ["the for statement", "the while statement", "the with statement"],
            "in Python",
        ),
        (
            "What do the heapreplace() and heappushpop() functions return?",
            ["the heapreplace() function", "the heappushpop() function"],
            "",
        ),
    ],
)
def test_a_list_of_names_of_one_kind_is_one_aspect_per_name(
    question: str, items: list[str], scope: str
) -> None:
    parts = decompose(question)
    assert (parts.kind, parts.items, parts.scope) == ("enumeration", items, scope)


def test_names_of_one_kind_compared_are_a_comparison() -> None:
    parts = decompose("How do Python's global and nonlocal statements differ?")
    assert parts.kind == "comparison"
    assert parts.items == ["the global statement", "the nonlocal statement"]


@pytest.mark.parametrize(
    "text",
    [
        "How do lists, tuples and sets differ in Python?",
        "What are the kinds of statements?",
        "Which options and flags does grep take?",
    ],
)
def test_no_list_of_names_no_kind_list(text: str) -> None:
    assert kind_list(text) is None


def test_stop_words_named_as_syntax_are_searched_as_phrases() -> None:
    assert query_terms("What do the for, while and with statements do?") == [
        "for statements",
        "while statements",
        "with statements",
        "statements",
    ]
    assert query_terms("the in operator and for loops") == [
        "in operator",
        "operator",
        "for loops",
        "loops",
    ]
    # Nothing named: the content words, as before.
    assert query_terms("How does asyncio.gather work with tasks?") == [
        "asyncio.gather",
        "work",
        "tasks",
    ]


def test_the_page_about_a_statement_named_by_a_stop_word_is_found_first(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "for.md").write_text(
        '# The "for" statement\n\nThe for statement is used to iterate over the elements of a '
        "sequence (such as a string, tuple or list) or other iterable object.\n"
    )
    (docs / "with.md").write_text(
        '# The "with" statement\n\nThe with statement is used to wrap the execution of a block '
        "with methods defined by a context manager. This allows common try...except...finally "
        "usage patterns to be encapsulated for convenient reuse. The manager is used for entry, "
        "for exit, for cleanup and for errors.\n"
    )
    (docs / "while.md").write_text(
        '# The "while" statement\n\nThe while statement is used for repeated execution as long '
        "as an expression is true, for as long as it takes.\n"
    )
    corpus = LocalCorpus(docs, tmp_path / "index")
    hits = corpus.search("The for statement in Python", 3)
    assert hits[0].title == 'The "for" statement', [h.title for h in hits]
