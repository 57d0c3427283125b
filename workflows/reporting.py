"""The report (seed 002's synthesis) and keeping it in the research library.

The synthesizer writes markdown with `[n]` citations from the step findings and the evidence
pool; any `[n]` that does not resolve to a source the research read is removed before the report
leaves the workflow, and the removal is noted. A synthesizer that is unavailable (or a research
cancelled while writing) leaves a plain report of the step observations. The library write is
isolated: a library that cannot be reached costs the stored copy, not the research.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from temporalio import workflow

from workflows import citations, roles
from workflows.activity_models import SaveResearchInput, SynthesizeInput
from workflows.calls import call
from workflows.models import Claim, ResearchResult, Stage
from workflows.stages import enter
from workflows.state import ResearchState


async def synthesize(state: ResearchState, feedback: list[str] | None = None) -> tuple[str, list[Claim]]:
    """The report; `feedback` (a rewrite) lists the objections the new report must answer."""
    enter(state, Stage.SYNTHESIZING)
    steps = state.plan.steps if state.plan else []
    try:
        report = await call(state, roles.SYNTHESIZE, SynthesizeInput(
            **state.about(),
            plan=state.plan,
            sources=state.sources,
            passages=state.background if state.plan is None else [],
            notes=state.notes,
            evidence=state.evidence,
            **({"feedback": feedback} if feedback else {}),
        ))
    except asyncio.CancelledError:
        state.notes.append("The research was cancelled while the report was being written.")
        report = None
    if report is None:
        state.notes.append("The synthesizer was unavailable; the report lists the step observations as found.")
        return citations.fallback_report(state.meant(), steps, state.sources, state.notes), []
    state.engine = report.engine
    markdown, dropped = citations.drop_unresolved(report.markdown, state.sources)
    if dropped:
        state.notes.append(f"Removed citations to unknown sources: {', '.join(f'[{n}]' for n in dropped)}.")
    return markdown, citations.keep_resolved_claims(report.claims, state.sources)


async def save(state: ResearchState, result: ResearchResult, started: datetime) -> None:
    """Keep the research in the library; when that fails, the result says so in its notes."""
    info = workflow.info()
    saved = await call(state, roles.SAVE_RESEARCH, SaveResearchInput(
        workflow_id=info.workflow_id, run_id=info.run_id, started_at=started,
        finished_at=workflow.now(), result=result,
    ))
    if saved is None:
        result.notes.append("The research could not be saved to the research library; "
                            "`python -m starter result ID` still shows it while Temporal keeps it.")
