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
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from workflows.research import DeepResearchWorkflow

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_there_are_at_least_three_recorded_histories() -> None:
    assert len(HISTORIES) >= 3, [p.name for p in HISTORIES]


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_a_recorded_research_replays_without_nondeterminism(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
    replayer = Replayer(workflows=[DeepResearchWorkflow], data_converter=pydantic_data_converter)
    await replayer.replay_workflow(history)
