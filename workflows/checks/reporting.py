"""The report (seed 002's synthesis) and keeping it in the research library.

The synthesizer writes markdown with `[n]` citations from the step findings and the evidence
pool; any `[n]` that does not resolve to a source the research read is removed before the report
leaves the workflow, and the removal is noted. A synthesizer that is unavailable (or a research
cancelled while writing) leaves a plain report of the step observations. The library write is
isolated: a library that cannot be reached costs the stored copy, not the research. The research's
last event (`finished`) sums the result up.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from temporalio import workflow

from workflows import roles
from workflows.accounting import budget
from workflows.accounting.calls import call
from workflows.accounting.stages import enter
from workflows.accounting.state import ResearchState
from workflows.activity_models import (
    SaveResearchInput,
    SynthesizeInput,
)
from workflows.events import Event, EventKind, emit
from workflows.kit import citations
from workflows.models import Claim, PlanStep, ResearchResult, Stage, StepStatus
from workflows.report_models import (
    OutlineInput,
    OutlineOutput,
    ReportSection,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
)
from workflows.text import language

#: A summary's share of the report.
SUMMARY_WORDS = 150
#: At most this many sections, whatever the outline proposes.
MAX_SECTIONS = 8


async def synthesize(
    state: ResearchState, feedback: list[str] | None = None
) -> tuple[str, list[Claim]]:
    """The report; `feedback` (a rewrite) lists the objections the new report must answer."""
    enter(state, Stage.SYNTHESIZING)
    steps = state.inquiry.plan.steps if state.inquiry.plan else []
    notes, sources = state.writeup.notes, state.material.sources
    foreign = language.sources_note(
        state.language, [e.text for e in state.material.evidence_pool()]
    )
    if foreign and foreign not in notes:
        notes.append(foreign)
    written: tuple[str, list[Claim]] | None = None
    try:
        if _in_sections(state):
            written = await _write_in_sections(state, feedback or [])
        if written is None:
            written = await _write_in_one_call(state, feedback or [])
    except asyncio.CancelledError:
        notes.append("The research was cancelled while the report was being written.")
        written = None
    if written is None:
        notes.append(
            "The synthesizer was unavailable; the report lists the step observations as found."
        )
        return citations.fallback_report(state.meant(), steps, sources, notes), []
    markdown, claims = written
    markdown, dropped = citations.drop_unresolved(markdown, sources)
    if dropped:
        notes.append(
            f"Removed citations to unknown sources: {', '.join(f'[{n}]' for n in dropped)}."
        )
    return markdown, citations.keep_resolved_claims(claims, sources)


def _in_sections(state: ResearchState) -> bool:
    """Long reports (medium and extended depth, two steps or more) are written in sections,
    when the budgets leave room for the extra calls (else in one call, the cheapest form)."""
    plan, limit = state.inquiry.plan, state.ledger.budget
    done = (
        [s for s in plan.steps if s.status is StepStatus.COMPLETED and s.observation]
        if plan
        else []
    )
    if len(done) < 2 or not budget.sectioned_depth(state.inquiry.depth):
        return False
    if limit.max_tokens is None and limit.max_cost_usd is None:
        return True
    return budget.over_budget(state.ledger, *budget.report_reserve(state, sectioned=True)) is None


async def _write_in_one_call(
    state: ResearchState, feedback: list[str]
) -> tuple[str, list[Claim]] | None:
    plan, material = state.inquiry.plan, state.material
    report = await call(
        state,
        roles.SYNTHESIZE,
        SynthesizeInput(
            **state.about(),
            plan=plan,
            sources=material.sources,
            passages=material.background if plan is None else [],
            notes=state.writeup.notes,
            evidence=material.evidence,
            read=material.read_evidence([s.id for s in material.sources]),
            target_words=budget.target_words(state),
            feedback=feedback,
        ),
    )
    if report is None:
        return None
    state.writeup.engine = report.engine
    return report.markdown, report.claims


async def _write_in_sections(
    state: ResearchState, feedback: list[str]
) -> tuple[str, list[Claim]] | None:
    """Outline, then every section and the summary at once (each call sees only its own
    findings and evidence, citing by the research's global source ids), assembled here.

    The summary is written beside the sections, from the same findings, rather than after them:
    the critical path is then two calls (outline, then the longest section), not one per section.
    None when the outline cannot be had: the report is then written in one call.
    """
    plan, material = state.inquiry.plan, state.material
    assert plan is not None
    steps = plan.steps
    target = budget.target_words(state)
    outline = await call(
        state,
        roles.OUTLINE,
        OutlineInput(
            **state.about(),
            plan=plan,
            sources=material.sources,
            notes=state.writeup.notes,
            feedback=feedback,
            target_words=target,
        ),
    )
    if outline is None:
        return None
    state.writeup.engine = outline.engine or state.writeup.engine
    sections = plan_sections(outline.sections, steps)
    if not sections:
        return None
    per_section = max(100, (target - SUMMARY_WORDS) // len(sections))
    writing = [
        call(
            state,
            roles.WRITE_SECTION,
            _section_input(state, outline.title, sections, k, feedback, per_section),
        )
        for k in range(len(sections))
    ]
    summarizing = call(
        state,
        roles.SUMMARIZE,
        SummaryInput(
            **state.about(),
            title=outline.title,
            sections=sections,
            steps=[s for s in steps if s.status is StepStatus.COMPLETED and s.observation],
            sources=material.sources,
            feedback=feedback,
            target_words=SUMMARY_WORDS,
        ),
    )
    # One task each, the sections' first and the summary's last, as the history records them.
    bodies = [asyncio.ensure_future(w) for w in writing]
    summary = asyncio.ensure_future(summarizing)
    await asyncio.gather(*bodies, summary)
    return assemble(state, outline, sections, [b.result() for b in bodies], summary.result())


def _section_input(
    state: ResearchState,
    title: str,
    sections: list[ReportSection],
    k: int,
    feedback: list[str],
    target_words: int,
) -> SectionInput:
    """What the writer of section K sees: its steps, their evidence and sources, the other
    headings, and what the sections before it have already told."""
    plan, material = state.inquiry.plan, state.material
    assert plan is not None
    steps, section = plan.steps, sections[k]
    cited = _cited_by(steps, section)
    return SectionInput(
        **state.about(),
        title=title,
        section=section,
        steps=[steps[i] for i in section.step_indexes],
        evidence=[e for e in material.evidence if e.source_id in cited],
        read=material.read_evidence(sorted(cited)),
        sources=[s for s in material.sources if s.id in cited],
        other_headings=[s.heading for s in sections if s.heading != section.heading],
        told_before=[
            steps[i].observation or "" for earlier in sections[:k] for i in earlier.step_indexes
        ],
        feedback=feedback,
        target_words=target_words,
    )


def plan_sections(proposed: list[ReportSection], steps: list[PlanStep]) -> list[ReportSection]:
    """The outline's sections, kept to completed steps with findings; each such step in exactly
    one section (a step the outline left out gets a section of its own, so no finding is lost)."""
    usable = {i for i, s in enumerate(steps) if s.status is StepStatus.COMPLETED and s.observation}
    placed: set[int] = set()
    sections: list[ReportSection] = []
    for section in proposed[:MAX_SECTIONS]:
        indexes = [
            i for i in dict.fromkeys(section.step_indexes) if i in usable and i not in placed
        ]
        if not indexes or not section.heading.strip():
            continue
        placed.update(indexes)
        sections.append(
            section.model_copy(update={"step_indexes": indexes, "heading": section.heading.strip()})
        )
    for i in sorted(usable - placed):
        sections.append(
            ReportSection(heading=steps[i].title, brief=steps[i].description, step_indexes=[i])
        )
    return sections


def _cited_by(steps: list[PlanStep], section: ReportSection) -> set[int]:
    ids: set[int] = set()
    for i in section.step_indexes:
        ids.update(steps[i].source_ids)
        ids.update(citations.cited_ids(steps[i].observation or ""))
    return ids


def assemble(
    state: ResearchState,
    outline: OutlineOutput,
    sections: list[ReportSection],
    bodies: list[SectionOutput | None],
    summary: SummaryOutput | None,
) -> tuple[str, list[Claim]]:
    """One report from its pieces: title, notes, summary, the sections in the outline's order
    (a section whose writer failed shows its steps' observations as found), the sources cited."""
    steps = state.inquiry.plan.steps if state.inquiry.plan else []
    lines = [f"# {citations.escape(outline.title.strip() or state.meant())}", ""]
    if outline.lead.strip():
        lines += [outline.lead.strip(), ""]
    notes = state.writeup.notes
    lines += [f"> **Note:** {citations.escape(note)}" for note in notes]
    if notes:
        lines.append("")
    claims: list[Claim] = []
    if summary is not None and summary.markdown.strip():
        lines += ["## Summary", "", summary.markdown.strip(), ""]
        claims += summary.claims
    for section, body in zip(sections, bodies, strict=False):
        lines += [f"## {citations.escape(section.heading)}", ""]
        if body is not None and body.markdown.strip():
            lines += [body.markdown.strip(), ""]
            claims += body.claims
        else:
            lines += [(steps[i].observation or "").strip() for i in section.step_indexes]
            lines.append("")
    skipped = [s.title for s in steps if s.status is not StepStatus.COMPLETED]
    if skipped:
        lines += [f"Planned but not researched: {citations.escape('; '.join(skipped))}.", ""]
    cited = set(citations.cited_ids("\n".join(lines)))
    listed = [s for s in state.material.sources if s.id in cited]
    if listed:
        lines += ["## Sources", ""]
        lines += [
            f"- [{s.id}] {citations.reference(s)} — {s.url} ({citations.origin(s)})" for s in listed
        ]
        lines.append("")
    if outline.footer.strip():
        lines += ["---", "", outline.footer.strip()]
    return "\n".join(lines).rstrip() + "\n", claims


async def save(state: ResearchState, result: ResearchResult, started: datetime) -> None:
    """Keep the research in the library; when that fails, the result says so in its notes."""
    info = workflow.info()
    saved = await call(
        state,
        roles.SAVE_RESEARCH,
        SaveResearchInput(
            workflow_id=info.workflow_id,
            run_id=info.run_id,
            started_at=started,
            finished_at=workflow.now(),
            result=result,
        ),
    )
    if saved is None:
        result.notes.append(
            "The research could not be saved to the research library; "
            "`python -m starter result ID` still shows it while Temporal keeps it."
        )


def finished(state: ResearchState, result: ResearchResult) -> Event:
    """The last event: the outcome with the figures a person checks first, and the result's notes
    (an unanswered question, a spent budget, a fallback taken) for whoever only follows events."""
    stats, summary = result.stats, result.verification
    # The offline engine is no LLM; a research the budget stopped before any writer ran has no
    # engine recorded: its calls are only "calls", and no "(engine ?)" is shown.
    calls = {"offline": "offline-engine calls", "": "calls"}.get(result.engine, "LLM calls")
    engine = f" (engine {result.engine})" if result.engine else ""
    return emit(
        state.events,
        EventKind.DONE,
        f"{result.outcome.value}: {len(result.sources)} sources, {stats.llm_calls} {calls}, "
        f"{stats.searches} searches, {stats.pages_fetched} pages, {stats.duration_s:.1f}s"
        f"{engine}"
        + budget.spent_text(
            stats.prompt_tokens, stats.completion_tokens, stats.cost_usd, result.budget
        ),
        {
            "outcome": result.outcome.value,
            "sources": len(result.sources),
            "claims": len(result.claims),
            "share_supported": summary.share_supported if summary and summary.enabled else None,
            "llm_calls": stats.llm_calls,
            "duration_s": stats.duration_s,
            "tokens": stats.prompt_tokens + stats.completion_tokens,
            "cost_usd": stats.cost_usd,
            "notes": result.notes[-20:],
        },
    )
