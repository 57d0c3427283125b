"""The `events` query: what a person following a research sees (time-skipping server, and the dev
server where real time must pass).

Whatever happens (a clarification, an ADJUST re-plan, a spent time budget, a cancellation, a
flood of bad signals), the events are gapless from 1, their stage events are `stage_history`, in
order, and the last one says how the research ended.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from tests.support.doubles import Script
from tests.workflow.test_workflow import always, wait_for_question
from tests.workflow.test_workflow_realtime import slow_after_first_step, three_steps
from workflows.activity_models import ReflectOutput
from workflows.events import EVENTS_KEPT, Event, EventKind
from workflows.models import (
    Depth,
    ReflectionDecision,
    ResearchRequest,
    ResearchResult,
    ResearchStatus,
    RoutingDecision,
    Stage,
)
from workflows.research import DeepResearchWorkflow


async def events(handle: WorkflowHandle[Any, Any], since: int = 0) -> list[Event]:
    return await handle.query(DeepResearchWorkflow.events, since)


async def run_watched(
    client: Any, script: Script, request: ResearchRequest, during: Any = None
) -> tuple[ResearchResult, ResearchStatus, list[Event]]:
    """Run one research to its end; the result, the final status and every event (queried while
    the worker still runs: a query on a closed workflow is answered by replaying it)."""
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
        return result, await handle.query(DeepResearchWorkflow.status), await events(handle)


def assert_a_faithful_record(seen: list[Event], result: ResearchResult) -> None:
    """Gapless from 1, stage events exactly `stage_history`, a `done` event last."""
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))
    assert [e.data["stage"] for e in seen if e.kind is EventKind.STAGE] == [
        s.value for s in result.stage_history
    ]
    assert seen[-1].kind is EventKind.DONE and seen[-1].data["outcome"] == result.outcome.value
    assert [e.at for e in seen] == sorted(e.at for e in seen)
    assert [e.data["id"] for e in seen if e.kind is EventKind.SOURCE] == [
        s.id for s in result.sources
    ]
    assert all("\n" not in e.text for e in seen)


def kinds(seen: list[Event]) -> list[str]:
    return [e.kind.value for e in seen]


async def test_a_clarification_and_an_adjust_appear_in_the_order_they_happened(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    decisions = iter([ReflectionDecision.ADJUST])

    def reflect(inp: Any) -> ReflectOutput:
        return ReflectOutput(
            decision=next(decisions, ReflectionDecision.CONTINUE),
            reasoning="gap: lifetimes",
            suggested_changes=["cover lifetimes"],
        )

    seen_while_waiting: list[Event] = []

    async def answer(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_question(handle)
        seen_while_waiting.extend(await events(handle))
        await handle.execute_update(DeepResearchWorkflow.answer_clarification, "the 2021 edition")

    script = Script(route=always(RoutingDecision.CLARIFICATION), reflect=reflect)
    result, final, seen = await run_watched(
        time_skipping_env.client,
        script,
        ResearchRequest(query="How do they work?", depth=Depth.MEDIUM),
        during=answer,
    )
    assert_a_faithful_record(seen, result)

    # While the question waited, the stream ended with it, and nothing later is invented.
    assert kinds(seen_while_waiting) == ["stage", "stage", "stage", "question"]
    assert seen_while_waiting[-1].data["question"] == result.clarifications[0].question
    assert seen[: len(seen_while_waiting)] == seen_while_waiting
    answered = seen[len(seen_while_waiting)]
    assert answered.kind is EventKind.ANSWER and answered.data == {
        "answer": "the 2021 edition",
        "by": "person",
    }

    plans = [e for e in seen if e.kind is EventKind.PLAN]
    assert [p.data["iteration"] for p in plans] == [1, 2]
    reflections = [e for e in seen if e.kind is EventKind.REFLECTION]
    assert [r.data["decision"] for r in reflections] == [
        r.decision.value for r in result.reflections
    ]
    assert (
        reflections[0].data["decision"] == "ADJUST"
        and reflections[0].data["reason"] == "gap: lifetimes"
    )
    # The ADJUST's re-plan comes right after its reflection, through the planning stage.
    after = seen[seen.index(reflections[0]) + 1 :]
    assert kinds(after)[:2] == ["stage", "plan"] and after[0].data["stage"] == "planning"

    started = [e.data["index"] for e in seen if e.kind is EventKind.STEP_STARTED]
    done = [e for e in seen if e.kind is EventKind.STEP_DONE]
    assert started == [d.data["index"] for d in done] == list(range(1, len(done) + 1))
    assert all(
        d.data["source_ids"] and {s["id"] for s in d.data["sources"]} == set(d.data["source_ids"])
        for d in done
    )
    assert kinds(seen).count("verification") == 1
    assert final.last_event_seq == len(seen) and final.first_event_seq == 1


async def test_a_cancellation_while_a_question_waits_ends_the_stream_at_once(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    async def cancel(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_question(handle)
        await handle.cancel()

    script = Script(route=always(RoutingDecision.CLARIFICATION))
    result, _, seen = await run_watched(
        time_skipping_env.client, script, ResearchRequest(query="How do they work?"), during=cancel
    )
    assert result.outcome is Stage.CANCELLED
    assert_a_faithful_record(seen, result)
    assert kinds(seen) == ["stage", "stage", "stage", "question", "stage", "done"]


# --- in real time on the dev server: the time-skipping server would fast-forward a budget while an
# activity runs, and the activities these leave running would hold up the tests after them.


async def test_a_spent_time_budget_ends_the_steps_and_the_stream_says_so(
    dev_client: Client,
) -> None:
    script = Script(plan=three_steps, read_page=slow_after_first_step)
    result, _, seen = await run_watched(
        dev_client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.LIGHT, time_budget_s=2),
    )
    assert any("time budget of 2 s ran out" in note for note in result.notes)
    assert_a_faithful_record(seen, result)
    stages = [e.data["stage"] for e in seen if e.kind is EventKind.STAGE]
    assert stages[-4:] == ["researching", "synthesizing", "verifying", "completed"]
    assert [e.data["index"] for e in seen if e.kind is EventKind.STEP_DONE] == [
        1
    ]  # step 2 never finished
    assert any("time budget of 2 s ran out" in note for note in seen[-1].data["notes"])
    [spent] = [e for e in seen if e.kind is EventKind.BUDGET]
    assert spent.data["exhausted"] == "time" and (
        spent.data["steps_done"],
        spent.data["steps_planned"],
    ) == (1, 3)
    assert spent.text.startswith("time budget spent after 1 of 3 steps")


async def test_a_cancelled_research_ends_its_stream_with_the_cancellation(
    dev_client: Client,
) -> None:
    async def cancel_in_step_2(handle: WorkflowHandle[Any, Any]) -> None:
        seen: list[Event] = []
        while not any(e.kind is EventKind.STEP_STARTED and e.data["index"] == 2 for e in seen):
            seen += await events(handle, seen[-1].seq if seen else 0)
            await asyncio.sleep(0.05)
        await handle.cancel()

    script = Script(plan=three_steps, read_page=slow_after_first_step)
    result, _, seen = await run_watched(
        dev_client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.LIGHT),
        during=cancel_in_step_2,
    )
    assert result.outcome is Stage.CANCELLED
    assert_a_faithful_record(seen, result)
    assert kinds(seen)[-4:] == ["stage", "verification", "stage", "done"]
    assert [seen[-4].data["stage"], seen[-2].data["stage"]] == ["synthesizing", "cancelled"]
    assert seen[-3].text == "claims not verified (the research was cancelled)"


async def test_past_500_events_the_oldest_are_dropped_and_the_query_says_where_it_starts(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """A client that sends bad signals in a loop: each refusal is an event, the log stays bounded."""
    flood = EVENTS_KEPT + 20

    async def flood_then_answer(handle: WorkflowHandle[Any, Any]) -> None:
        await wait_for_question(handle)
        for start in range(0, flood, 50):
            await asyncio.gather(
                *(
                    handle.signal("clarification_answer", 42)
                    for _ in range(start, min(flood, start + 50))
                )
            )
        status = await handle.query(DeepResearchWorkflow.status)
        last, first = status.last_event_seq, status.first_event_seq
        assert (
            last == 4 + flood and first == last - EVENTS_KEPT + 1
        )  # 3 stages + the question before the flood

        kept = await events(handle)
        assert len(kept) == EVENTS_KEPT and kept[0].seq == first and kept[-1].seq == last
        assert [e.seq for e in kept] == list(range(first, last + 1))
        assert all(e.kind is EventKind.SIGNAL_IGNORED for e in kept)
        assert await events(handle, 10) == kept  # 11 .. first-1 are gone: the answer starts later
        assert await events(handle, first - 1) == kept
        assert await events(handle, first) == kept[1:]
        assert await events(handle, last - 1) == kept[-1:]
        assert await events(handle, last) == []
        assert await events(handle, last + 100) == []
        assert await events(handle, -5) == kept
        await handle.execute_update(DeepResearchWorkflow.answer_clarification, "the 2021 edition")

    script = Script(route=always(RoutingDecision.CLARIFICATION))
    result, final, kept = await run_watched(
        time_skipping_env.client,
        script,
        ResearchRequest(query="How do they work?", max_clarifications=1),
        during=flood_then_answer,
    )
    assert result.outcome is Stage.COMPLETED and final.ignored_signals_count == flood
    assert len(kept) == EVENTS_KEPT and kept[-1].kind is EventKind.DONE
    assert [e.seq for e in kept] == list(
        range(final.last_event_seq - EVENTS_KEPT + 1, final.last_event_seq + 1)
    )
