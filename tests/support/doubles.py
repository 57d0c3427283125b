"""Test doubles for every activity, registered under the real activity names.

A `Script` holds one plain function per role; a test replaces the ones it cares about and reads
`calls` afterwards to see what the workflow asked for. The defaults make a small, clear research:
routing says RESEARCH, the plan has as many steps as the depth's minimum, every step finds one
page, the reflector continues, and the synthesizer cites what it was given.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from temporalio import activity

from workflows.roles import ROLES

from workflows.models import (
    Complexity,
    Depth,
    ReflectionDecision,
    RoutingDecision,
)
from workflows.activity_models import (
    ClaimVerdict,
    ClarifyInput,
    ClarifyOutput,
    CoordinateInput,
    CoordinateOutput,
    CritiqueInput,
    CritiqueOutput,
    JudgeVerdict,
    ObserveInput,
    OutlineInput,
    OutlineOutput,
    ReportSection,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
    ObserveOutput,
    PlanInput,
    PlanOutput,
    ReadPageInput,
    ReadPageOutput,
    ReflectInput,
    ReflectOutput,
    ReviseClaimsInput,
    ReviseClaimsOutput,
    RouteInput,
    RouteOutput,
    SaveResearchInput,
    SaveResearchOutput,
    SearchHit,
    SearchInput,
    SearchOutput,
    StepDraft,
    SynthesizeInput,
    SynthesizeOutput,
    VerifyClaimsInput,
    VerifyClaimsOutput,
    WriteQueriesInput,
    WriteQueriesOutput,
)


def default_route(inp: RouteInput) -> RouteOutput:
    return RouteOutput(decision=RoutingDecision.RESEARCH, reasoning="clear question")


def default_clarify(inp: ClarifyInput) -> ClarifyOutput:
    return ClarifyOutput(question=f"What exactly do you mean by {inp.messages[-1].content!r}?")


def default_coordinate(inp: CoordinateInput) -> CoordinateOutput:
    return CoordinateOutput(
        complexity=Complexity.MODERATE, is_simple=False, recommended_depth=Depth.LIGHT, reasoning="moderate"
    )


def default_queries(inp: WriteQueriesInput) -> WriteQueriesOutput:
    topic = inp.step.title if inp.step else inp.topic_text()
    return WriteQueriesOutput(queries=[topic])


def default_plan(inp: PlanInput) -> PlanOutput:
    count = max(inp.min_steps, 1)
    base = len(inp.completed_steps)
    steps = [
        StepDraft(title=f"Aspect {base + i + 1} (plan {inp.iteration})", description="look it up")
        for i in range(min(count, inp.max_steps))
    ]
    return PlanOutput(title=f"Plan for {inp.topic_text()}", thought="split by aspect", steps=steps)


def default_search(req: SearchInput) -> SearchOutput:
    slug = "".join(ch if ch.isalnum() else "-" for ch in req.query.lower())[:40]
    return SearchOutput(
        hits=[SearchHit(url=f"file:///docs/{slug}.md", title=f"Doc on {req.query}", snippet="snippet", provider="local")]
    )


def default_read(req: ReadPageInput) -> ReadPageOutput:
    return ReadPageOutput(url=req.url, title="A page", text=f"Facts about {req.focus[:60]}.")


def default_observe(inp: ObserveInput) -> ObserveOutput:
    ids = [p.source_id for p in inp.passages]
    cited = "".join(f" [{n}]" for n in ids)
    return ObserveOutput(observation=f"Found facts for {inp.step.title}.{cited}", source_ids=ids)


def default_reflect(inp: ReflectInput) -> ReflectOutput:
    return ReflectOutput(decision=ReflectionDecision.CONTINUE, reasoning="keep going")


def default_synthesize(inp: SynthesizeInput) -> SynthesizeOutput:
    lines = [f"# {inp.topic_text()}"]
    for step in inp.plan.steps if inp.plan else []:
        if step.observation:
            lines.append(step.observation)
    for passage in inp.passages:
        lines.append(f"{passage.text} [{passage.source_id}]")
    lines += [f"> Note: {n}" for n in inp.notes]
    return SynthesizeOutput(markdown="\n\n".join(lines), engine="double")


def default_outline(inp: OutlineInput) -> OutlineOutput:
    sections = [ReportSection(heading=s.title, step_indexes=[i])
                for i, s in enumerate(inp.plan.steps) if s.observation]
    return OutlineOutput(title=inp.topic_text(), sections=sections, engine="double")


def default_section(inp: SectionInput) -> SectionOutput:
    return SectionOutput(markdown="\n\n".join(s.observation or "" for s in inp.steps))


def default_summary(inp: SummaryInput) -> SummaryOutput:
    return SummaryOutput(markdown=f"{len(inp.steps)} steps were researched.")


def default_verify(inp: VerifyClaimsInput) -> VerifyClaimsOutput:
    return VerifyClaimsOutput(verdicts=[
        ClaimVerdict(index=c.index, verdict=JudgeVerdict.SUPPORTED, reason="the double agrees") for c in inp.claims
    ])


def default_revise(inp: ReviseClaimsInput) -> ReviseClaimsOutput:
    return ReviseClaimsOutput(rewrites=[])


def default_critique(inp: CritiqueInput) -> CritiqueOutput:
    return CritiqueOutput(quality=0.8, quality_reason="double", hallucination_risk=0.1, hallucination_reason="double")


def default_save(record: SaveResearchInput) -> SaveResearchOutput:
    return SaveResearchOutput(created=True)


#: The default behaviour of every role in workflows/roles.py, by activity name.
DEFAULTS: dict[str, Callable[..., Any]] = {
    "route": default_route,
    "clarify": default_clarify,
    "coordinate": default_coordinate,
    "write_queries": default_queries,
    "plan": default_plan,
    "search": default_search,
    "read_page": default_read,
    "observe": default_observe,
    "reflect": default_reflect,
    "synthesize": default_synthesize,
    "outline_report": default_outline,
    "write_section": default_section,
    "summarize_report": default_summary,
    "verify_claims": default_verify,
    "revise_claims": default_revise,
    "critique": default_critique,
    "save_research": default_save,
}


class Script:
    """The behaviour of every activity for one test. Assign `script.behaviour[role] = fn`;
    fn may be sync or async and may raise (e.g. ApplicationError) to simulate failures."""

    def __init__(self, **overrides: Callable[..., Any]) -> None:
        self.behaviour: dict[str, Callable[..., Any]] = {role.name: DEFAULTS[role.name] for role in ROLES}
        self.behaviour.update(overrides)
        self.calls: dict[str, list[Any]] = defaultdict(list)

    def activities(self) -> list[Callable[..., Any]]:
        return [self._make(role.name, role.input, role.output) for role in ROLES]

    def _make(self, role: str, in_type: type, out_type: type) -> Callable[..., Any]:
        async def run(inp: Any) -> Any:
            self.calls[role].append(inp)
            result = self.behaviour[role](inp)
            if inspect.isawaitable(result):
                result = await result
            return result

        run.__annotations__ = {"inp": in_type, "return": out_type}
        return activity.defn(name=role)(run)


def slow(seconds: float, then: Callable[[Any], Any]) -> Callable[[Any], Any]:
    async def behaviour(inp: Any) -> Any:
        await asyncio.sleep(seconds)
        return then(inp)

    return behaviour
