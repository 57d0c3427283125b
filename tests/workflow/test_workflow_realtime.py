"""Time budgets and cancellation, on the dev server in real time, with activity doubles.

These need wall-clock time to pass while an activity is running, which the time-skipping server
would fast-forward, so they run on the dev server with budgets of a couple of seconds.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker

from tests.support.doubles import Script, default_plan, default_read
from workflows.activity_models import (
    PlanOutput,
    ReadPageInput,
    RouteOutput,
    StepDraft,
)
from workflows.models import (
    BudgetKind,
    Depth,
    ResearchRequest,
    ResearchResult,
    RoutingDecision,
    Stage,
    StepStatus,
)
from workflows.research import DeepResearchWorkflow


def three_steps(inp: Any) -> PlanOutput:
    steps = [StepDraft(title=f"Aspect {i}", description="look it up") for i in (1, 2, 3)]
    return (
        PlanOutput(title="three aspects", thought="", steps=steps)
        if not inp.completed_steps
        else default_plan(inp)
    )


async def slow_after_first_step(req: ReadPageInput) -> Any:
    if "Aspect 1" not in req.focus:
        await asyncio.sleep(20)
    return default_read(req)


async def run(
    client: Client,
    script: Script,
    request: ResearchRequest,
    cancel_when: Any = None,
    children: list[str] | None = None,
) -> ResearchResult:
    """REQUEST researched to its end (cancelled once CANCEL_WHEN(status) holds); CHILDREN, when
    given, gets the ids of the child workflows it started (its notices)."""
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
        if cancel_when is not None:
            for _ in range(200):
                if cancel_when(await handle.query(DeepResearchWorkflow.status)):
                    break
                await asyncio.sleep(0.05)
            await handle.cancel()
        result = await handle.result()
        if children is not None:
            children += [
                e.start_child_workflow_execution_initiated_event_attributes.workflow_id
                async for e in handle.fetch_history_events()
                if e.HasField("start_child_workflow_execution_initiated_event_attributes")
            ]
        return result


async def test_a_spent_time_budget_goes_to_synthesis_with_what_it_has(dev_client: Client) -> None:
    script = Script(plan=three_steps, read_page=slow_after_first_step)
    result = await run(
        dev_client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.LIGHT, time_budget_s=2),
    )
    assert result.outcome is Stage.COMPLETED
    assert any("time budget of 2 s ran out" in note for note in result.notes)
    # The time budget is a budget like the token and cost ones (workflows/accounting/budget.py).
    assert result.budget is not None and result.budget.exhausted is BudgetKind.TIME
    assert result.report_markdown.startswith(
        "> Partial report: the time budget of 2 s ran out after 1 of 3 steps."
    )
    assert result.plan is not None
    assert [s.status for s in result.plan.steps] == [
        StepStatus.COMPLETED,
        StepStatus.SKIPPED,
        StepStatus.SKIPPED,
    ]
    assert "Found facts for Aspect 1" in result.report_markdown
    assert result.stage_history[-4:] == [
        Stage.RESEARCHING,
        Stage.SYNTHESIZING,
        Stage.VERIFYING,
        Stage.COMPLETED,
    ]
    assert 2 <= result.stats.duration_s < 15


async def test_a_cancelled_research_still_returns_what_it_had(dev_client: Client) -> None:
    script = Script(plan=three_steps, read_page=slow_after_first_step)
    result = await run(
        dev_client,
        script,
        ResearchRequest(query="How do Rust lifetimes work?", depth=Depth.LIGHT),
        cancel_when=lambda status: (
            status.current_step_index == 1 and status.stage is Stage.RESEARCHING
        ),
    )
    assert result.outcome is Stage.CANCELLED
    assert "Found facts for Aspect 1" in result.report_markdown
    assert any("cancelled" in note for note in result.notes)
    assert result.plan is not None and result.plan.steps[0].status is StepStatus.COMPLETED


async def test_cancelling_while_waiting_for_an_answer_ends_at_once(dev_client: Client) -> None:
    script = Script(
        route=lambda inp: RouteOutput(decision=RoutingDecision.CLARIFICATION, reasoning="vague")
    )
    result = await run(
        dev_client,
        script,
        ResearchRequest(query="The best approach"),
        cancel_when=lambda status: status.pending_question is not None,
    )
    assert result.outcome is Stage.CANCELLED
    assert "cancelled before it began" in result.report_markdown
    assert result.stage_history[-1] is Stage.CANCELLED
    assert "plan" not in script.calls


async def test_a_cancelled_research_announces_it(dev_client: Client) -> None:
    """Edges: a research cancelled with a report sent no notice at all; now
    `research.cancelled` (its NotifyWorkflow child, started from the research's history)."""
    children: list[str] = []
    result = await run(
        dev_client,
        Script(plan=three_steps, read_page=slow_after_first_step),
        ResearchRequest(
            query="How do Rust lifetimes work?",
            depth=Depth.LIGHT,
            notify=["https://hooks.example.org/research"],  # a target: the notice is sent
        ),
        cancel_when=lambda status: (
            status.current_step_index == 1 and status.stage is Stage.RESEARCHING
        ),
        children=children,
    )
    assert result.outcome is Stage.CANCELLED
    assert any(child.endswith("/research.cancelled") for child in children), children
