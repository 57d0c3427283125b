"""The LLM engine for any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter ...).

One method per LLM role of `workflows/roles.py`, named after it: each writes what the research
knows into its prompt's values (formatting.py), asks (chat.py) and turns the reply into the role's
output, keeping only what the reply may say (citations of sources it was shown, the steps asked for).
The checking roles (the judge, the reviser, the critic) do so in checking.py.

- The prompt (`activities/prompts/<file>.md`, the row's) is rendered with plain `{{name}}`
  substitution and sent as one user message. Each value is of the kind the prompt declares:
  `trusted` (the question as typed, settings, counts) or `quoted`, wrapped by formatting.py
  (page text, earlier reports, anything a model wrote from them); chat.py refuses any other.
- The reply is requested as strict structured output (`response_format` `json_schema`, built from
  the role's pydantic model without its `usage` field) and validated with that model (replies.py).
- Some servers do not support `json_schema`, `json_object` or a `temperature`. When one rejects
  a feature (HTTP 400/422 naming it), the engine remembers that per (base URL, model) for the life
  of the process and asks again without it (client.py); the reply is then parsed tolerantly.

Retries belong to Temporal, not to the HTTP client: the client is built with `max_retries=0` and
every failure leaves as an `ApplicationError` classified by `classify_error` (errors.py). Replies
are streamed and each call has its own limits below the activity's start-to-close timeout (silence,
the prompt's reading, the call's ceiling: streaming.py), so a hung server shows up as a clean
`LLMTimeout` attempt while a slow one that keeps writing is let finish. Each prompt's model tier,
temperature and silence timeout are in its role's row (`workflows/roles.py`);
LLM_SILENCE_TIMEOUT_S overrides the silence timeout.
"""

from __future__ import annotations

import re
from typing import Any

import openai
from temporalio.exceptions import ApplicationError

from activities.offline_engine import OfflineEngine
from activities.offline_engine.observing import (
    joined_by_quotes,
    led_by_sources,
    weighed_quotes,
)
from activities.openai_engine import checking, grounding
from activities.openai_engine.chat import Chat
from activities.openai_engine.errors import reply_problem
from activities.openai_engine.formatting import (
    NONE,
    _completed_steps,
    _conversation,
    _cut,
    _evidence,
    _findings,
    _lines,
    _passages,
    _plan,
    _source_list,
    _step,
    _step_findings,
    _wrapped,
    about,
    language,
    trusted,
    untrusted,
)
from activities.openai_engine.replies import _cited, _only_known_citations
from settings import Settings
from workflows import activity_models as m
from workflows.kit.citations import origin, reference
from workflows.models import (
    OBSERVATION_LIMIT,
    Claim,
    Message,
    RoutingDecision,
    StepStatus,
)
from workflows.report_models import (
    OutlineInput,
    OutlineOutput,
    ReportSection,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
)
from workflows.text import split_sentences

#: The agent each routing decision hands the conversation to.
NEXT_AGENT = {
    RoutingDecision.CLARIFICATION: "clarification",
    RoutingDecision.RESEARCH: "coordinator",
}


class OpenAIEngine:
    """One research role per method; one AsyncOpenAI client (one connection pool) per engine."""

    name = "openai"

    def __init__(
        self,
        settings: Settings,
        client: openai.AsyncOpenAI | None = None,
        langfuse: Any | None = None,
    ) -> None:
        self._chat = Chat(settings, client, langfuse)
        #: Writes extractively what a model's text failed to ground (grounding.py).
        self._extractive = OfflineEngine()

    # --- roles -------------------------------------------------------------------------------------------

    async def route(self, inp: m.RouteInput) -> m.RouteOutput:
        reply, usage = await self._chat.ask(
            "route",
            conversation_history=_conversation(inp.messages),
            clarification_count=inp.clarification_count,
            max_clarifications=inp.max_clarifications,
            # Seed 000's routing metadata: where the conversation goes next, and how far it has come.
            trace={
                "agent": "orchestrator",
                "clarification_count": inp.clarification_count,
                "iteration": inp.iteration,
            },
            describe=lambda r: {"next_agent": NEXT_AGENT[r.decision]},
        )
        decided = m.RouteOutput(**dict(reply), usage=usage)
        rules = await self._extractive.route(inp)
        if grounding.overruled(decided, rules):
            return rules.model_copy(update={"usage": usage})
        return decided

    async def clarify(self, inp: m.ClarifyInput) -> m.ClarifyOutput:
        reply, usage = await self._chat.ask(
            "clarify",
            conversation_history=_conversation(inp.messages),
            language=language(inp.language),
        )
        question = reply.question.strip()
        if not grounding.asks_about(question, _said(inp.messages)):
            question = (await self._extractive.clarify(inp)).question
        elif grounding.repeats(question, _said(inp.messages)):
            return await self._instead_of_echo(inp, usage)
        return m.ClarifyOutput(question=question, usage=usage)

    async def _instead_of_echo(self, inp: m.ClarifyInput, usage: m.Usage) -> m.ClarifyOutput:
        """A question back that repeats the conversation is not asked: the person would only be
        asked what they just said, and the research would wait for it. Where the engine's rules
        find the question vague, their own question is asked; else none, and it is researched."""
        rules = await self._extractive.route(
            m.RouteInput(messages=inp.messages, clarification_count=0, max_clarifications=1)
        )
        if rules.decision is RoutingDecision.CLARIFICATION:
            own = (await self._extractive.clarify(inp)).question
            return m.ClarifyOutput(question=own, usage=usage, note=grounding.ECHO_REPLACED)
        return m.ClarifyOutput(question="", usage=usage, note=grounding.ECHO_SKIPPED)

    async def coordinate(self, inp: m.CoordinateInput) -> m.CoordinateOutput:
        reply, usage = await self._chat.ask(
            "coordinate",
            **about(inp),
            conversation_history=_conversation(inp.messages),
        )
        decided = m.CoordinateOutput(**dict(reply), usage=usage)
        if not decided.queries or grounding.on_topic_queries(decided.queries, inp.question_line()):
            return decided  # none at all: the research asks the query writer for them
        about_it = inp.model_dump(include=set(m.AboutQuestion.model_fields))
        asked = m.WriteQueriesInput(**about_it, max_queries=max(2, len(decided.queries)))
        queries = (await self._extractive.write_queries(asked)).queries
        return decided.model_copy(update={"queries": queries})

    async def write_queries(self, inp: m.WriteQueriesInput) -> m.WriteQueriesOutput:
        """Background queries (no step) or one step's queries; cleaned, de-duplicated, capped."""
        limit = max(1, inp.max_queries)
        if inp.step is None:
            reply, usage = await self._chat.ask(
                "write_queries", prompt="agent_background", **about(inp), max_queries=limit
            )
        else:
            reply, usage = await self._chat.ask(
                "write_queries",
                prompt="agent_researcher_queries",
                **about(inp),
                step=_step(inp.step),
                max_queries=limit,
            )
        subjects = [inp.question_line(), *([inp.step.title] if inp.step else [])]
        queries: list[str] = []
        offered = grounding.on_topic_queries(reply.queries, *subjects)
        if not offered:  # nothing about the question: the engine's own queries
            offered = (await self._extractive.write_queries(inp)).queries
        for query in offered:
            query = " ".join(query.split()).strip("\"'")
            if query and query.lower() not in {q.lower() for q in queries}:
                queries.append(query)
        return m.WriteQueriesOutput(queries=queries[:limit], usage=usage)

    async def plan(self, inp: m.PlanInput) -> m.PlanOutput:
        """New steps only. `min_steps`/`max_steps` count new steps (the workflow subtracts the
        completed ones); at least one is asked for whenever there is room, since a replan that
        adds nothing would leave the research with nothing to do."""
        most = inp.max_steps
        least = min(max(1, inp.min_steps), most) if most > 0 else 0
        reply, usage = await self._chat.ask(
            "plan",
            **about(inp),
            background=_wrapped(inp.background, "source"),
            completed_steps=_completed_steps(inp.completed_steps),
            feedback=_lines(inp.feedback, "feedback"),
            iteration=inp.iteration,
            min_steps=least,
            max_steps=most,
        )
        question = inp.question_line()
        steps = grounding.on_topic_steps([s for s in reply.steps if s.title.strip()], question)
        title = reply.title
        if len(steps) < least or not grounding.about(title, question):
            drafted = await self._extractive.plan(inp)
            steps += drafted.steps[: max(0, least - len(steps))]
            title = title if grounding.about(title, question) else drafted.title
        missed = grounding.parts_missed(question, [*steps, *inp.completed_steps])
        if missed and len(steps) < most:
            drafted = await self._extractive.plan(inp)
            steps += grounding.steps_for(missed, drafted.steps)[: most - len(steps)]
        return m.PlanOutput(
            title=title, thought=reply.thought, steps=steps[: max(most, 0)], usage=usage
        )

    async def observe(self, inp: m.ObserveInput) -> m.ObserveOutput:
        """The step's observation, citing only the passages given. Citations of other ids are
        removed, and `source_ids` is what the text cites plus what the model listed, all known."""
        if not inp.passages:
            return m.ObserveOutput(
                observation="No sources could be read for this step.", source_ids=[]
            )
        known = [p.source_id for p in inp.passages]
        try:
            reply, usage = await self._chat.ask(
                "observe",
                **about(inp),
                step=_step(inp.step),
                sources=_passages(inp.passages),
                source_ids=trusted(", ".join(str(n) for n in dict.fromkeys(known))),
                language=language(inp.language),
            )
        except ApplicationError as err:
            if not reply_problem(err):
                raise
            # The step's sentences quoted by the engine, said to be its own: the workflow's
            # fallback could only say "could not write an observation" (SmolLM2, cut off twice
            # on a busy machine, left a year on Mars unanswered though mars.md was read).
            quoted = await self._extractive.observe(inp)
            return quoted.model_copy(update={"usage": m.Usage(fell_back=err.message)})
        observation = _cut(_only_known_citations(reply.observation, set(known)), OBSERVATION_LIMIT)
        source_ids = [
            n for n in dict.fromkeys([*_cited(observation), *reply.source_ids]) if n in known
        ]
        if not grounding.grounded_observation(observation, inp.passages):
            # The sources' own sentences, those of the sources the model chose first.
            quoted = led_by_sources(inp, inp.step, inp.passages, source_ids)
            observation, source_ids = quoted.observation, quoted.source_ids
        elif quotes := grounding.quotes_only(observation, inp.passages):
            weighed = weighed_quotes(inp, inp.step, inp.passages, quotes)
            observation, source_ids = weighed.observation, weighed.source_ids
        elif len(split_sentences(observation)) < 2:
            # Faithful but thin: the model's sentence, then what else the step's sources hold.
            joined = joined_by_quotes(inp, inp.step, inp.passages, observation, source_ids)
            observation, source_ids = joined.observation, joined.source_ids
        return m.ObserveOutput(
            observation=observation,
            source_ids=source_ids,
            needs_more=reply.needs_more,
            suggested_agent=reply.suggested_agent if reply.needs_more else None,
            suggested_query=reply.suggested_query if reply.needs_more else None,
            usage=usage,
        )

    async def reflect(self, inp: m.ReflectInput) -> m.ReflectOutput:
        """The decision as the model made it; the workflow enforces the minimum-steps rule, so a
        refused COMPLETE is recorded there with its reason."""
        pending = sum(
            1 for s in inp.plan.steps if s.status in (StepStatus.PENDING, StepStatus.IN_PROGRESS)
        )
        reply, usage = await self._chat.ask(
            "reflect",
            **about(inp),
            plan=_plan(inp.plan),
            completed_steps=inp.completed_steps,
            total_steps=len(inp.plan.steps),
            pending_steps=pending,
            min_steps=inp.min_steps,
            sources_count=inp.sources_count,
        )
        return m.ReflectOutput(**dict(reply), usage=usage)

    async def synthesize(self, inp: m.SynthesizeInput) -> m.SynthesizeOutput:
        """The report in markdown with `[n]` citations; a Sources list is appended if the model
        left it out, so every report says where its citations lead."""
        model = self._chat.model_for("synthesize")
        reply, usage = await self._chat.ask(
            "synthesize",
            **about(inp),
            findings=_findings(inp.plan),
            passages=_passages(inp.passages),
            sources=_source_list(inp.sources, {s.id: origin(s) for s in inp.sources}),
            notes=_lines(inp.notes, "findings"),
            evidence=_evidence(inp.evidence),
            feedback=_lines(inp.feedback, "feedback"),
            target_words=inp.target_words,
            language=language(inp.language),
        )
        markdown = reply.markdown.strip()
        by_id = {s.id: s for s in inp.sources}
        cited = [by_id[n] for n in _cited(markdown) if n in by_id]
        if cited and not re.search(r"^#+\s*Sources\b", markdown, re.M | re.I):
            listing = "\n".join(
                f"[{s.id}] {reference(s)} - {s.url} ({origin(s)})"
                for s in sorted(cited, key=lambda s: s.id)
            )
            markdown += f"\n\n## Sources\n\n{listing}"
        claims = [
            Claim(text=c.text, source_ids=c.source_ids) for c in reply.claims if c.text.strip()
        ]
        written = m.SynthesizeOutput(
            markdown=markdown + "\n", claims=claims, engine=f"openai:{model}", usage=usage
        )
        evidence = grounding.evidence_for(inp)
        if evidence and not grounding.enough(claims, evidence):
            return grounding.composed(written, await self._extractive.synthesize(inp))
        return written

    async def outline_report(self, inp: OutlineInput) -> OutlineOutput:
        """The long report's title and sections, each with the steps whose findings it uses."""
        model = self._chat.model_for("outline_report")
        steps = "\n\n".join(
            f"Step {i}: {s.title}\n{s.observation.strip()}"
            for i, s in enumerate(inp.plan.steps)
            if s.status is StepStatus.COMPLETED and s.observation
        )
        reply, usage = await self._chat.ask(
            "outline_report",
            **about(inp),
            findings=_wrapped(steps, "findings"),
            notes=_lines(inp.notes, "findings"),
            feedback=_lines(inp.feedback, "feedback"),
            target_words=inp.target_words,
            language=language(inp.language),
        )
        sections = [
            ReportSection(heading=s.heading, brief=s.brief, step_indexes=s.step_indexes)
            for s in reply.sections
            if s.heading.strip()
        ]
        return OutlineOutput(
            title=reply.title.strip(), sections=sections, engine=f"openai:{model}", usage=usage
        )

    async def write_section(self, inp: SectionInput) -> SectionOutput:
        """One section's prose; citations to ids outside the section's sources are removed."""
        known = {s.id for s in inp.sources}
        reply, usage = await self._chat.ask(
            "write_section",
            **about(inp),
            section=untrusted(
                f"Report title: {inp.title}\nThis section: {inp.section.heading}\n"
                f"What it must cover: {inp.section.brief or NONE}",
                "report",
            ),
            findings=_step_findings(inp.steps),
            evidence=_evidence(inp.evidence),
            sources=_source_list(inp.sources),
            other_headings=_lines(inp.other_headings, "report"),
            told_before=_wrapped(_cut("\n".join(inp.told_before), 4000), "findings"),
            feedback=_lines(inp.feedback, "feedback"),
            target_words=inp.target_words,
            language=language(inp.language),
        )
        written = SectionOutput(
            markdown=_only_known_citations(reply.markdown.strip(), known),
            claims=_cited_claims(reply.claims, known),
            usage=usage,
        )
        evidence = grounding.evidence_for(inp)
        if evidence and not grounding.enough(written.claims, evidence):
            return grounding.composed(written, await self._extractive.write_section(inp))
        return written

    async def summarize_report(self, inp: SummaryInput) -> SummaryOutput:
        known = {s.id for s in inp.sources}
        reply, usage = await self._chat.ask(
            "summarize_report",
            **about(inp),
            outline=untrusted(
                f"Title: {inp.title}\n"
                + "\n".join(f"- {s.heading}: {s.brief}" for s in inp.sections),
                "report",
            ),
            findings=_step_findings(inp.steps),
            sources=_source_list(inp.sources),
            feedback=_lines(inp.feedback, "feedback"),
            target_words=inp.target_words,
            language=language(inp.language),
        )
        return SummaryOutput(
            markdown=_only_known_citations(reply.markdown.strip(), known),
            claims=_cited_claims(reply.claims, known),
            usage=usage,
        )

    async def verify_claims(self, inp: m.VerifyClaimsInput) -> m.VerifyClaimsOutput:
        return await checking.verify_claims(self._chat, inp)

    async def revise_claims(self, inp: m.ReviseClaimsInput) -> m.ReviseClaimsOutput:
        return await checking.revise_claims(self._chat, inp)

    async def critique(self, inp: m.CritiqueInput) -> m.CritiqueOutput:
        return await checking.critique(self._chat, inp)


def _said(messages: list[Message]) -> str:
    """The conversation's words: what a question back must be about."""
    return "\n".join(x.content for x in messages)


def _cited_claims(claims: list[Any], known: set[int]) -> list[Claim]:
    """The reply's claims that cite at least one of the sources the writer was given."""
    kept = [
        Claim(text=c.text, source_ids=[n for n in c.source_ids if n in known])
        for c in claims
        if c.text.strip()
    ]
    return [c for c in kept if c.source_ids]
