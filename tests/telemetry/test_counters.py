"""The product's counters count a research once however often a worker replays it: here a worker
with no workflow cache replays the whole history at every step, as a worker that picks up another's
research does. Counted through the Temporal runtime's meter into a buffer the test reads."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.runtime import MetricBuffer, Runtime, TelemetryConfig
from temporalio.worker import Worker

from settings import data_converter
from telemetry.counters import COMPLETED, FAILED, LLM_CALLS, STARTED, ProductMetrics
from tests.support.doubles import DEFAULTS, Script
from workflows.models import Depth, ResearchRequest
from workflows.research import DeepResearchWorkflow
from workflows.roles import LLM_ROLES

pytestmark = pytest.mark.e2e

QUESTION = "How does the with statement use context managers in Python?"


def counted(buffer: MetricBuffer) -> Counter[tuple[str, str]]:
    """Counter totals by (name, the label that matters: outcome or error)."""
    totals: Counter[tuple[str, str]] = Counter()
    for update in buffer.retrieve_updates():
        labels = update.attributes
        key = str(labels.get("outcome", labels.get("error", "")))
        totals[(update.metric.name, key)] += int(update.value)
    return totals


async def research_without_a_cache(address: str, script: Script) -> tuple[Any, Counter[Any]]:
    """A light research on a worker that keeps no workflow in its cache; its result (or failure)
    and what the counters say."""
    buffer = MetricBuffer(100_000)
    runtime = Runtime(telemetry=TelemetryConfig(metrics=buffer))
    client = await Client.connect(address, runtime=runtime, data_converter=data_converter())
    queue = f"tq-counted-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[DeepResearchWorkflow],
        activities=script.activities(),
        interceptors=[ProductMetrics()],
        max_cached_workflows=0,
    ):
        try:
            outcome: Any = await client.execute_workflow(
                DeepResearchWorkflow.run,
                ResearchRequest(query=QUESTION, depth=Depth.LIGHT),
                id=f"counted-{uuid.uuid4().hex[:8]}",
                task_queue=queue,
            )
        except WorkflowFailureError as err:
            outcome = err
    return outcome, counted(buffer)


async def test_a_research_replayed_at_every_step_is_started_and_completed_once(
    dev_address: str,
) -> None:
    failures = iter([ApplicationError("the endpoint is busy")])

    def route_once_busy(inp: Any) -> Any:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return DEFAULTS["route"](inp)

    script = Script(route=route_once_busy)
    result, totals = await research_without_a_cache(dev_address, script)

    assert result.outcome.value == "completed"
    assert totals[(STARTED, "")] == 1
    assert totals[(COMPLETED, "completed")] == 1
    assert totals[(FAILED, "")] == 0
    llm_calls = sum(len(script.calls[role.name]) for role in LLM_ROLES)
    assert totals[(LLM_CALLS, "unanswered")] == 1
    assert totals[(LLM_CALLS, "answered")] == llm_calls - 1


async def test_a_research_that_fails_is_counted_as_failed_with_its_error(dev_address: str) -> None:
    def no_model(inp: Any) -> Any:
        raise ApplicationError("model not found", type="ConfigError", non_retryable=True)

    failure, totals = await research_without_a_cache(dev_address, Script(plan=no_model))

    assert isinstance(failure, WorkflowFailureError)
    assert totals[(STARTED, "")] == 1
    assert totals[(FAILED, "ConfigError")] == 1
    assert sum(n for (name, _), n in totals.items() if name == COMPLETED) == 0
