"""What a follow-up refers to (workflows/followup.py) and the conversation it is given (starter)."""

from __future__ import annotations

from activities.offline_engine.reporting import write_report
from starter.followup import REPORT_CHARS, conversation
from tests.activities.test_library import rich_result
from workflows.followup import context, referent
from workflows.models import (
    Clarification,
    Message,
    Source,
    Speaker,
)
from workflows.activity_models import SynthesizeInput

REPORT = """# Retrieval for RAG

## Summary

Sparse and dense retrieval both work [1].

## Sparse methods

- BM25 ranks by term frequency [1].
- Inverted indexes make it fast [2].

## Dense methods

1. Embeddings capture meaning [3].
2. Vector indexes find neighbours [3].

## Sources

- [1] Okapi — https://example.org/bm25
- [2] Index — https://example.org/index
"""
HISTORY = [Message(role=Speaker.USER, content="How does retrieval for RAG work?"),
           Message(role=Speaker.ASSISTANT, content=REPORT)]


def test_an_ordinal_or_numbered_reference_names_the_point_of_the_previous_answer() -> None:
    assert referent("Tell me more about the second point", HISTORY) == "Inverted indexes make it fast."
    assert referent("Expand on item 3", HISTORY) == "Embeddings capture meaning."
    assert referent("And the last bullet?", HISTORY) == "Vector indexes find neighbours."
    assert referent("Go deeper into the second section", HISTORY) == "Dense methods"  # not Summary, not Sources
    assert referent("Tell me more about the ninth point", HISTORY) == ""  # there is no ninth
    assert referent("What are its limits?", HISTORY) == ""


def test_the_context_is_the_named_point_else_the_earlier_question() -> None:
    assert context("Tell me more about the second point", HISTORY) == "Inverted indexes make it fast."
    assert context("What are its limits?", HISTORY) == "How does retrieval for RAG work?"
    assert context("What are its limits?", []) == ""


def test_the_offline_report_is_titled_by_the_question_as_meant_and_says_what_it_follows_up() -> None:
    report = write_report(SynthesizeInput(
        query="What are its limits?", follows_up="How does retrieval for RAG work?", clarifications=["BM25"],
        plan=None, sources=[Source(id=1, url="u", title="t")],
    ))
    lines = report.markdown.splitlines()
    assert lines[0] == "# What are BM25's limits?"
    assert "*Asked: What are its limits?*" in lines
    assert "*Follow-up to: How does retrieval for RAG work?*" in lines and "*Clarified: BM25*" in lines


def test_the_earlier_research_becomes_the_last_ten_messages_with_its_report_last() -> None:
    earlier = rich_result()
    earlier.clarifications = [Clarification(question=f"Q{i}?", answer=f"A{i}") for i in range(6)]
    earlier.report_markdown = "# Report\n\n" + "- a finding [1].\n" * 1000
    messages = conversation(earlier)

    assert len(messages) == 10
    assert messages[-1].role is Speaker.ASSISTANT and messages[-1].content.startswith("# Report")
    assert len(messages[-1].content) <= REPORT_CHARS + 2
    assert [m.content for m in messages[-3:-1]] == ["Q5?", "A5"]
