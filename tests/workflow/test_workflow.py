"""The research state machine under the time-skipping test server, with activity doubles.

Each test is a behaviour a user would notice: when the assistant asks back, when it stops asking,
how it replans, when it may finish, and what happens when things fail or time runs out.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from tests.support.doubles import Script, default_reflect, slow
from workflows.accounting.stages import IllegalTransition, check_transition
from workflows.activity_models import ObserveOutput, ReflectOutput, RouteOutput
from workflows.models import (
    Depth,
    Message,
    QueryMode,
    ReflectionDecision,
    ResearchRequest,
    ResearchResult,
    ResearchStatus,
    RoutingDecision,
    Speaker,
    Stage,
    StepStatus,
)
from workflows.research import DeepResearchWorkflow

During = Callable[[WorkflowHandle[Any, Any]], Awaitable[None]]


async def run_research(
    client: Client, script: Script, request: ResearchRequest, during: During | None = None
) -> tuple[ResearchResult, ResearchStatus]:
    """Run one research to its end; returns the result and the final `status` query answer."""
    task_queue = f"tq-{uuid.uuid4()}"
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow],
        activities=script.activities(),
    ):
        handle = await client.start_workflow(
            DeepResearchWorkflow.run, request, id=f"wf-{uuid.uuid4()}", task_queue=task_queue
        )
        if during is not None:
            await during(handle)
        result = await handle.result()
        return result, await status(handle)


async def status(handle: WorkflowHandle[Any, Any]) -> ResearchStatus:
    return await handle.query(DeepResearchWorkflow.status)


async def wait_for_question(handle: WorkflowHandle[Any, Any], count: int = 1) -> ResearchStatus:
    for _ in range(400):
        current = await status(handle)
        if current.pending_question and current.clarification_count >= count:
            return current
        await asyncio.sleep(0.05)
    raise AssertionError(f"no clarification question; stage {current.stage}")


def answering(*answers: str) -> During:
    """Answer each clarification question in turn, through the update the starter uses."""

    async def during(handle: WorkflowHandle[Any, Any]) -> None:
        for i, answer in enumerate(answers, start=1):
            await wait_for_question(handle, i)
            await handle.execute_update(DeepResearchWorkflow.answer_clarification, answer)

    return during


def offline_router_script() -> Script:
    """Routing and clarification by the real offline engine; everything else by doubles."""
    from activities.offline_engine import OfflineEngine

    engine = OfflineEngine()
    return Script(route=engine.route, clarify=engine.clarify)


def always(decision: RoutingDecision) -> Callable[[Any], RouteOutput]:
    return lambda inp: RouteOutput(decision=decision, reasoning="scripted")


# --- routing: seed 000's example decisions -------------------------------------------------------

PRIOR_RAG = [
    Message(
        role=Speaker.ASSISTANT, content="RAG systems use retrieval to ground answers in documents."
    )
]
PRIOR_CLASSIFICATION = [Message(role=Speaker.USER, content="I'm working on classification")]

SEED_000_DECISIONS = [
    # query, conversation before it, does the assistant ask back?
    ("Tell me more about it", PRIOR_RAG, True),
    ("Which prompt gave highest accuracy in Zhang 2024?", [], False),
    ("What did OpenAI release this month?", [], False),
    ("The best approach", [], True),
    ("How many examples are enough?", PRIOR_CLASSIFICATION, True),
    ("Use the approach from the paper", [], True),
]


@pytest.mark.parametrize(("query", "history", "asks_back"), SEED_000_DECISIONS)
async def test_seed_000_example_decisions_with_the_offline_router(
    time_skipping_env: WorkflowEnvironment, query: str, history: list[Message], asks_back: bool
) -> None:
    script = offline_router_script()
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query=query, history=history, depth=Depth.LIGHT),
        during=answering("the retrieval step of RAG pipelines") if asks_back else None,
    )
    assert len(result.clarifications) == (1 if asks_back else 0)
    assert result.outcome is Stage.COMPLETED
    if asks_back:
        assert result.clarifications[0].question.endswith("?")


async def test_a_reply_to_a_clarification_goes_to_research_without_an_llm_call(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = offline_router_script()
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="Use the approach from the paper", depth=Depth.LIGHT),
        during=answering("I meant the DAIL-SQL approach"),
    )
    assert len(script.calls["route"]) == 1  # the reply was routed by the shortcut
    assert result.clarifications[0].answer == "I meant the DAIL-SQL approach"
    assert script.calls["plan"][0].clarifications == [
        "I meant the DAIL-SQL approach"
    ]  # a typed field, not text in the query
    assert result.stage_history[:5] == [
        Stage.ROUTING,
        Stage.CLARIFYING,
        Stage.AWAITING_ANSWER,
        Stage.ROUTING,
        Stage.COORDINATING,
    ]


async def test_a_clarified_question_is_planned_searched_and_titled_as_the_person_meant_it(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    from activities.offline_engine import OfflineEngine

    engine = OfflineEngine()
    script = Script(
        route=engine.route,
        clarify=engine.clarify,
        coordinate=engine.coordinate,
        write_queries=engine.write_queries,
        plan=engine.plan,
        synthesize=engine.synthesize,
    )
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="Tell me more about it", depth=Depth.LIGHT),
        during=answering("asyncio task cancellation"),
    )

    assert result.query == "Tell me more about it"  # what was asked stays what was asked
    assert (
        result.plan is not None
        and result.plan.title == "Research plan: Tell me more about asyncio task cancellation"
    )
    assert all("asyncio task cancellation" in q.query for q in script.calls["search"][:1])
    assert all("cancellation" in q.query for q in script.calls["search"])
    assert result.report_markdown.startswith(
        "# Tell me more about asyncio task cancellation\n\n*Asked: Tell me more about it*\n"
    )
    assert script.calls["plan"][0].topic_text() == (
        'Tell me more about asyncio task cancellation (asked as: "Tell me more about it") '
        "(clarified: asyncio task cancellation)"
    )


async def test_without_the_reply_shortcut_the_llm_judges_every_reply_and_the_limit_stops_the_loop(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(route=always(RoutingDecision.CLARIFICATION))
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="The best approach", reply_shortcut=False, depth=Depth.LIGHT),
        during=answering("still vague", "still vague, sorry"),
    )
    assert len(result.clarifications) == 2  # max_clarifications defaults to 2
    assert len(script.calls["route"]) == 2  # the third routing is the counter limit, no LLM
    assert result.outcome is Stage.COMPLETED


@pytest.mark.parametrize("limit", [0, 1, 3])
async def test_the_clarification_limit_forces_research(
    time_skipping_env: WorkflowEnvironment, limit: int
) -> None:
    script = Script(route=always(RoutingDecision.CLARIFICATION))
    answers = [f"answer {i}" for i in range(limit)]
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(
            query="The best approach",
            reply_shortcut=False,
            max_clarifications=limit,
            depth=Depth.LIGHT,
        ),
        during=answering(*answers),
    )
    assert len(result.clarifications) == limit
    assert Stage.PLANNING in result.stage_history


async def test_routing_that_keeps_failing_falls_back_to_research(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    def broken(inp: Any) -> Any:
        raise ApplicationError("endpoint unavailable", type="LLMUnavailable")

    script = Script(route=broken)
    result, _ = await run_research(
        time_skipping_env.client, script, ResearchRequest(query="Tell me more about it")
    )
    assert len(script.calls["route"]) == 4  # the retry policy's maximum attempts
    assert result.clarifications == []
    assert result.outcome is Stage.COMPLETED
    assert any("route failed" in note for note in result.notes)


async def test_an_unanswered_question_times_out_after_24_hours_and_the_report_says_so(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(route=always(RoutingDecision.CLARIFICATION))
    result, _ = await run_research(
        time_skipping_env.client, script, ResearchRequest(query="The best approach")
    )
    assert result.clarifications[0].answer is None
    assert any("not answered within 24 h" in note for note in result.notes)
    assert "not answered within 24 h" in result.report_markdown
    assert result.outcome is Stage.COMPLETED


async def test_a_signal_when_nothing_is_pending_is_recorded_and_ignored(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    async def early_signal(handle: WorkflowHandle[Any, Any]) -> None:
        await handle.signal("clarification_answer", "an answer nobody asked for")

    result, final = await run_research(
        time_skipping_env.client,
        Script(),
        ResearchRequest(query="How do Rust lifetimes work?"),
        during=early_signal,
    )
    assert result.outcome is Stage.COMPLETED
    assert result.clarifications == []
    assert final.ignored_signals == [
        "clarification_answer ignored: no clarification question is pending"
    ]


async def test_a_malformed_signal_is_ignored_and_the_question_stays_open(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    async def malformed_then_good(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_question(handle)
        await handle.signal("clarification_answer", {"not": "a string"})
        await handle.signal("clarification_answer", "   ")
        current = await status(handle)
        assert current.stage is Stage.AWAITING_ANSWER and current.pending_question
        await handle.signal("clarification_answer", "the 2024 survey")

    script = Script(route=always(RoutingDecision.CLARIFICATION))
    result, final = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="The best approach", max_clarifications=1),
        during=malformed_then_good,
    )
    assert result.clarifications[0].answer == "the 2024 survey"
    ignored = final.ignored_signals
    assert ignored == [
        "clarification_answer ignored: the answer must be a JSON string, got dict",
        "clarification_answer ignored: the answer is empty",
    ]


async def test_an_answer_through_the_update_is_refused_when_nothing_is_pending(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    from temporalio.client import WorkflowUpdateFailedError

    async def answer_too_early(handle: WorkflowHandle[Any, Any]) -> None:
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(DeepResearchWorkflow.answer_clarification, "unasked")
        assert "no clarification question is pending" in str(refused.value.cause)

    result, _ = await run_research(
        time_skipping_env.client,
        Script(),
        ResearchRequest(query="How do Rust lifetimes work?"),
        during=answer_too_early,
    )
    assert result.outcome is Stage.COMPLETED


# --- planning and reflection ------------------------------------------------------------------------


async def test_adjust_keeps_completed_steps_and_adds_only_new_ones(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    decisions = iter([ReflectionDecision.ADJUST])

    def reflect(inp: Any) -> ReflectOutput:
        decision = next(decisions, ReflectionDecision.CONTINUE)
        return ReflectOutput(
            decision=decision, reasoning="gap found", suggested_changes=["cover lifetimes"]
        )

    script = Script(reflect=reflect)
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.MEDIUM),
    )
    first_plan_steps = [s.title for s in script.calls["plan"][0:1][0].completed_steps]
    assert first_plan_steps == []
    replan = script.calls["plan"][1]
    assert [s.title for s in replan.completed_steps] == ["Aspect 1 (plan 1)"]
    assert replan.feedback == ["cover lifetimes"]
    assert result.plan is not None and result.plan_iterations == 2
    titles = [s.title for s in result.plan.steps]
    assert titles[0] == "Aspect 1 (plan 1)" and result.plan.steps[0].status is StepStatus.COMPLETED
    assert all("(plan 2)" in t for t in titles[1:])  # the old pending steps were replaced
    assert result.plan.steps[0].observation  # the completed step's finding survived


async def test_after_three_plans_adjust_counts_as_continue(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(
        reflect=lambda inp: ReflectOutput(
            decision=ReflectionDecision.ADJUST, reasoning="always unhappy"
        )
    )
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.MEDIUM),
    )
    assert len(script.calls["plan"]) == 3
    assert result.plan_iterations == 3
    assert any(r.reasoning.startswith("ADJUST counted as") for r in result.reflections)
    assert result.outcome is Stage.COMPLETED


async def test_complete_is_refused_until_the_depths_minimum_steps_are_done(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(
        reflect=lambda inp: ReflectOutput(decision=ReflectionDecision.COMPLETE, reasoning="enough")
    )
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.MEDIUM),
    )
    assert result.plan is not None
    done = [s for s in result.plan.steps if s.status is StepStatus.COMPLETED]
    assert len(done) == 3  # medium depth: at least 3 steps
    assert [r.decision for r in result.reflections] == [
        ReflectionDecision.CONTINUE,
        ReflectionDecision.CONTINUE,
        ReflectionDecision.COMPLETE,
    ]
    assert result.reflections[0].reasoning.startswith(
        "COMPLETE refused: 1 of the medium depth's minimum 3"
    )


async def test_a_step_that_needs_more_work_gets_a_new_step_and_unknown_agents_are_refused(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    requests = iter(
        [
            ("researcher", "Rust lifetime error messages"),
            ("fixer", "fix the code"),
        ]
    )

    def observe(inp: Any) -> ObserveOutput:
        agent, query = next(requests, (None, None))
        ids = [p.source_id for p in inp.passages]
        return ObserveOutput(
            observation=f"thin findings [{ids[0]}]",
            source_ids=ids,
            needs_more=agent is not None,
            suggested_agent=agent,
            suggested_query=query,
        )

    script = Script(observe=observe)
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.LIGHT),
    )
    assert [(lb.agent, lb.accepted) for lb in result.loop_backs] == [
        ("researcher", True),
        ("fixer", False),
    ]
    assert "unknown agent 'fixer'" in result.loop_backs[1].reason
    assert result.plan is not None
    appended = [s for s in result.plan.steps if s.origin == "loop_back"]
    assert [s.title for s in appended] == ["Rust lifetime error messages"]
    assert appended[0].status is StepStatus.COMPLETED  # the appended step was researched


async def test_every_citation_in_the_report_resolves_to_a_source(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    def synthesize(inp: Any) -> Any:
        from workflows.activity_models import SynthesizeOutput

        return SynthesizeOutput(
            markdown="Claim one [1]. Claim two [99]. Both [1, 42].", engine="double"
        )

    result, _ = await run_research(
        time_skipping_env.client,
        Script(synthesize=synthesize),
        ResearchRequest(query="How do Rust lifetimes work?", verify=False),  # keep every sentence
    )
    assert result.report_markdown.splitlines()[0] == "Claim one [1]. Claim two . Both [1]."
    assert any("[99], [42]" in note for note in result.notes)


async def test_a_rejected_key_ends_the_research_with_one_line(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    from temporalio.client import WorkflowFailureError

    def rejected(inp: Any) -> Any:
        raise ApplicationError(
            "the LLM endpoint rejected the API key (401)", type="LLMAuthError", non_retryable=True
        )

    script = Script(coordinate=rejected)
    with pytest.raises(WorkflowFailureError) as failed:
        await run_research(
            time_skipping_env.client, script, ResearchRequest(query="How do Rust lifetimes work?")
        )
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.non_retryable
    assert cause.message == "coordinate: the LLM endpoint rejected the API key (401)"
    assert len(script.calls["coordinate"]) == 1


async def test_simple_mode_answers_directly_from_a_quick_search(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script()
    result, _ = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="What is a Rust crate?", mode=QueryMode.SIMPLE),
    )
    assert result.plan is None
    assert "plan" not in script.calls and "read_page" not in script.calls
    assert result.sources and "[1]" in result.report_markdown
    assert Stage.PLANNING not in result.stage_history


# --- the state machine itself -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (Stage.ROUTING, Stage.PLANNING),
        (Stage.AWAITING_ANSWER, Stage.SYNTHESIZING),
        (Stage.PLANNING, Stage.REFLECTING),
        (Stage.COMPLETED, Stage.ROUTING),
        (Stage.CANCELLED, Stage.FAILED),
    ],
)
def test_an_illegal_transition_raises_a_clear_error(current: Stage, target: Stage) -> None:
    with pytest.raises(
        IllegalTransition, match=f"illegal stage transition {current.value} -> {target.value}"
    ):
        check_transition(current, target)


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (Stage.ROUTING, Stage.CLARIFYING),
        (Stage.AWAITING_ANSWER, Stage.ROUTING),
        (Stage.REFLECTING, Stage.PLANNING),
        (Stage.RESEARCHING, Stage.SYNTHESIZING),
        (Stage.AWAITING_ANSWER, Stage.CANCELLED),
    ],
)
def test_legal_transitions_pass(current: Stage, target: Stage) -> None:
    check_transition(current, target)


@pytest.mark.parametrize(
    "field, value",
    [
        ("clarification_timeout_s", 1e300),
        ("time_budget_s", 1e12),
        ("max_clarifications", 99),
        ("depth", "bottomless"),
    ],
)
async def test_a_bad_request_from_another_client_fails_at_once_with_one_line(
    time_skipping_env: WorkflowEnvironment, field: str, value: Any
) -> None:
    client = time_skipping_env.client
    task_queue = f"tq-{uuid.uuid4()}"
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow],
        activities=Script().activities(),
    ):
        handle = await client.start_workflow(
            "DeepResearchWorkflow",
            {"query": "How do Rust lifetimes work?", field: value},
            id=f"wf-{uuid.uuid4()}",
            task_queue=task_queue,
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
    message = failure.value.cause.message  # type: ignore[union-attr]
    assert message.startswith(f"invalid research request: {field}: "), message
    assert "\n" not in message


async def test_a_start_input_that_cannot_be_decoded_fails_at_once_with_one_line(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """A lone surrogate (the Temporal CLI sends one as `\\ud800`) is not valid text anywhere later:
    the research fails on its first task with one line instead of failing every task forever."""
    from temporalio.api.common.v1 import Payload
    from temporalio.common import RawValue

    raw = RawValue(
        Payload(
            metadata={"encoding": b"json/plain"},
            data=b'{"query": "How do Rust lifetimes work \\ud800 here?"}',
        )
    )
    client = time_skipping_env.client
    task_queue = f"tq-{uuid.uuid4()}"
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow],
        activities=Script().activities(),
    ):
        handle = await client.start_workflow(
            "DeepResearchWorkflow", raw, id=f"wf-{uuid.uuid4()}", task_queue=task_queue
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
    message = failure.value.cause.message  # type: ignore[union-attr]
    assert message.startswith("invalid research request: "), message
    assert "surrogate" in message and "\n" not in message


async def test_control_characters_in_a_question_are_removed_where_it_enters(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    hostile = "How do Rust \x1b]0;owned\x07lifetimes\u202e work?"
    result, _ = await run_research(
        time_skipping_env.client, Script(), ResearchRequest(query=hostile)
    )
    assert result.query == "How do Rust ]0;ownedlifetimes work?"
    assert not any(ch in result.report_markdown for ch in ("\x1b", "\x07", "\u202e"))


async def test_refused_signals_are_counted_but_only_the_last_ones_kept(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    async def flood(handle: WorkflowHandle[Any, Any]) -> None:
        for i in range(60):
            await handle.signal("clarification_answer", f"nobody asked {i}")

    script = Script(reflect=slow(0.5, default_reflect))
    _, final = await run_research(
        time_skipping_env.client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?"),
        during=flood,
    )
    assert final.ignored_signals_count == 60
    assert len(final.ignored_signals) == 20
