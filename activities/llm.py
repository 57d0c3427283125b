"""One activity per LLM role. Each is a thin call into the configured engine.

The engine is `offline` (deterministic, extractive, no network) unless an OpenAI-compatible endpoint
is configured. Engines raise `ApplicationError`s already classified as retryable or not; these
activities add nothing but the name Temporal records in history (the rows of workflows/roles.py),
so a test can stand in for any role by registering a function under the same activity name.
"""

from __future__ import annotations

from collections.abc import Awaitable
from functools import lru_cache
from typing import TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from config import settings
from activities.engine import Engine
from activities.usage import metered
from workflows import roles
from workflows.activity_models import (
    ClarifyInput,
    ClarifyOutput,
    CoordinateInput,
    CoordinateOutput,
    CritiqueInput,
    CritiqueOutput,
    LLMOutput,
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

T = TypeVar("T", bound=LLMOutput)


@lru_cache(maxsize=1)
def engine() -> Engine:
    """The process-wide engine: one HTTP client per worker, not one per call."""
    name = settings().engine_name
    if name == "offline":
        from activities.offline_engine import OfflineEngine

        return OfflineEngine()
    if name == "openai":
        from activities.openai_engine import OpenAIEngine

        return OpenAIEngine(settings())
    raise ApplicationError(
        f"unknown LLM_PROVIDER {name!r}: use 'openai' or 'offline'",
        type="ConfigError",
        non_retryable=True,
    )


async def _served(call: Awaitable[T]) -> T:
    """Every role call is metered (tokens and completions over all attempts, see activities.usage)."""
    return await metered(call, counts_itself=engine().name != "offline")


@activity.defn(name=roles.ROUTE.name)
async def route(inp: RouteInput) -> RouteOutput:
    return await _served(engine().route(inp))


@activity.defn(name=roles.CLARIFY.name)
async def clarify(inp: ClarifyInput) -> ClarifyOutput:
    return await _served(engine().clarify(inp))


@activity.defn(name=roles.COORDINATE.name)
async def coordinate(inp: CoordinateInput) -> CoordinateOutput:
    return await _served(engine().coordinate(inp))


@activity.defn(name=roles.WRITE_QUERIES.name)
async def write_queries(inp: WriteQueriesInput) -> WriteQueriesOutput:
    return await _served(engine().write_queries(inp))


@activity.defn(name=roles.PLAN.name)
async def plan(inp: PlanInput) -> PlanOutput:
    return await _served(engine().plan(inp))


@activity.defn(name=roles.OBSERVE.name)
async def observe(inp: ObserveInput) -> ObserveOutput:
    return await _served(engine().observe(inp))


@activity.defn(name=roles.REFLECT.name)
async def reflect(inp: ReflectInput) -> ReflectOutput:
    return await _served(engine().reflect(inp))


@activity.defn(name=roles.SYNTHESIZE.name)
async def synthesize(inp: SynthesizeInput) -> SynthesizeOutput:
    return await _served(engine().synthesize(inp))


@activity.defn(name=roles.OUTLINE.name)
async def outline_report(inp: OutlineInput) -> OutlineOutput:
    return await _served(engine().outline_report(inp))


@activity.defn(name=roles.WRITE_SECTION.name)
async def write_section(inp: SectionInput) -> SectionOutput:
    return await _served(engine().write_section(inp))


@activity.defn(name=roles.SUMMARIZE.name)
async def summarize_report(inp: SummaryInput) -> SummaryOutput:
    return await _served(engine().summarize_report(inp))


@activity.defn(name=roles.VERIFY_CLAIMS.name)
async def verify_claims(inp: VerifyClaimsInput) -> VerifyClaimsOutput:
    return await _served(engine().verify_claims(inp))


@activity.defn(name=roles.REVISE_CLAIMS.name)
async def revise_claims(inp: ReviseClaimsInput) -> ReviseClaimsOutput:
    return await _served(engine().revise_claims(inp))


@activity.defn(name=roles.CRITIQUE.name)
async def critique(inp: CritiqueInput) -> CritiqueOutput:
    return await _served(engine().critique(inp))


LLM_ACTIVITIES = [
    route, clarify, coordinate, write_queries, plan, observe, reflect, synthesize,
    outline_report, write_section, summarize_report, verify_claims, revise_claims, critique,
]
