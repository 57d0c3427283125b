"""The offline engine: what a user sees when no LLM is configured.

It asks back only when a question is really ambiguous (seed 000's table), splits a question into
steps that fit the depth, quotes and cites only the sources it was given, stops when the question's
terms are covered (never before the depth's minimum), and says its report was made by extraction.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from activities.offline_engine import OfflineEngine
from activities.offline_engine.reporting import DISCLAIMER
from activities.offline_engine.routing import Ambiguity, find_ambiguity
from workflows.activity_models import (
    ClarifyInput,
    CoordinateInput,
    ObserveInput,
    PlanInput,
    ReflectInput,
    RouteInput,
    SynthesizeInput,
    WriteQueriesInput,
)
from workflows.models import (
    OBSERVATION_LIMIT,
    STEP_LIMITS,
    Complexity,
    Depth,
    Message,
    Passage,
    Plan,
    PlanStep,
    ReflectionDecision,
    RoutingDecision,
    Source,
    Speaker,
    StepStatus,
    Verdict,
)

REPO = Path(__file__).resolve().parents[2]
CLARIFICATION, RESEARCH = RoutingDecision.CLARIFICATION, RoutingDecision.RESEARCH
engine = OfflineEngine()


def user(text: str) -> Message:
    return Message(role=Speaker.USER, content=text)


def assistant(text: str) -> Message:
    return Message(role=Speaker.ASSISTANT, content=text)


async def route(query: str, history: list[Message]) -> tuple[RoutingDecision, str]:
    out = await engine.route(
        RouteInput(messages=[*history, user(query)], clarification_count=0, max_clarifications=2)
    )
    return out.decision, out.reasoning


async def ask_back(query: str, history: list[Message]) -> str:
    return (await engine.clarify(ClarifyInput(messages=[*history, user(query)]))).question


def citations(text: str) -> list[int]:
    return [
        int(n) for group in re.findall(r"\[(\d+(?:\s*,\s*\d+)*)\]", text) for n in group.split(",")
    ]


# --- routing: seed 000's example decisions --------------------------------------------------------

PRIOR_RAG = [assistant("RAG systems use retrieval to ground answers in documents.")]
PRIOR_CLASSIFICATION = [user("I'm working on classification")]

SEED_000_EXAMPLE_DECISIONS = [
    # query, conversation before it, decision, what the reasoning must name
    ("Tell me more about it", PRIOR_RAG, CLARIFICATION, 'Pronoun "it"'),
    ("Which prompt gave highest accuracy in Zhang 2024?", [], RESEARCH, "Zhang"),
    ("What did OpenAI release this month?", [], RESEARCH, "OpenAI"),
    ("The best approach", [], CLARIFICATION, 'Superlative "best"'),
    (
        "How many examples are enough?",
        PRIOR_CLASSIFICATION,
        CLARIFICATION,
        '"Enough" has no target',
    ),
    ("Use the approach from the paper", [], CLARIFICATION, '"the paper"'),
    # The table's last row ("I meant the DAIL-SQL approach", after a clarification) is the
    # workflow's reply shortcut, tested in tests/workflow/test_workflow.py.
]


@pytest.mark.parametrize(("query", "history", "decision", "named"), SEED_000_EXAMPLE_DECISIONS)
async def test_seed_000_example_decisions(
    query: str, history: list[Message], decision: RoutingDecision, named: str
) -> None:
    got, reasoning = await route(query, history)
    assert got is decision, reasoning
    assert named in reasoning


CLEAR_QUESTIONS = [
    "How does Rust's borrow checker prevent data races?",
    "What is the difference between a list and a tuple in Python?",
    "asyncio gather vs wait",
    "Explain Python decorators",
    "How does asyncio.gather run tasks concurrently?",
    "What is ownership in Rust?",
    "How do I read a file line by line in Python?",
    "When should I use Rc versus Arc in Rust?",
    "What are the best practices for error handling in Rust?",
    "What is the method resolution order in Python?",
    "What is the first step to install Rust?",
    "How can I better understand lifetimes in Rust?",
    "What's the best approach for text-to-SQL?",
    "What is the GIL and why does it exist?",
    "Is Rust better than Go for web servers?",
    "python decorators",
]


@pytest.mark.parametrize("query", CLEAR_QUESTIONS)
async def test_clear_questions_about_python_and_rust_go_straight_to_research(query: str) -> None:
    decision, reasoning = await route(query, [])
    assert decision is RESEARCH, reasoning
    assert reasoning.startswith("Specific question")


THREE_OPTIONS = assistant("Three options:\n1. BM25 ranking\n2. Dense retrieval\n3. Hybrid search")
A_REPORT = assistant(
    "# Retrieval\n\n## Sparse methods\n\nBM25 ...\n\n## Dense methods\n\nEmbeddings ..."
)

OTHER_DECISIONS = [
    # query, conversation before it, decision, what the reasoning must name
    ("Tell me more about the second point", [THREE_OPTIONS], RESEARCH, "item 2 of the 3"),
    ("Tell me more about the second section", [A_REPORT], RESEARCH, "item 2"),
    ("Tell me more about the second point", PRIOR_RAG, CLARIFICATION, "no numbered list"),
    ("Tell me more about the fifth point", [THREE_OPTIONS], CLARIFICATION, "only 3 items"),
    ("How does that work", [], CLARIFICATION, 'Pronoun "that"'),
    ("What are its limitations?", [], CLARIFICATION, 'Pronoun "its"'),
    # A follow-up: the earlier question, answered, is the pronoun's antecedent.
    (
        "What are its limitations?",
        [user("How does BM25 ranking work?"), A_REPORT],
        RESEARCH,
        '"its" refers to',
    ),
    ("Summarize the paper", [], CLARIFICATION, '"the paper"'),
    (
        "Summarize the paper",
        [user("I read the paper 'Attention is all you need'")],
        RESEARCH,
        "Specific",
    ),
    ("Why does the code fail?", [], CLARIFICATION, '"the code"'),
    ("Which is better?", [], CLARIFICATION, 'Comparative "better"'),
    ("Is 16GB of RAM enough?", [], CLARIFICATION, '"Enough"'),
    ("What should I do?", [], CLARIFICATION, "names no subject"),
]


@pytest.mark.parametrize(("query", "history", "decision", "named"), OTHER_DECISIONS)
async def test_ordinals_pronouns_references_and_missing_scope(
    query: str, history: list[Message], decision: RoutingDecision, named: str
) -> None:
    got, reasoning = await route(query, history)
    assert got is decision, reasoning
    assert named in reasoning


CLARIFICATION_QUESTIONS = [
    # query, conversation before it, what the question asks about
    ("Tell me more about it", PRIOR_RAG, 'What does "it" refer to'),
    ("What are its limitations?", [], 'What does "it" refer to'),
    ("Use the approach from the paper", [], "Which paper do you mean?"),
    ("The best approach", [], "Best for what problem, and by which measure"),
    ("How many examples are enough?", PRIOR_CLASSIFICATION, "Enough for what goal?"),
    ("Tell me more about the second point", PRIOR_RAG, 'Which list is "the second point" from?'),
    ("What should I do?", [], "What topic should I research?"),
]


@pytest.mark.parametrize(("query", "history", "asks"), CLARIFICATION_QUESTIONS)
async def test_the_clarification_question_names_what_is_missing(
    query: str, history: list[Message], asks: str
) -> None:
    question = await ask_back(query, history)
    assert asks in question
    assert question.endswith("?")
    assert len(re.findall(r"[.?!](?:\s|$)", question)) <= 2  # one or two sentences


# The kinds of vagueness the dev set shows (../shared/data/rust-book-dev-questions.md), each asked back
# with a question that names what is missing, beside a clear question of the same shape.
VAGUE_KINDS = [
    # query, the rule that fires, what the clarification question asks for
    ("Which one is better?", "choice without options", "Which options are you choosing between?"),
    (
        "Which one should I pick?",
        "choice without options",
        "Which options are you choosing between?",
    ),
    (
        "And what about the other one?",
        "definite reference",
        'by "the other one"? Could you name both',
    ),
    (
        "Can you fix my code?",
        "definite reference",
        "Could you paste your code, with the error message",
    ),
    ("Why does my script crash?", "definite reference", "Could you paste your script"),
    ("Where should I put them?", "pronoun", 'What does "them" refer to'),
    ("What's the most important trait?", "superlative without scope", "Most important for what?"),
    ("Which is the fastest?", "superlative without scope", "Fastest for what problem"),
    ("How many are there?", "no subject", "How many of what?"),
]
SAME_SHAPE_BUT_CLEAR = [
    "Which one is faster, Vec or VecDeque?",
    "Where should I put integration tests in a Rust project?",
    "Why does my Rust code fail to compile with a borrow error?",
    "What is the most important trait in async Rust?",
    "What is the fastest sorting algorithm in the standard library?",
    "How many unsafe superpowers are there?",
]


@pytest.mark.parametrize(("query", "rule", "asks"), VAGUE_KINDS)
async def test_each_kind_of_vague_question_is_asked_back_naming_what_is_missing(
    query: str, rule: str, asks: str
) -> None:
    decision, reasoning = await route(query, [])
    question = await ask_back(query, [])

    assert decision is CLARIFICATION, reasoning
    found = find_ambiguity(query, [])
    assert isinstance(found, Ambiguity) and found.rule == rule
    assert asks in question, question
    assert question.endswith("?")


@pytest.mark.parametrize("query", SAME_SHAPE_BUT_CLEAR)
async def test_the_same_shapes_with_their_subject_named_are_researched(query: str) -> None:
    decision, reasoning = await route(query, [])
    assert decision is RESEARCH, reasoning


async def test_a_clarification_for_a_clear_question_still_asks_a_question() -> None:
    question = await ask_back("Explain Python decorators", [])
    assert question.endswith("?") and "python decorators" in question


# --- coordinator ----------------------------------------------------------------------------------

CLASSIFICATIONS = [
    # query, complexity, answered directly, recommended depth
    ("What is ownership in Rust?", Complexity.SIMPLE, True, Depth.LIGHT),
    ("Who created Python?", Complexity.SIMPLE, True, Depth.LIGHT),
    ("How does asyncio.gather run tasks concurrently?", Complexity.MODERATE, False, Depth.MEDIUM),
    (
        "What is the difference between a list and a tuple in Python?",
        Complexity.MODERATE,
        False,
        Depth.MEDIUM,
    ),
    ("What is the GIL and why does it exist?", Complexity.MODERATE, False, Depth.MEDIUM),
    ("Compare Python, Rust and Go for web servers", Complexity.COMPLEX, False, Depth.EXTENDED),
    (
        "How does Rust's ownership compare to garbage collection in Java, what are the performance "
        "implications for web servers, how do lifetimes interact with async code, and when should I choose Rust?",
        Complexity.COMPLEX,
        False,
        Depth.EXTENDED,
    ),
]


@pytest.mark.parametrize(("query", "complexity", "direct", "depth"), CLASSIFICATIONS)
async def test_complexity_follows_the_number_of_aspects(
    query: str, complexity: Complexity, direct: bool, depth: Depth
) -> None:
    out = await engine.coordinate(CoordinateInput(query=query, messages=[user(query)]))
    assert (out.complexity, out.is_simple, out.recommended_depth) == (complexity, direct, depth), (
        out.reasoning
    )
    assert "aspect" in out.reasoning and "content word" in out.reasoning


# --- search queries -------------------------------------------------------------------------------


async def test_background_search_uses_the_question_and_its_keywords() -> None:
    query = "How does asyncio.gather run tasks concurrently?"
    out = await engine.write_queries(WriteQueriesInput(query=query, max_queries=2))
    assert out.queries == [query, "asyncio.gather run tasks concurrently"]
    one = await engine.write_queries(WriteQueriesInput(query=query, max_queries=1))
    assert one.queries == [query]


async def test_step_queries_combine_the_step_with_the_question() -> None:
    step = PlanStep(
        title="Limitations and pitfalls of asyncio.gather",
        description="Known limitations and errors.",
    )
    out = await engine.write_queries(
        WriteQueriesInput(
            query="How does asyncio.gather run tasks concurrently?", step=step, max_queries=3
        )
    )
    assert 1 <= len(out.queries) <= 3
    assert len({q.lower() for q in out.queries}) == len(out.queries)
    assert all(q.strip() for q in out.queries)
    assert out.queries[0].startswith("Limitations and pitfalls of asyncio.gather")
    assert "tasks" in out.queries[0]  # the question's key term joins the step's title


async def test_a_step_for_one_part_of_a_question_searches_for_that_part_only(
    tmp_path: Path,
) -> None:
    """A two-part question's second step searched "How tall is Olympus Mons long year": the other
    part's words ranked the Mars page first, and a small model's research then read nothing about
    the volcano. Each part's step now searches with its own part's words, and finds its page."""
    from activities.corpus import LocalCorpus
    from tests.support.other_notes import PLANETS, write_notes

    query = "How long is a year on Mars and how tall is Olympus Mons?"
    step = PlanStep(
        title="How tall is Olympus Mons",
        description=f"Find what the sources say about how tall is Olympus Mons, as part of: {query}",
    )
    out = await engine.write_queries(WriteQueriesInput(query=query, step=step, max_queries=2))
    words = {w.lower() for q in out.queries for w in q.split()}
    assert not words & {"year", "long", "mars"}, out.queries
    corpus = LocalCorpus(write_notes(tmp_path / "planets", PLANETS), tmp_path / "index")
    assert all(corpus.search(q, 1)[0].title == "Olympus Mons" for q in out.queries), out.queries


async def test_the_planners_steps_search_for_their_own_part_and_not_for_the_template() -> None:
    """Each part's step read its description, which quotes the whole question after "as part
    of the question:", and searched "smart pointers part ownership": the template's "part" and
    the first part's "ownership" steered the search for smart pointers."""
    query = (
        "What are the ownership rules in Rust, how do borrowing and lifetimes work, "
        "and what are smart pointers?"
    )
    plan = await engine.plan(
        PlanInput(
            query=query, background="", completed_steps=[], min_steps=3, max_steps=3, iteration=0
        )
    )
    by_title = {s.title: PlanStep(title=s.title, description=s.description) for s in plan.steps}
    assert set(by_title) == {
        "What are the ownership rules in Rust",
        "How do borrowing and lifetimes work",
        "What are smart pointers",
    }
    for title, others in [
        ("What are smart pointers", {"ownership", "rules", "borrowing", "lifetimes"}),
        ("How do borrowing and lifetimes work", {"ownership", "smart", "pointers"}),
    ]:
        out = await engine.write_queries(
            WriteQueriesInput(query=query, step=by_title[title], max_queries=2)
        )
        words = {w.lower() for q in out.queries for w in q.split()}
        assert "part" not in words and not words & others, out.queries


# --- planner --------------------------------------------------------------------------------------

PLANNED_QUESTIONS = [
    "How does Rust's borrow checker prevent data races?",
    "What is the difference between a list and a tuple in Python?",
    "Tell me about lists, tuples, dictionaries, sets, strings and bytes in Python",
    "How do I read a file line by line in Python?",
    "What is the GIL and why does it exist?",
]


async def first_plan(
    query: str, depth: Depth, background: str = "", clarifications: list[str] | None = None
) -> list[str]:
    low, high = STEP_LIMITS[depth]
    draft = await engine.plan(
        PlanInput(
            query=query,
            clarifications=clarifications or [],
            background=background,
            completed_steps=[],
            min_steps=low,
            max_steps=high,
            iteration=1,
        )
    )
    return [s.title for s in draft.steps]


@pytest.mark.parametrize(
    ("query", "subject", "not_about"),
    [
        ("How did the Fresnel lens change lighthouse range?", "Fresnel lens", "change"),
        ("Why did the Roman Empire fall?", "Roman Empire", "fall"),
        ("What caused the 1929 stock market crash?", "1929 stock market crash", "caused"),
        ("Who discovered penicillin?", "penicillin", "discovered"),
        ("How did climate change affect farming?", "climate change", "affect"),
    ],
)
async def test_the_planners_own_steps_are_about_the_questions_subject_not_its_verb(
    query: str, subject: str, not_about: str
) -> None:
    """The planner's own steps read "What Fresnel lens change lighthouse is": the subject ran on
    into the question's verb, which is a noun too ("a change"). A verb that is also a noun stays
    in a subject it names ("climate change")."""
    titles = await first_plan(query, Depth.EXTENDED)
    own = [t for t in titles if t.lower() != query.rstrip("?").lower()]
    assert own and all(subject.lower() in t.lower() for t in own), titles
    assert not any(not_about in t.lower().replace(query.lower(), "") for t in own), titles


async def test_the_planners_own_steps_search_without_their_templates_words() -> None:
    """A step "Key facts about Fresnel lens" searched "fresnel lens main figures change": the words of
    the step's description ("The main facts and figures the sources give about ...")."""
    query = "How did the Fresnel lens change lighthouse range?"
    plan = await engine.plan(
        PlanInput(
            query=query, background="", completed_steps=[], min_steps=5, max_steps=5, iteration=0
        )
    )
    template = {"main", "figures", "give", "found", "came", "compared", "others", "sources"}
    for step in plan.steps[1:]:
        out = await engine.write_queries(
            WriteQueriesInput(
                query=query,
                step=PlanStep(title=step.title, description=step.description),
                max_queries=2,
            )
        )
        searched = out.queries[1].lower().split()
        assert "fresnel" in searched and not template & set(searched), (step.title, out.queries)


@pytest.mark.parametrize("depth", [Depth.LIGHT, Depth.MEDIUM, Depth.EXTENDED])
@pytest.mark.parametrize("query", PLANNED_QUESTIONS)
async def test_plan_size_respects_the_depth(query: str, depth: Depth) -> None:
    low, high = STEP_LIMITS[depth]
    titles = await first_plan(query, depth)
    assert low <= len(titles) <= high, titles
    assert len({t.lower() for t in titles}) == len(titles)


async def test_a_comparison_gets_one_step_per_item_and_a_comparison_step() -> None:
    titles = await first_plan(
        "What is the difference between a list and a tuple in Python?", Depth.MEDIUM
    )
    assert titles == ["list in Python", "tuple in Python", "Comparison of list and tuple in Python"]
    vs = await first_plan("asyncio gather vs wait", Depth.MEDIUM)
    assert vs == ["asyncio gather", "asyncio wait", "Comparison of asyncio gather and asyncio wait"]


async def test_clauses_become_steps_with_their_pronouns_resolved() -> None:
    titles = await first_plan("What is the GIL and why does it exist?", Depth.LIGHT)
    assert titles == ["What is the GIL", "Why does GIL exist"]


async def test_a_single_question_is_filled_up_with_aspect_templates() -> None:
    titles = await first_plan("Explain Python decorators", Depth.EXTENDED)
    assert titles[0] == "Explain Python decorators"
    assert titles[1:] == [
        "Definition and purpose of Python decorators",
        "How Python decorators work",
        "Usage and examples of Python decorators",
        "Limitations and pitfalls of Python decorators",
    ]


async def test_a_clarified_question_takes_its_subject_from_the_answer() -> None:
    titles = await first_plan(
        "Use the approach from the paper",
        Depth.MEDIUM,
        clarifications=["I meant the DAIL-SQL approach"],
    )
    assert titles[0] == "Use the DAIL-SQL approach from the paper"  # the question as meant
    assert all("DAIL-SQL" in t for t in titles)


async def test_a_follow_up_that_points_back_is_searched_with_what_it_follows() -> None:
    follow_up = "What do I have to do to publish my library to crates.io?"
    queries = (
        await engine.write_queries(
            WriteQueriesInput(
                query="Can I take it back if I find a serious bug afterwards?",
                follows_up=follow_up,
                max_queries=2,
            )
        )
    ).queries
    assert all(word in " ".join(queries) for word in ("publish", "library", "crates.io"))
    plan = await engine.plan(
        PlanInput(
            query="Can I take it back if I find a serious bug afterwards?",
            follows_up=follow_up,
            background="",
            completed_steps=[],
            min_steps=3,
            max_steps=6,
            iteration=1,
        )
    )
    assert "take" not in " ".join(s.title for s in plan.steps[1:]).split()  # no "How take works"
    assert all("crates.io" in s.title for s in plan.steps)
    assert (
        "It follows up: What do I have to do to publish my library to crates.io"
        in plan.steps[0].description
    )


async def test_a_question_is_taken_as_asked_even_when_it_looks_like_a_clarified_one() -> None:
    """Clarifications arrive as typed fields: text in the question itself is never read as one."""
    query = "Use the approach from the paper (clarified: I meant the DAIL-SQL approach)"
    report = await engine.synthesize(SynthesizeInput(query=query, plan=None, sources=[]))
    assert report.markdown.startswith(f"# {query}\n")
    assert "*Clarified:" not in report.markdown


async def replan(
    query: str, done: list[str], feedback: list[str], depth: Depth = Depth.MEDIUM
) -> list[str]:
    low, high = STEP_LIMITS[depth]
    completed = [
        PlanStep(
            title=t,
            status=StepStatus.COMPLETED,
            observation=f"Found something on {t} [1].",
            source_ids=[1],
        )
        for t in done
    ]
    draft = await engine.plan(
        PlanInput(
            query=query,
            background="",
            completed_steps=completed,
            feedback=feedback,
            min_steps=max(0, low - len(done)),
            max_steps=max(0, high - len(done)),
            iteration=2,
        )
    )
    return [s.title for s in draft.steps]


@pytest.mark.parametrize("depth", [Depth.MEDIUM, Depth.EXTENDED])
@pytest.mark.parametrize("query", PLANNED_QUESTIONS)
async def test_replanning_adds_only_new_steps(query: str, depth: Depth) -> None:
    low, high = STEP_LIMITS[depth]
    done = (await first_plan(query, depth))[:2]
    new = await replan(query, done, feedback=[], depth=depth)
    assert 1 <= len(new) <= high - len(done)
    assert not {t.lower() for t in new} & {t.lower() for t in done}


async def test_replanning_covers_the_reflectors_uncovered_terms_first() -> None:
    query = "What is the difference between a list and a tuple in Python?"
    new = await replan(
        query, ["list in Python"], ['Research "tuple" (no cited observation mentions it yet)']
    )
    assert new[0] == "tuple in Python"
    new = await replan(
        query, ["list in Python", "tuple in Python"], ['Research "immutability" (x)']
    )
    assert new[0] == "More on immutability"
    assert "tuple in Python" not in new


async def test_a_critique_that_names_no_gap_plans_no_step_about_the_critic() -> None:
    """A small model's rejection that named nothing reaches the planner in the engine's words; the
    steps it brings are about the question, never "More on critic" or "More on report"."""
    from activities.openai_engine.checking import UNNAMED_ISSUE

    query = "How did the Fresnel lens change lighthouse range?"
    new = await replan(query, ["Fresnel lens"], [UNNAMED_ISSUE])
    words = {w.lower().strip('"') for t in new for w in t.split()}
    assert not words & {"critic", "report", "naming", "missing", "incomplete"}, new


async def test_replanning_with_no_room_plans_nothing() -> None:
    query = "Explain Python decorators"
    assert await replan(query, ["a", "b", "c", "d", "e", "f"], [], depth=Depth.MEDIUM) == []


# --- researcher -----------------------------------------------------------------------------------

GATHER = Passage(
    source_id=3,
    title="asyncio — Coroutines and Tasks",
    url="https://docs.python.org/3/library/asyncio-task.html",
    text=(
        "Tasks are used to schedule coroutines concurrently.\n\n"
        "`asyncio.gather(*aws)` — Run awaitable objects in the aws sequence concurrently. "
        "If any awaitable in aws is a coroutine, gather automatically schedules it as a Task. "
        "If all awaitables are completed successfully, gather returns an aggregate list of returned values [12].\n\n"
        "```python\nresults = await asyncio.gather(a(), b())\n```\n\n"
        "The order of result values that gather returns corresponds to the order of awaitables in aws."
    ),
)
WAIT = Passage(
    source_id=7,
    title="asyncio — waiting primitives",
    url="https://docs.python.org/3/library/asyncio-task.html#waiting-primitives",
    text=(
        "Unlike gather, asyncio.wait returns two sets of tasks, done and pending, and does not raise. "
        "Run awaitable objects in the aws sequence concurrently. "
        "The cat sat on the mat and looked at the garden for a long while."
    ),
)
GATHER_STEP = PlanStep(
    title="How asyncio.gather runs tasks", description="The mechanism behind asyncio.gather."
)
GATHER_QUERY = "How does asyncio.gather run tasks concurrently?"


def sentences_of(observation: str) -> list[str]:
    return [s for s in re.split(r"(?<=\]\.)\s+", observation) if s]


async def test_an_observation_quotes_and_cites_only_the_sources_it_was_given() -> None:
    found = await engine.observe(
        ObserveInput(query=GATHER_QUERY, step=GATHER_STEP, passages=[GATHER, WAIT])
    )
    assert set(citations(found.observation)) <= {3, 7}
    assert found.source_ids and set(found.source_ids) == set(citations(found.observation))
    texts = " ".join([GATHER.text, WAIT.text])
    for sentence in sentences_of(found.observation):
        quoted = re.sub(r"\s*\[\d+\]", "", sentence)
        assert quoted.rstrip(".") in texts  # extracted, not written
    assert "results = await" not in found.observation  # code is not a finding
    assert "cat sat" not in found.observation  # off-topic sentences are not findings
    assert not found.needs_more


async def test_an_observation_stays_short_and_skips_repeated_sentences() -> None:
    copies = [GATHER.model_copy(update={"source_id": n}) for n in (1, 2, 3, 4)]
    found = await engine.observe(
        ObserveInput(query=GATHER_QUERY, step=GATHER_STEP, passages=copies)
    )
    assert len(found.observation) <= OBSERVATION_LIMIT
    assert len(sentences_of(found.observation)) <= 5
    assert found.observation.count("Run awaitable objects in the aws sequence concurrently") == 1


async def test_a_step_without_sources_asks_for_a_broader_step() -> None:
    found = await engine.observe(ObserveInput(query=GATHER_QUERY, step=GATHER_STEP, passages=[]))
    assert found.source_ids == [] and citations(found.observation) == []
    assert "No sources were found" in found.observation
    assert found.needs_more and found.suggested_agent == "researcher"
    assert found.suggested_query and found.suggested_query != GATHER_STEP.title
    assert "asyncio.gather" in found.suggested_query


async def test_a_step_with_one_relevant_sentence_asks_for_more() -> None:
    passage = WAIT.model_copy(
        update={"text": "Unlike gather, asyncio.wait returns two sets of tasks and does not raise."}
    )
    found = await engine.observe(
        ObserveInput(query=GATHER_QUERY, step=GATHER_STEP, passages=[passage])
    )
    assert citations(found.observation) == [7]
    assert found.needs_more and found.suggested_agent == "researcher"


async def test_sources_that_never_mention_the_step_give_no_findings() -> None:
    passage = WAIT.model_copy(
        update={"text": "The cat sat on the mat and looked at the garden for a long while."}
    )
    found = await engine.observe(
        ObserveInput(query=GATHER_QUERY, step=GATHER_STEP, passages=[passage])
    )
    assert found.source_ids == [] and citations(found.observation) == []
    assert found.needs_more


# --- reflector ------------------------------------------------------------------------------------

LIST_TUPLE = "What is the difference between a list and a tuple in Python?"
ON_LISTS = "Lists in Python are mutable sequences that can grow [1]."
ON_TUPLES = "A tuple in Python is an immutable sequence [2]."


def a_plan(*steps: tuple[str, str | None, StepStatus]) -> Plan:
    return Plan(
        title="plan",
        steps=[
            PlanStep(title=t, observation=o, status=s, source_ids=citations(o or ""))
            for t, o, s in steps
        ],
    )


async def reflect(plan: Plan, min_steps: int) -> tuple[ReflectionDecision, str, list[str]]:
    done = sum(s.status is StepStatus.COMPLETED for s in plan.steps)
    out = await engine.reflect(
        ReflectInput(
            query=LIST_TUPLE, plan=plan, completed_steps=done, min_steps=min_steps, sources_count=2
        )
    )
    return out.decision, out.reasoning, out.suggested_changes


DONE, PENDING = StepStatus.COMPLETED, StepStatus.PENDING

REFLECTIONS = [
    # plan, depth minimum, decision, what the reasoning must say
    (
        a_plan(("lists", f"{ON_LISTS} {ON_TUPLES}", DONE), ("more", None, PENDING)),
        3,
        ReflectionDecision.CONTINUE,
        "1 of minimum 3",
    ),
    (
        a_plan(("lists", ON_LISTS, DONE), ("tuples", ON_TUPLES, DONE), ("more", None, PENDING)),
        2,
        ReflectionDecision.COMPLETE,
        "coverage 1.00 (3/3",
    ),
    (
        a_plan(("lists", ON_LISTS, DONE), ("more", None, PENDING)),
        1,
        ReflectionDecision.CONTINUE,
        "coverage 0.67 (2/3",
    ),
    (
        a_plan(("lists", ON_LISTS, DONE)),
        3,
        ReflectionDecision.ADJUST,
        "no steps left below the minimum",
    ),
    (a_plan(("lists", ON_LISTS, DONE)), 1, ReflectionDecision.COMPLETE, "no steps left"),
    (
        a_plan(
            ("lists", ON_LISTS, DONE),
            ("tuples", "No sources were found.", DONE),
            ("more", None, PENDING),
        ),
        3,
        ReflectionDecision.ADJUST,
        "added little",
    ),
]


@pytest.mark.parametrize(("plan", "min_steps", "decision", "says"), REFLECTIONS)
async def test_reflection_decides_by_coverage_and_novelty(
    plan: Plan, min_steps: int, decision: ReflectionDecision, says: str
) -> None:
    got, reasoning, changes = await reflect(plan, min_steps)
    assert got is decision, reasoning
    assert says in reasoning
    assert "novelty" in reasoning
    if got is ReflectionDecision.ADJUST:
        assert changes


async def test_an_empty_step_makes_the_reflector_ask_for_the_uncovered_terms() -> None:
    plan = a_plan(
        ("lists", ON_LISTS, DONE),
        ("tuples", "No sources were found.", DONE),
        ("more", None, PENDING),
    )
    _, _, changes = await reflect(plan, 3)
    assert changes == ['Research "tuple" (no cited observation mentions it yet)']


@pytest.mark.parametrize("pending", [0, 1])
@pytest.mark.parametrize("done", [0, 1, 2, 4])
async def test_reflection_never_completes_before_the_minimum(done: int, pending: int) -> None:
    steps = [(f"step {i}", f"{ON_LISTS} {ON_TUPLES}", DONE) for i in range(done)]
    steps += [(f"next {i}", None, PENDING) for i in range(pending)]
    decision, reasoning, _ = await reflect(a_plan(*steps), min_steps=5)
    assert decision is not ReflectionDecision.COMPLETE, reasoning


# --- synthesizer ----------------------------------------------------------------------------------

SOURCES = [
    Source(
        id=1, url="https://docs.python.org/3/tutorial/datastructures.html", title="Data Structures"
    ),
    Source(id=2, url="https://docs.python.org/3/library/stdtypes.html", title="Built-in Types"),
    Source(id=3, url="https://example.org/never-cited", title="Never cited"),
]
NOTE = "The clarification question was not answered within 24 h; the research went ahead with the question as asked."


def research_plan() -> Plan:
    return Plan(
        title="plan",
        steps=[
            PlanStep(
                title="list in Python",
                observation=f"{ON_LISTS} Lists support append and pop [1, 9].",
                status=DONE,
                source_ids=[1],
            ),
            PlanStep(
                title="tuple in Python",
                observation=f"{ON_TUPLES} Tuples can be dictionary keys [2].",
                status=DONE,
                source_ids=[2],
            ),
            PlanStep(
                title="Comparison of list and tuple in Python",
                observation="No sources were found.",
                status=DONE,
            ),
            PlanStep(title="History of tuples", status=StepStatus.SKIPPED),
        ],
    )


async def test_the_report_cites_only_known_sources_and_lists_only_cited_ones() -> None:
    notes = [NOTE, "Removed citations to unknown sources: [7]."]
    report = await engine.synthesize(
        SynthesizeInput(query=LIST_TUPLE, plan=research_plan(), sources=SOURCES, notes=notes)
    )
    md = report.markdown
    assert set(citations(md)) == {1, 2}  # [9] in an observation and [7] in a note are not citations
    assert md.startswith(f"# {LIST_TUPLE}\n")
    sources = md.split("## Sources", 1)[1]
    assert "[1] Data Structures — https://docs.python.org/3/tutorial/datastructures.html" in sources
    assert "Never cited" not in md
    assert (
        report.engine == "offline"
        and report.usage.prompt_tokens == report.usage.completion_tokens == 0
    )


async def test_the_report_has_a_section_per_completed_step_and_notes_near_the_top() -> None:
    report = await engine.synthesize(
        SynthesizeInput(query=LIST_TUPLE, plan=research_plan(), sources=SOURCES, notes=[NOTE])
    )
    md = report.markdown
    headings = re.findall(r"^## (.+)$", md, re.M)
    # A step that found nothing to cite has no heading of its own: it is listed, with why, at the end.
    assert headings == [
        "Summary",
        "list in Python",
        "tuple in Python",
        "Not found in the sources",
        "Sources",
    ]
    assert "- Comparison of list and tuple in Python: No sources were found." in md
    assert md.index(f"> **Note:** {NOTE}") < md.index("## Summary")
    assert "A tuple in Python is an immutable sequence [2]." in md
    assert "Planned but not researched: History of tuples." in md


async def test_the_report_says_it_was_made_offline_by_extraction() -> None:
    report = await engine.synthesize(
        SynthesizeInput(query=LIST_TUPLE, plan=research_plan(), sources=SOURCES)
    )
    assert report.markdown.rstrip().endswith(DISCLAIMER)
    for words in ("offline", "extractive", "no LLM", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        assert words in DISCLAIMER


async def test_claims_are_the_cited_sentences_without_markers() -> None:
    report = await engine.synthesize(
        SynthesizeInput(query=LIST_TUPLE, plan=research_plan(), sources=SOURCES)
    )
    assert report.claims
    texts = [c.text for c in report.claims]
    assert "A tuple in Python is an immutable sequence." in texts
    assert len(texts) == len(set(texts))
    for claim in report.claims:
        assert "[" not in claim.text
        assert claim.source_ids and set(claim.source_ids) <= {1, 2}
        assert claim.verdict is Verdict.UNVERIFIED


async def test_a_direct_answer_is_built_from_the_passages() -> None:
    passages = [
        Passage(
            source_id=1,
            title="Data Structures",
            url=SOURCES[0].url,
            text="Lists in Python are mutable sequences that can grow. The weather was fine.",
        ),
        Passage(
            source_id=2,
            title="Built-in Types",
            url=SOURCES[1].url,
            text="A tuple in Python is an immutable sequence of arbitrary objects.",
        ),
        Passage(
            source_id=0,
            title="Not a source",
            url="https://example.org/x",
            text="Tuples and lists in Python are both sequences of objects.",
        ),
    ]
    report = await engine.synthesize(
        SynthesizeInput(query=LIST_TUPLE, plan=None, sources=SOURCES, passages=passages)
    )
    md = report.markdown
    assert "## Answer" in md
    assert set(citations(md)) == {1, 2}
    assert "weather" not in md and "Not a source" not in md
    assert [c.source_ids for c in report.claims] in ([[1], [2]], [[2], [1]])


async def test_a_report_without_findings_says_so() -> None:
    plan = Plan(title="plan", steps=[PlanStep(title="list in Python", status=StepStatus.PENDING)])
    report = await engine.synthesize(SynthesizeInput(query=LIST_TUPLE, plan=plan, sources=[]))
    assert "No findings were gathered" in report.markdown
    assert citations(report.markdown) == [] and report.claims == []


# --- determinism ----------------------------------------------------------------------------------

PIPELINE = """
import asyncio, json, sys
sys.path.insert(0, {repo!r})
from tests.activities.test_offline_engine import run_every_role
print(json.dumps(asyncio.run(run_every_role()), sort_keys=True))
"""


async def run_every_role() -> dict[str, object]:
    """Every role once on fixed inputs; the outputs as JSON-ready dicts."""
    query = GATHER_QUERY
    history = [*PRIOR_RAG, user("Tell me more about it")]
    plan = research_plan()
    outputs = [
        await engine.route(
            RouteInput(messages=history, clarification_count=0, max_clarifications=2)
        ),
        await engine.clarify(ClarifyInput(messages=history)),
        await engine.coordinate(CoordinateInput(query=query, messages=[user(query)])),
        await engine.write_queries(WriteQueriesInput(query=query, step=GATHER_STEP)),
        await engine.plan(
            PlanInput(
                query=query,
                background=f"- {GATHER.title}: {GATHER.text}",
                completed_steps=[],
                min_steps=5,
                max_steps=10,
                iteration=1,
            )
        ),
        await engine.observe(ObserveInput(query=query, step=GATHER_STEP, passages=[GATHER, WAIT])),
        await engine.reflect(
            ReflectInput(
                query=LIST_TUPLE, plan=plan, completed_steps=3, min_steps=3, sources_count=3
            )
        ),
        await engine.synthesize(
            SynthesizeInput(query=LIST_TUPLE, plan=plan, sources=SOURCES, notes=[NOTE])
        ),
    ]
    return {type(o).__name__: o.model_dump(mode="json") for o in outputs}


async def test_the_same_input_gives_the_same_output() -> None:
    assert await run_every_role() == await run_every_role()


def test_the_same_input_gives_the_same_output_in_another_process() -> None:
    """An activity retried on another worker must decide the same: string hashing differs
    between processes, so no set order may reach an output."""
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", PIPELINE.format(repo=str(REPO))],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]


# --- other languages -------------------------------------------------------------------


@pytest.mark.parametrize(
    "question, title, text, quoted",
    [
        (
            "Wie prüft der Borrow-Checker Referenzen in Rust?",
            "Borrow-Checker und Referenzen",
            "Jeder Wert in Rust hat einen Besitzer. Der Borrow-Checker prüft alle Referenzen zur Kompilierzeit.",
            "Der Borrow-Checker prüft alle Referenzen zur Kompilierzeit [1].",
        ),
        (
            "Как Rust проверяет ссылки во время компиляции?",
            "Проверка ссылок",
            "Каждое значение в Rust имеет владельца. Средство проверки заимствований проверяет все ссылки во время "
            "компиляции, чтобы они были действительны.",
            "Средство проверки заимствований проверяет все ссылки во время компиляции, чтобы они были действительны [1].",
        ),
        (
            "Rust 的借用检查器如何检查引用？",
            "借用检查器",
            "Rust 中的每一个值都有一个所有者。当所有者离开作用域，这个值将被丢弃。借用检查器在编译时检查所有引用是否有效。",
            "借用检查器在编译时检查所有引用是否有效 [1]。",
        ),
    ],
)
async def test_sources_in_any_language_are_quoted_with_their_citation(
    question: str, title: str, text: str, quoted: str
) -> None:
    """Unicode-aware words (CJK as character pairs, inflections of other alphabets meeting by
    their shared beginning): the offline engine answers from sources in the question's language."""
    observed = await OfflineEngine().observe(
        ObserveInput(
            query=question,
            step=PlanStep(title=title),
            passages=[Passage(source_id=1, title=title, url="file:///notes.md", text=text)],
        )
    )
    assert observed.observation == quoted and observed.source_ids == [1]


async def test_a_report_asked_in_another_language_says_the_offline_engine_cannot_write_it() -> None:
    plan = Plan(
        title="p",
        steps=[
            PlanStep(
                title="Ownership",
                status=StepStatus.COMPLETED,
                observation="Each value in Rust has an owner [1].",
                source_ids=[1],
            )
        ],
    )
    sources = [Source(id=1, url="file:///own.md", title="Ownership")]
    german = await OfflineEngine().synthesize(
        SynthesizeInput(
            query="Wie funktioniert Ownership in Rust?", language="de", plan=plan, sources=sources
        )
    )
    english = await OfflineEngine().synthesize(
        SynthesizeInput(query="How does ownership work in Rust?", plan=plan, sources=sources)
    )
    said = "This report is not in German: the offline engine cannot translate"
    assert said in german.markdown and german.markdown.count("German") == 1  # once, near the top
    assert german.markdown.index(said) < german.markdown.index("## Summary")
    assert "cannot translate" not in english.markdown


@pytest.mark.parametrize(
    "point, subject",
    [
        ("The with statement is used to wrap the execution of a block [2].", "the with statement"),
        ("The event loop runs tasks and callbacks [1].", "event loop"),
        ("BM25 ranks by term frequency [3].", "BM25"),
    ],
)
def test_a_point_is_named_by_the_words_that_name_it(point: str, subject: str) -> None:
    from activities.offline_engine.questions import _with_point, point_subject

    assert point_subject(point) == subject
    assert _with_point("Tell me more about the second point", point) == (
        f"Tell me more about {subject}"
    )
