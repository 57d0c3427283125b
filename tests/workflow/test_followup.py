"""What a follow-up refers to (workflows/kit/followup.py) and the conversation it is given (starter)."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.engine import method
from activities.offline_engine import OfflineEngine
from activities.offline_engine.questions import point_subject
from activities.offline_engine.reporting import write_report
from starter.client.followup import REPORT_CHARS, conversation
from tests.activities.test_library import rich_result
from tests.support.doubles import Script
from tests.workflow.test_workflow import run_research
from workflows.activity_models import SynthesizeInput
from workflows.kit.followup import context, referent
from workflows.models import (
    Clarification,
    Depth,
    Message,
    ResearchRequest,
    Source,
    Speaker,
)
from workflows.roles import ROLES

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
HISTORY = [
    Message(role=Speaker.USER, content="How does retrieval for RAG work?"),
    Message(role=Speaker.ASSISTANT, content=REPORT),
]


def test_an_ordinal_or_numbered_reference_names_the_point_of_the_previous_answer() -> None:
    assert (
        referent("Tell me more about the second point", HISTORY) == "Inverted indexes make it fast."
    )
    assert referent("Expand on item 3", HISTORY) == "Embeddings capture meaning."
    assert referent("And the last bullet?", HISTORY) == "Vector indexes find neighbours."
    assert (
        referent("Go deeper into the second section", HISTORY) == "Dense methods"
    )  # not Summary, not Sources
    assert referent("Tell me more about the ninth point", HISTORY) == ""  # there is no ninth
    assert referent("What are its limits?", HISTORY) == ""


def test_one_idea_and_example_name_a_point_too() -> None:
    assert (
        referent("Tell me more about the second one", HISTORY) == "Inverted indexes make it fast."
    )
    assert referent("And the last idea?", HISTORY) == "Vector indexes find neighbours."
    assert referent("Give me example 1 in detail", HISTORY) == "BM25 ranks by term frequency."
    assert referent("Is it one of the fastest?", HISTORY) == ""
    assert context("Tell me more about the second one", HISTORY) == "Inverted indexes make it fast."


def test_the_context_is_the_named_point_else_the_earlier_question() -> None:
    assert (
        context("Tell me more about the second point", HISTORY) == "Inverted indexes make it fast."
    )
    assert context("What are its limits?", HISTORY) == "How does retrieval for RAG work?"
    assert context("What are its limits?", []) == ""


def test_the_offline_report_is_titled_by_the_question_as_meant_and_says_what_it_follows_up() -> (
    None
):
    report = write_report(
        SynthesizeInput(
            query="What are its limits?",
            follows_up="How does retrieval for RAG work?",
            clarifications=["BM25"],
            plan=None,
            sources=[Source(id=1, url="u", title="t")],
        )
    )
    lines = report.markdown.splitlines()
    assert lines[0] == "# What are BM25's limits?"
    assert "*Asked: What are its limits?*" in lines
    assert (
        "*Follow-up to: How does retrieval for RAG work?*" in lines and "*Clarified: BM25*" in lines
    )


def test_the_earlier_research_becomes_the_last_ten_messages_with_its_report_last() -> None:
    earlier = rich_result()
    earlier.clarifications = [Clarification(question=f"Q{i}?", answer=f"A{i}") for i in range(6)]
    earlier.report_markdown = "# Report\n\n" + "- a finding [1].\n" * 1000
    messages = conversation(earlier)

    assert len(messages) == 10
    assert messages[-1].role is Speaker.ASSISTANT and messages[-1].content.startswith("# Report")
    assert len(messages[-1].content) <= REPORT_CHARS + 2
    assert [m.content for m in messages[-3:-1]] == ["Q5?", "A5"]


# --- "the second point": researched by what the point is about ---------------------------

DEMO_REPORT = """# How do asyncio tasks run coroutines concurrently?

## Summary

Tasks run coroutines concurrently [1].

## How do asyncio tasks run coroutines concurrently

- `asyncio.tasks.gather(*coros_or_futures)` — Return a future aggregating results from the given coroutines [1].
- `async asyncio.tasks.wait_for(fut, timeout)` — Wait for the single Future or coroutine to complete, with timeout [1].
- `asyncio.tasks.shield(arg)` — Wait for a future, shielding it from cancellation [1].

## Sources

- [1] Python module `asyncio.tasks` — file:///docs/tasks.py (local)
"""
DEMO_HISTORY = [
    Message(role=Speaker.USER, content="How do asyncio tasks run coroutines concurrently?"),
    Message(role=Speaker.ASSISTANT, content=DEMO_REPORT),
]


def test_a_point_is_about_the_name_it_opens_with_or_the_words_before_its_verb() -> None:
    assert point_subject(
        "`async asyncio.tasks.wait_for(fut, timeout)` — Wait for the single Future."
    ) == ("asyncio.tasks.wait_for")
    assert point_subject("BM25 ranks by term frequency.") == "BM25"
    assert point_subject("Inverted indexes make it fast.") == "Inverted indexes"
    assert point_subject("Dense methods") == "Dense methods"  # a section heading stands as it is


@pytest.mark.parametrize(
    "query",
    [
        "Tell me more about the second point",
        "Tell me more about point 2",
        "Can you expand on the second item?",
        "What about that 2nd bullet?",
        "Tell me more about the second one",  # "one", "idea", "example", ... name a point too
        "Can you go deeper into the second idea?",
    ],
)
async def test_a_follow_up_on_the_second_point_researches_that_points_subject(
    time_skipping_env: WorkflowEnvironment, query: str
) -> None:
    engine = OfflineEngine()
    script = Script(**{role.name: method(engine, role) for role in ROLES if role.llm})
    request = ResearchRequest(
        query=query, history=DEMO_HISTORY, follow_up_of="demo-1", depth=Depth.LIGHT
    )
    result, _ = await run_research(time_skipping_env.client, script, request)

    assert "clarify" not in script.calls  # the point resolved: not asked back
    searched = [s.query for s in script.calls["search"]]
    assert searched and all("wait_for" in q for q in searched[:2]), searched
    assert not any(
        word in q.lower() for q in searched for word in ("second", "point", "bullet", "item")
    ), searched
    assert result.report_markdown.splitlines()[0].endswith("asyncio.tasks.wait_for") or (
        "asyncio.tasks.wait_for" in result.report_markdown.splitlines()[0]
    )
    assert f"*Asked: {query}*" in result.report_markdown
