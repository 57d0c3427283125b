"""Replay of histories recorded from real runs (tests/workflow/histories/*.json).

If a change to the workflow code would make a running research fail on its next workflow task
(non-determinism), replaying these histories fails here first. Changing what a stored history
expects needs a `workflow.patched` gate, or re-recording with a written reason
(`python -m tests.workflow.histories.record`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    Replayer,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from settings import data_converter
from workflows.research import DeepResearchWorkflow

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_there_are_at_least_three_recorded_histories() -> None:
    assert len(HISTORIES) >= 3, [p.name for p in HISTORIES]


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_a_recorded_research_replays_without_nondeterminism(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
    replayer = Replayer(workflows=[DeepResearchWorkflow], data_converter=data_converter())
    await replayer.replay_workflow(history)


class _KeepEvents(Interceptor):
    """Keeps what a replayed research's event log and stage history were when it ended."""

    kept: list[tuple[list[dict], list[str]]] = []

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        kept = self.kept

        class Inbound(WorkflowInboundInterceptor):
            async def execute_workflow(self, input: ExecuteWorkflowInput) -> object:
                result = await super().execute_workflow(input)
                state = workflow.instance().state
                kept.append(
                    (
                        [e.model_dump(mode="json") for e in state.events.items],
                        [s.value for s in state.stage_history],
                    )
                )
                return result

        return Inbound


@pytest.mark.parametrize(
    "name", ["followed-clarified-reviewed", "deep-medium", "report-reviewed-again"]
)
async def test_a_replayed_research_rebuilds_its_events(name: str) -> None:
    """Events are state, not history: a worker that picks up a research after a crash (or a
    history recorded before events existed) has the same gapless stream."""
    path = Path(__file__).parent / "histories" / f"{name}.json"
    history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
    _KeepEvents.kept.clear()
    replayer = Replayer(
        workflows=[DeepResearchWorkflow],
        data_converter=data_converter(),
        interceptors=[_KeepEvents()],
    )
    await replayer.replay_workflow(history)
    [(events, stages)] = _KeepEvents.kept
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["data"]["stage"] for e in events if e["kind"] == "stage"] == stages
    assert events[-1]["kind"] == "done" and events[-1]["data"]["outcome"] == "completed"
    if name == "followed-clarified-reviewed":
        order = [
            e["kind"]
            for e in events
            if e["kind"] in ("question", "answer", "review_requested", "review")
        ]
        assert order == ["question", "answer", "review_requested", "review"]
    if name == "report-reviewed-again":  # revised, shown again for round 2, approved
        reviews = [
            (e["kind"], e["data"]["round"], e["data"].get("decision"))
            for e in events
            if e["kind"] in ("review_requested", "review")
        ]
        assert reviews == [
            ("review_requested", 1, None),
            ("review", 1, "revise"),
            ("review_requested", 2, None),
            ("review", 2, "approve"),
        ]
