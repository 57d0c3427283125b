"""Record the histories that tests/workflow/test_replay.py replays: real runs of the real workflow and
activities (offline engine, local provider) on a Temporal dev server.

    .venv/bin/python -m tests.workflow.histories.record [SCENARIO...]   # all, or only the ones named

The corpus is a handful of short notes written here, in our own words, so the recorded page
passages are ours too (no third-party text enters the repository). Re-record only on purpose:
a history that no longer replays means running research would break, and the commit must say why.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

NOTES = {
    "durable-execution.md": """# Durable execution
A durable workflow records every step it takes in an event history kept by the server.
When a worker crashes, another worker replays the history and continues from the last recorded step.
Completed activities are not run again: their results are read back from the history.
Workflow code must be deterministic so that replay takes the same decisions as the first run.
""",
    "retries.md": """# Retries and backoff
An activity that fails with a retryable error is retried by the server according to its retry policy.
The policy sets the first interval, the backoff coefficient, the maximum interval and the maximum attempts.
Errors that retrying cannot fix, such as a rejected API key, should be marked non-retryable.
Timeouts bound each attempt: start-to-close limits how long one attempt may run.
""",
    "timers.md": """# Durable timers
A durable timer is recorded in the history, so it fires even if every worker was down when it expired.
Waiting for a signal with a timeout combines a condition with a timer: whichever comes first wins.
Timers of days or weeks cost nothing while they wait.
""",
    "signals.md": """# Signals, queries and updates
A signal delivers data to a running workflow asynchronously, for example a user's answer.
A query reads the workflow's state without changing it, for example its current stage.
An update is like a signal that returns a result, and a validator can refuse it before it is recorded.
""",
    "workers.md": """# Workers
Workers poll a task queue for workflow and activity tasks.
Several workers can share a task queue; the server spreads tasks among them.
A worker that stops gracefully lets running activities finish before it exits.
""",
    "history-size.md": """# History size
The event history has limits: large payloads make replay slow and can hit the size limit.
Store trimmed text, not raw pages, and keep activity inputs and outputs small.
""",
}

SCENARIOS = [
    # All recorded again on 2026-11-27 from the code of v0.1.0, every patch gate folded
    # (workflows/patches.py): no history here has a patch marker.
    "deep-medium",  # a medium research: independent steps at once, local corpus activities
    "clarified-by-signal",
    "simple-mode",
    "cancelled-mid-research",
    "verified-follow-up",  # a follow-up, its claims verified, saved to the library
    "verification-off",
    "plan-reviewed",  # the plan revised once by a person, then approved
    "report-revised",  # revised in every review round: the last revision is final
    "report-escalated",  # the critic asks for a person, someone attends: revised, then approved
    "sectioned-report",  # budgets, the report's language, the report written in sections
    "followed-clarified-reviewed",  # the event stream: a clarification answered, a plan approved
    "continued-as-new",  # continued as new after each wave (both runs are stored)
    "refined-by-research-in-loop",  # the critic finds the report short: new steps in the wave loop
    "report-unattended",  # the critic asks for a person, nobody attends: the report stands
    "report-revised-noted",  # a revised report says so in its closing lines, then approved
    "budget-from-served",  # a tight token budget: independent steps one wave at a time
    "follow-up-second-one",  # "the second one" names a point of the previous answer
    "report-reviewed-again",  # revised, the revision shown for a second round, approved
    # Recorded on 2026-11-27 after v0.1.0, with the patch marker of REPORT_AS_AFFORDED.
    "report-as-afforded",  # a tight token budget: the step's reserve is the report over it
]


async def record(out_dir: Path, names: list[str]) -> None:
    from temporalio.client import WorkflowHandle
    from temporalio.testing import WorkflowEnvironment
    from temporalio.worker import Worker

    from settings import data_converter
    from worker import ACTIVITIES
    from workflows.models import (
        Depth,
        Message,
        QueryMode,
        ReportReview,
        ResearchRequest,
        Speaker,
        Stage,
    )
    from workflows.research import DeepResearchWorkflow

    env = await WorkflowEnvironment.start_local(
        data_converter=data_converter(),
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
    )
    requests: dict[str, ResearchRequest] = {
        "deep-medium": ResearchRequest(
            query="How do durable workflows survive worker crashes, and how do retries and timers work?",
            depth=Depth.MEDIUM,
        ),
        "clarified-by-signal": ResearchRequest(query="Tell me more about it", depth=Depth.LIGHT),
        "simple-mode": ResearchRequest(query="What is a durable timer?", mode=QueryMode.SIMPLE),
        "cancelled-mid-research": ResearchRequest(
            query="How do signals, queries and updates reach a running workflow?",
            depth=Depth.EXTENDED,
        ),
        "verified-follow-up": ResearchRequest(
            query="What are its limits?",
            depth=Depth.LIGHT,
            follow_up_of="earlier-research",
            history=[
                Message(
                    role=Speaker.USER, content="How does the event history of a workflow grow?"
                ),
                Message(
                    role=Speaker.ASSISTANT,
                    content="# Event history\n\n- Every step is recorded [1].",
                ),
            ],
        ),
        "verification-off": ResearchRequest(
            query="How do workers share a task queue?", depth=Depth.LIGHT, verify=False
        ),
        "plan-reviewed": ResearchRequest(
            query="How do durable timers fire?", depth=Depth.LIGHT, review_plan=True
        ),
        "report-revised": ResearchRequest(
            query="How do workers stop gracefully?",
            depth=Depth.LIGHT,
            review_report=ReportReview.ALWAYS,
        ),
        "report-escalated": ResearchRequest(
            query="Which glaciers calve icebergs fastest?", depth=Depth.LIGHT, attended=True
        ),
        "sectioned-report": ResearchRequest(
            query="How do durable workflows use timers, signals and retries?",
            depth=Depth.MEDIUM,
            language="de",
            max_tokens=500_000,
        ),
        "continued-as-new": ResearchRequest(
            query="How do durable workflows survive worker crashes, and how do retries and timers work?",
            depth=Depth.EXTENDED,
            steps_per_run=1,  # extended: more steps than one wave holds
        ),
        "refined-by-research-in-loop": ResearchRequest(
            query="How do durable timers fire?", depth=Depth.LIGHT
        ),
        "followed-clarified-reviewed": ResearchRequest(
            query="Tell me more about it", depth=Depth.LIGHT, review_plan=True
        ),
        "report-unattended": ResearchRequest(
            query="Which glaciers calve icebergs fastest?", depth=Depth.LIGHT
        ),
        "report-revised-noted": ResearchRequest(
            query="How do workers stop gracefully?",
            depth=Depth.LIGHT,
            review_report=ReportReview.ALWAYS,
            attended=True,
        ),
        "report-reviewed-again": ResearchRequest(
            query="How do workers stop gracefully?",
            depth=Depth.LIGHT,
            review_report=ReportReview.ALWAYS,
            attended=True,
        ),
        "follow-up-second-one": ResearchRequest(
            query="Tell me more about the second one",
            depth=Depth.LIGHT,
            follow_up_of="earlier-research",
            history=[
                Message(role=Speaker.USER, content="How do durable workflows survive crashes?"),
                Message(
                    role=Speaker.ASSISTANT,
                    content="# Durable workflows\n\n"
                    "- Every step is recorded in the event history [1].\n"
                    "- Retries follow the activity's retry policy [2].\n"
                    "- Durable timers fire even when every worker was down [3].",
                ),
            ],
        ),
        "budget-from-served": ResearchRequest(
            query="How do durable workflows survive worker crashes, and how do retries and timers work?",
            depth=Depth.MEDIUM,
            max_tokens=10_000,
        ),
        "report-as-afforded": ResearchRequest(
            query="How do durable workflows survive worker crashes, and how do retries and timers work?",
            depth=Depth.MEDIUM,
            max_tokens=6_000,
        ),
    }
    async with (
        env,
        Worker(
            env.client,
            task_queue="record",
            workflows=[DeepResearchWorkflow],
            activities=_with_short_first_critique(ACTIVITIES),
        ),
    ):
        for name in names:
            handle: WorkflowHandle[Any, Any] = await env.client.start_workflow(
                DeepResearchWorkflow.run,
                requests[name],
                id=f"{name}-{uuid.uuid4().hex[:6]}",
                task_queue="record",
            )
            if name in ("clarified-by-signal", "followed-clarified-reviewed"):
                while not (await handle.query(DeepResearchWorkflow.status)).pending_question:
                    await asyncio.sleep(0.05)
                await handle.signal("clarification_answer", "durable timers and how they fire")
            if name == "followed-clarified-reviewed":
                await _review(handle, 1, "plan_review", {"decision": "approve"})
                events = await handle.query(DeepResearchWorkflow.events, 0)
                assert [e.seq for e in events] == list(range(1, len(events) + 1)), events
            if name == "plan-reviewed":
                await _review(
                    handle,
                    1,
                    "plan_review",
                    {"decision": "revise", "feedback": "Cover retries too"},
                )
                await _review(handle, 2, "plan_review", {"decision": "approve"})
            if name in ("report-escalated", "report-revised-noted", "report-reviewed-again"):
                revise = {"decision": "revise", "feedback": "Say what is missing", "round": 1}
                await _review(handle, 1, "report_review", revise)
                await _review(handle, 2, "report_review", {"decision": "approve", "round": 2})
            if name == "report-revised":  # every round revised: the third revision is final
                for round_ in (1, 2, 3):
                    feedback = f"Say what is missing ({round_})"
                    revise = {"decision": "revise", "feedback": feedback, "round": round_}
                    await _review(handle, round_, "report_review", revise)
            if name == "cancelled-mid-research":
                while (await handle.query(DeepResearchWorkflow.status)).current_step_index < 1:
                    await asyncio.sleep(0.01)
                await handle.cancel()
            result = await handle.result()
            assert result.outcome in (Stage.COMPLETED, Stage.CANCELLED), result.outcome
            if name == "continued-as-new":  # the first run, ended by continuing as new
                first = await env.client.get_workflow_handle(
                    handle.id, run_id=handle.first_execution_run_id
                ).fetch_history()
                (out_dir / f"{name}-first-run.json").write_text(first.to_json())
                handle = env.client.get_workflow_handle(handle.id)  # and the last run
            history = await handle.fetch_history()
            path = out_dir / f"{name}.json"
            path.write_text(history.to_json())
            print(
                f"{path.name}: {len(history.events)} events, {path.stat().st_size} bytes, outcome {result.outcome.value}"
            )


def _with_short_first_critique(activities: list[Any]) -> list[Any]:
    """The activities, with a critic that finds the first report of "refined-by-research" short of
    what was asked (the offline critic rarely does: its reports name every step), so that history
    records the refining loop researching what is missing. Every other call is the real critic."""
    from temporalio import activity
    from temporalio.activity import _Definition

    from workflows.activity_models import CritiqueInput, CritiqueOutput
    from workflows.models import CritiqueIssue, IssueSeverity

    real = next(a for a in activities if _Definition.must_from_callable(a).name == "critique")
    criticised: set[str] = set()

    async def critique(inp: CritiqueInput) -> CritiqueOutput:
        out: CritiqueOutput = await real(inp)
        run = activity.info().workflow_id
        if run.startswith("refined-by-research") and run not in criticised:
            criticised.add(run)
            issue = CritiqueIssue(
                severity=IssueSeverity.HIGH,
                text="uncovered question terms: the report never says how earthquakes are timed",
            )
            out = out.model_copy(update={"is_acceptable": False, "issues": [issue, *out.issues]})
        return out

    critique.__annotations__ = {"inp": CritiqueInput, "return": CritiqueOutput}  # resolvable here
    return [a for a in activities if a is not real] + [activity.defn(name="critique")(critique)]


async def _review(handle: Any, round_: int, signal: str, payload: dict[str, Any]) -> None:
    from workflows.research import DeepResearchWorkflow

    while True:
        status = await handle.query(DeepResearchWorkflow.status)
        if status.pending_review and status.review_rounds >= round_:
            break
        await asyncio.sleep(0.05)
    await handle.signal(signal, payload)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "notes"
        corpus.mkdir()
        for name, text in NOTES.items():
            (corpus / name).write_text(text)
        os.environ.update(
            LLM_PROVIDER="offline",
            SEARCH_PROVIDER="local",
            RESEARCH_CORPUS_DIR=str(corpus),
            RESEARCH_INDEX_DIR=str(Path(tmp) / "index"),
            RESEARCH_DB_URL=f"sqlite:///{Path(tmp) / 'library.sqlite'}",
        )
        names = sys.argv[1:] or SCENARIOS
        unknown = sorted(set(names) - set(SCENARIOS))
        if unknown:
            sys.exit(f"error: unknown scenario {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
        asyncio.run(record(Path(__file__).parent, names))


if __name__ == "__main__":
    main()
