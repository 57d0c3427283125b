"""What an engine is: one async method per LLM role, named after the role's activity.

Two real implementations (`activities/offline_engine/`, `activities/openai_engine/`); the LLM
activities (activities/llm.py) call whichever the worker is configured with.
"""

from __future__ import annotations

from typing import Protocol

from workflows.activity_models import (
    ClarifyInput,
    ClarifyOutput,
    CoordinateInput,
    CoordinateOutput,
    CritiqueInput,
    CritiqueOutput,
    OutlineInput,
    OutlineOutput,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
    ObserveInput,
    ObserveOutput,
    PlanInput,
    PlanOutput,
    ReflectInput,
    ReflectOutput,
    ReviseClaimsInput,
    ReviseClaimsOutput,
    RouteInput,
    RouteOutput,
    SynthesizeInput,
    SynthesizeOutput,
    VerifyClaimsInput,
    VerifyClaimsOutput,
    WriteQueriesInput,
    WriteQueriesOutput,
)


class Engine(Protocol):
    #: "offline" or "openai": the offline engine serves no tokens, so its calls count themselves.
    name: str

    async def route(self, inp: RouteInput) -> RouteOutput: ...
    async def clarify(self, inp: ClarifyInput) -> ClarifyOutput: ...
    async def coordinate(self, inp: CoordinateInput) -> CoordinateOutput: ...
    async def write_queries(self, inp: WriteQueriesInput) -> WriteQueriesOutput: ...
    async def plan(self, inp: PlanInput) -> PlanOutput: ...
    async def observe(self, inp: ObserveInput) -> ObserveOutput: ...
    async def reflect(self, inp: ReflectInput) -> ReflectOutput: ...
    async def synthesize(self, inp: SynthesizeInput) -> SynthesizeOutput: ...
    async def outline_report(self, inp: OutlineInput) -> OutlineOutput: ...
    async def write_section(self, inp: SectionInput) -> SectionOutput: ...
    async def summarize_report(self, inp: SummaryInput) -> SummaryOutput: ...
    async def verify_claims(self, inp: VerifyClaimsInput) -> VerifyClaimsOutput: ...
    async def revise_claims(self, inp: ReviseClaimsInput) -> ReviseClaimsOutput: ...
    async def critique(self, inp: CritiqueInput) -> CritiqueOutput: ...
