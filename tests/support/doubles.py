"""Test doubles for every activity, registered under the real activity names.

A `Script` holds one plain function per role of workflows/roles.py; a test replaces the ones it
cares about and reads `calls` afterwards to see what the workflow asked for. The defaults make a
small, clear research: routing says RESEARCH, the plan has as many steps as the depth's minimum,
every step finds one page, the reflector continues, and the synthesizer cites what it was given.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from activities.engine import method
from activities.notify import deliver_notification, notification_targets
from activities.offline_engine import OfflineEngine
from activities.revisions import save_revision
from activities.standing import previous_run
from workflows import activity_models as m
from workflows.activity_role import Role
from workflows.models import Complexity, Depth, ReflectionDecision, RoutingDecision
from workflows.report_models import (
    OutlineInput,
    OutlineOutput,
    ReportSection,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
)
from workflows.roles import ROLES
from workflows.standing_messages import OwnerRunningInput, OwnerRunningOutput


def default_route(inp: m.RouteInput) -> m.RouteOutput:
    return m.RouteOutput(decision=RoutingDecision.RESEARCH, reasoning="clear question")


def default_clarify(inp: m.ClarifyInput) -> m.ClarifyOutput:
    return m.ClarifyOutput(question=f"What exactly do you mean by {inp.messages[-1].content!r}?")


def default_coordinate(inp: m.CoordinateInput) -> m.CoordinateOutput:
    return m.CoordinateOutput(
        complexity=Complexity.MODERATE,
        is_simple=False,
        recommended_depth=Depth.LIGHT,
        reasoning="moderate",
    )


def default_write_queries(inp: m.WriteQueriesInput) -> m.WriteQueriesOutput:
    topic = inp.step.title if inp.step else inp.topic_text()
    return m.WriteQueriesOutput(queries=[topic])


def default_plan(inp: m.PlanInput) -> m.PlanOutput:
    count = max(inp.min_steps, 1)
    base = len(inp.completed_steps)
    steps = [
        m.StepDraft(title=f"Aspect {base + i + 1} (plan {inp.iteration})", description="look it up")
        for i in range(min(count, inp.max_steps))
    ]
    return m.PlanOutput(
        title=f"Plan for {inp.topic_text()}", thought="split by aspect", steps=steps
    )


def default_search(req: m.SearchInput) -> m.SearchOutput:
    slug = "".join(ch if ch.isalnum() else "-" for ch in req.query.lower())[:40]
    return m.SearchOutput(
        hits=[
            m.SearchHit(
                url=f"file:///docs/{slug}.md",
                title=f"Doc on {req.query}",
                snippet="snippet",
                provider="local",
            )
        ]
    )


def default_read_page(req: m.ReadPageInput) -> m.ReadPageOutput:
    return m.ReadPageOutput(url=req.url, title="A page", text=f"Facts about {req.focus[:60]}.")


def default_observe(inp: m.ObserveInput) -> m.ObserveOutput:
    ids = [p.source_id for p in inp.passages]
    cited = "".join(f" [{n}]" for n in ids)
    return m.ObserveOutput(observation=f"Found facts for {inp.step.title}.{cited}", source_ids=ids)


def default_reflect(inp: m.ReflectInput) -> m.ReflectOutput:
    return m.ReflectOutput(decision=ReflectionDecision.CONTINUE, reasoning="keep going")


def default_synthesize(inp: m.SynthesizeInput) -> m.SynthesizeOutput:
    lines = [f"# {inp.topic_text()}"]
    for step in inp.plan.steps if inp.plan else []:
        if step.observation:
            lines.append(step.observation)
    for passage in inp.passages:
        lines.append(f"{passage.text} [{passage.source_id}]")
    lines += [f"> Note: {n}" for n in inp.notes]
    return m.SynthesizeOutput(markdown="\n\n".join(lines), engine="double")


def default_outline_report(inp: OutlineInput) -> OutlineOutput:
    sections = [
        ReportSection(heading=s.title, step_indexes=[i])
        for i, s in enumerate(inp.plan.steps)
        if s.observation
    ]
    return OutlineOutput(title=inp.topic_text(), sections=sections, engine="double")


def default_write_section(inp: SectionInput) -> SectionOutput:
    return SectionOutput(markdown="\n\n".join(s.observation or "" for s in inp.steps))


def default_summarize_report(inp: SummaryInput) -> SummaryOutput:
    return SummaryOutput(markdown=f"{len(inp.steps)} steps were researched.")


def default_verify_claims(inp: m.VerifyClaimsInput) -> m.VerifyClaimsOutput:
    return m.VerifyClaimsOutput(
        verdicts=[
            m.ClaimVerdict(
                index=c.index, verdict=m.JudgeVerdict.SUPPORTED, reason="the double agrees"
            )
            for c in inp.claims
        ]
    )


def default_revise_claims(inp: m.ReviseClaimsInput) -> m.ReviseClaimsOutput:
    return m.ReviseClaimsOutput(rewrites=[])


def default_critique(inp: m.CritiqueInput) -> m.CritiqueOutput:
    return m.CritiqueOutput(
        quality=0.8, quality_reason="double", hallucination_risk=0.1, hallucination_reason="double"
    )


def default_search_papers(inp: m.SearchPapersInput) -> m.SearchOutput:
    return m.SearchOutput(hits=[])


def default_paper_indexes(inp: m.PaperIndexesInput) -> m.PaperIndexesOutput:
    return m.PaperIndexesOutput(indexes=["openalex", "arxiv", "crossref"])


def default_save_research(record: m.SaveResearchInput) -> m.SaveResearchOutput:
    return m.SaveResearchOutput(created=True)


#: The standing research's and the notices' activities do as the worker's do: the library's
#: previous run, the receivers configured in the environment (none unless a test sets them).
default_previous_run = previous_run


def default_owner_running(inp: OwnerRunningInput) -> OwnerRunningOutput:
    """A scheduled run's owner runs nothing else (the real count: activities.standing.owner_running,
    whose test sets the limit)."""
    return OwnerRunningOutput(running=0, most=1)


default_notification_targets = notification_targets
default_deliver_notification = deliver_notification
#: A revised section's version goes to the library RESEARCH_DB_URL names, as the worker's does
#: (a test with a library of its own puts its own in: tests/starter/cli/test_revise_section.py).
default_save_revision = save_revision

#: Names the tests import.
default_read = default_read_page


def _default(role: Role[Any, Any]) -> Callable[..., Any]:
    """`default_<name>` above; an LLM role without one answers as the offline engine's rule does."""
    own = globals().get(f"default_{role.name}")
    return own if own is not None else method(OfflineEngine(), role)


#: The default behaviour of every role in workflows/roles.py, by activity name.
DEFAULTS: dict[str, Callable[..., Any]] = {role.name: _default(role) for role in ROLES}


class Script:
    """The behaviour of every activity for one test. Assign `script.behaviour[role] = fn`;
    fn may be sync or async and may raise (e.g. ApplicationError) to simulate failures."""

    def __init__(self, **overrides: Callable[..., Any]) -> None:
        self.behaviour: dict[str, Callable[..., Any]] = dict(DEFAULTS)
        self.behaviour.update(overrides)
        self.calls: dict[str, list[Any]] = defaultdict(list)

    def activities(self) -> list[Callable[..., Any]]:
        return [self._make(role) for role in ROLES]

    def _make(self, role: Role[Any, Any]) -> Callable[..., Any]:
        async def run(inp: Any) -> Any:
            self.calls[role.name].append(inp)
            result = self.behaviour[role.name](inp)
            if inspect.isawaitable(result):
                result = await result
            return result

        return role.define(run)


def slow(seconds: float, then: Callable[[Any], Any]) -> Callable[[Any], Any]:
    async def behaviour(inp: Any) -> Any:
        await asyncio.sleep(seconds)
        return then(inp)

    return behaviour
