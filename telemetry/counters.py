"""The product's own counters, recorded through the Temporal runtime's meter (metrics.py says why):
researches started, completed and failed, LLM calls answered and not, and the tokens they used.

The activity's meter labels each with its `activity_type` (the role), `namespace` and
`task_queue`, the workflow's with its `workflow_type` too. They are counted by a worker interceptor, around the workflow and the LLM activities, so no
research or engine code changes for them. The workflow's meter skips replays: a research resumed
on another worker is neither started nor finished twice. A run that continues as new is one
research: its next run is not counted as started.

With no metrics configured the default runtime's meter records nothing, so the interceptor is
always on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import activity, workflow
from temporalio.exceptions import ApplicationError, FailureError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    ExecuteWorkflowInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

with workflow.unsafe.imports_passed_through():
    from workflows.roles import LLM_ROLES

RESEARCH = "DeepResearchWorkflow"
LLM_ACTIVITY_NAMES = frozenset(role.name for role in LLM_ROLES)

STARTED = "deep_research_researches_started"
COMPLETED = "deep_research_researches_completed"
FAILED = "deep_research_researches_failed"
LLM_CALLS = "deep_research_llm_calls"
LLM_TOKENS = "deep_research_llm_tokens"


class ProductMetrics(Interceptor):
    """The worker interceptor that counts researches and LLM calls."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _LlmCalls(next)

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        return _Researches


class _Researches(WorkflowInboundInterceptor):
    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        info = workflow.info()
        if info.workflow_type != RESEARCH:
            return await super().execute_workflow(input)
        meter = workflow.metric_meter()
        if info.continued_run_id is None:
            meter.create_counter(STARTED, "researches started").add(1)
        try:
            result = await super().execute_workflow(input)
        except (FailureError, asyncio.CancelledError) as err:
            # What fails the run itself. Any other exception fails one workflow task, which
            # Temporal retries: not a failed research, and not counted.
            meter.create_counter(FAILED, "researches that failed (no report)").add(
                1, {"error": _error_name(err)}
            )
            raise
        outcome = str(getattr(getattr(result, "outcome", None), "value", "completed"))
        if outcome == "failed":  # a result that says so counts as a failure all the same
            meter.create_counter(FAILED, "researches that failed (no report)").add(
                1, {"error": "failed"}
            )
        else:
            meter.create_counter(COMPLETED, "researches that ended with a report").add(
                1, {"outcome": outcome}
            )
        return result


def _error_name(err: BaseException) -> str:
    if isinstance(err, ApplicationError) and err.type:
        return err.type
    return "Cancelled" if isinstance(err, asyncio.CancelledError) else type(err).__name__


class _LlmCalls(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        name = activity.info().activity_type
        if name not in LLM_ACTIVITY_NAMES:
            return await super().execute_activity(input)
        meter = activity.metric_meter()
        calls = meter.create_counter(LLM_CALLS, "LLM calls (activity attempts), answered or not")
        try:
            result = await super().execute_activity(input)
        except BaseException:
            calls.add(1, {"outcome": "unanswered"})
            raise
        calls.add(1, {"outcome": "answered"})
        usage = getattr(result, "usage", None)
        if usage is not None:
            tokens = meter.create_counter(LLM_TOKENS, "tokens of answered LLM calls")
            for kind in ("prompt", "completion"):
                used = int(getattr(usage, f"{kind}_tokens", 0) or 0)
                if used > 0:
                    tokens.add(used, {"kind": kind})
        return result
