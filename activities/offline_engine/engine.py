"""The `offline` engine: every research role by classic information retrieval, no LLM, no network.

It is the default when no LLM endpoint is configured, so `make demo` and the tests run anywhere.
It is an honest baseline, not a pretend LLM:

- **Rules, stated.** Each decision (route, coordinate, reflect) comes from a small rule over the
  words of the input, and its `reasoning` names the rule and the word or figure that fired it.
- **Extraction, not writing.** Observations and reports are sentences quoted from the sources read,
  ranked by BM25 (`workflows.text.bm25_scores`) and cited `[n]` with the source's id. Nothing is
  paraphrased, so nothing can be made up; the report says it was made offline, by extraction.
- **Pure.** Every method is a function of its input: no I/O, no clock, no randomness, and no
  iteration over sets where order reaches the output (string hashing differs between processes).
  BM25 scores are rounded before ranking so float noise can never reorder equal sentences.

This module implements the `Engine` protocol (activities/engine.py) and nothing else: one method
per LLM role of workflows/roles.py, named after it, each a call into the module that holds the
role's rules (a test checks there is one per row). Each module's docstring names the rule
choices worth knowing.
"""

from __future__ import annotations

from activities.offline_engine import checks, reporting, revising
from activities.offline_engine.coordinating import classify, search_queries
from activities.offline_engine.observing import observe_step
from activities.offline_engine.planning import make_plan
from activities.offline_engine.reflecting import reflect_on
from activities.offline_engine.reporting import ENGINE_NAME, write_report
from activities.offline_engine.routing import clarification_question, route_by_rule
from workflows import activity_models as m
from workflows.models import PlanStep
from workflows.report_models import (
    OutlineInput,
    OutlineOutput,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
)


class OfflineEngine:
    """One research role per method, same interface as the OpenAI engine; usage stays zero."""

    name = ENGINE_NAME

    async def route(self, inp: m.RouteInput) -> m.RouteOutput:
        """Orchestrator layer 3 by rule. Layers 1–2 (limit, reply shortcut) are the workflow's."""
        return route_by_rule(inp)

    async def clarify(self, inp: m.ClarifyInput) -> m.ClarifyOutput:
        """The question that names what the routing rule found missing."""
        return clarification_question(inp)

    async def coordinate(self, inp: m.CoordinateInput) -> m.CoordinateOutput:
        """The classification, with the background search's queries (one call, not two)."""
        return classify(inp).model_copy(update={"queries": search_queries(inp, None, 2)})

    async def write_queries(self, inp: m.WriteQueriesInput) -> m.WriteQueriesOutput:
        return m.WriteQueriesOutput(queries=search_queries(inp, inp.step, inp.max_queries))

    async def plan(self, inp: m.PlanInput) -> m.PlanOutput:
        """The plan, each step with its search queries; the offline planner's steps are facets of
        one question, each looked up on its own, so they are independent."""
        drafted = make_plan(inp)
        for draft in drafted.steps:
            draft.queries = search_queries(
                inp, PlanStep(title=draft.title, description=draft.description), 2
            )
            draft.independent = True
        return drafted

    async def observe(self, inp: m.ObserveInput) -> m.ObserveOutput:
        return observe_step(inp, inp.step, inp.passages)

    async def reflect(self, inp: m.ReflectInput) -> m.ReflectOutput:
        return reflect_on(inp)

    async def synthesize(self, inp: m.SynthesizeInput) -> m.SynthesizeOutput:
        return write_report(inp)

    async def outline_report(self, inp: OutlineInput) -> OutlineOutput:
        return reporting.outline(inp)

    async def write_section(self, inp: SectionInput) -> SectionOutput:
        if inp.current:  # a person's revision of a finished section (workflows/revising/)
            return revising.revise_section(inp)
        return reporting.write_section(inp)

    async def summarize_report(self, inp: SummaryInput) -> SummaryOutput:
        return reporting.summarize(inp)

    async def verify_claims(self, inp: m.VerifyClaimsInput) -> m.VerifyClaimsOutput:
        return checks.verify(inp)

    async def revise_claims(self, inp: m.ReviseClaimsInput) -> m.ReviseClaimsOutput:
        return checks.revise(inp)

    async def critique(self, inp: m.CritiqueInput) -> m.CritiqueOutput:
        return checks.critique(inp)
