"""The LLM engine for any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter ...).

Each research role is a prompt file (`activities/prompts/<role>.md`) plus one typed chat call:

- The prompt is rendered with plain `{{name}}` substitution and sent as one user message.
- The reply is requested as strict structured output (`response_format` `json_schema`, built from
  the role's pydantic model without its `usage` field) and validated with that model (replies.py).
- Some servers do not support `json_schema`, `json_object` or a `temperature`. When one rejects
  a feature (HTTP 400/422 naming it), the engine remembers that per (base URL, model) for the life
  of the process and asks again without it (client.py); the reply is then parsed tolerantly.

Retries belong to Temporal, not to the HTTP client: the client is built with `max_retries=0` and
every failure leaves as an `ApplicationError` classified by `classify_error` (errors.py). Each call
has its own timeout below the activity's start-to-close timeout, so a hung server shows up as a
clean `LLMTimeout` attempt instead of a killed activity. Each prompt's model tier, temperature and
timeout are rows of `workflows/roles.py` (`PROMPTS`); LLM_REQUEST_TIMEOUT_S overrides the timeout.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, TypeVar

import openai
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from activities import pricing, tracing
from config import Settings
from activities.openai_engine.client import _UNSUPPORTED, _features, _rejected_feature, _request, connect
from activities.openai_engine.errors import classify_error
from workflows.citations import origin
from workflows.redaction import redact
from activities.openai_engine.formatting import (
    NONE,
    _completed_steps,
    _conversation,
    _cut,
    _evidence,
    _findings,
    _ids,
    _passages,
    untrusted,
    _plan,
)
from activities.openai_engine.replies import (
    OutlineReply,
    SectionReply,
    SummaryReply,
    read_text,
    ClarifyReply,
    ClassificationReply,
    CritiqueReply,
    FindingsReply,
    PlanReply,
    QueriesReply,
    ReflectReply,
    ReportReply,
    ReviseReply,
    RouteReply,
    VerifyReply,
    _cited,
    _only_known_citations,
    read_reply,
)
from activities.prompts.loader import PromptBook
from activities.usage import served
from workflows.models import (
    OBSERVATION_LIMIT,
    Claim,
    RoutingDecision,
    StepStatus,
)
from workflows.activity_models import (
    ClarifyInput,
    ClarifyOutput,
    CoordinateInput,
    CoordinateOutput,
    CritiqueInput,
    CritiqueOutput,
    ObserveInput,
    ObserveOutput,
    OutlineInput,
    OutlineOutput,
    ReportSection,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
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
    Usage,
    VerifyClaimsInput,
    VerifyClaimsOutput,
    WriteQueriesInput,
    WriteQueriesOutput,
)
from workflows.language import name as language_name
from workflows.roles import PROMPTS

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

#: The agent each routing decision hands the conversation to.
NEXT_AGENT = {RoutingDecision.CLARIFICATION: "clarification", RoutingDecision.RESEARCH: "coordinator"}


class OpenAIEngine:
    """One research role per method; one AsyncOpenAI client (one connection pool) per engine."""

    name = "openai"

    def __init__(
        self, settings: Settings, client: openai.AsyncOpenAI | None = None, langfuse: Any | None = None
    ) -> None:
        self._settings = settings
        self._langfuse = langfuse if langfuse is not None else tracing.langfuse_for(settings)
        self._prompts = PromptBook(self._langfuse)
        self._secret = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        try:
            self._prices = pricing.table(settings.llm_prices)
        except pricing.PriceError as err:
            raise ApplicationError(str(err), type="ConfigError", non_retryable=True) from None
        if client is None:
            client = connect(settings, self._secret)
        self._client = client
        self._base_url = str(client.base_url).rstrip("/")

    # --- roles -------------------------------------------------------------------------------------------

    async def route(self, inp: RouteInput) -> RouteOutput:
        reply, usage = await self._ask(
            "agent_orchestrator",
            RouteReply,
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
        return RouteOutput(**dict(reply), usage=usage)

    async def clarify(self, inp: ClarifyInput) -> ClarifyOutput:
        reply, usage = await self._ask(
            "agent_clarification", ClarifyReply, conversation_history=_conversation(inp.messages),
            language=language_name(inp.language),
        )
        return ClarifyOutput(question=reply.question.strip(), usage=usage)

    async def coordinate(self, inp: CoordinateInput) -> CoordinateOutput:
        reply, usage = await self._ask(
            "agent_coordinator",
            ClassificationReply,
            query=inp.topic_text(),
            conversation_history=_conversation(inp.messages),
        )
        return CoordinateOutput(**dict(reply), usage=usage)

    async def write_queries(self, inp: WriteQueriesInput) -> WriteQueriesOutput:
        """Background queries (no step) or one step's queries; cleaned, de-duplicated, capped."""
        limit = max(1, inp.max_queries)
        if inp.step is None:
            reply, usage = await self._ask(
                "agent_background", QueriesReply, query=inp.topic_text(), max_queries=limit
            )
        else:
            reply, usage = await self._ask(
                "agent_researcher_queries",
                QueriesReply,
                query=inp.topic_text(),
                step_title=inp.step.title,
                step_description=inp.step.description or NONE,
                max_queries=limit,
            )
        queries: list[str] = []
        for query in reply.queries:
            query = " ".join(query.split()).strip("\"'")
            if query and query.lower() not in {q.lower() for q in queries}:
                queries.append(query)
        return WriteQueriesOutput(queries=queries[:limit], usage=usage)

    async def plan(self, inp: PlanInput) -> PlanOutput:
        """New steps only. `min_steps`/`max_steps` count new steps (the workflow subtracts the
        completed ones); at least one is asked for whenever there is room, since a replan that
        adds nothing would leave the research with nothing to do."""
        most = inp.max_steps
        least = min(max(1, inp.min_steps), most) if most > 0 else 0
        reply, usage = await self._ask(
            "agent_planner",
            PlanReply,
            query=inp.topic_text(),
            background=untrusted(inp.background) if inp.background.strip() else NONE,
            completed_steps=_completed_steps(inp.completed_steps),
            feedback="\n".join(f"- {f}" for f in inp.feedback) or NONE,
            iteration=inp.iteration,
            min_steps=least,
            max_steps=most,
        )
        steps = [s for s in reply.steps if s.title.strip()]
        return PlanOutput(title=reply.title, thought=reply.thought, steps=steps[: max(most, 0)], usage=usage)

    async def observe(self, inp: ObserveInput) -> ObserveOutput:
        """The step's observation, citing only the passages given. Citations of other ids are
        removed, and `source_ids` is what the text cites plus what the model listed, all known."""
        if not inp.passages:
            return ObserveOutput(observation="No sources could be read for this step.", source_ids=[])
        known = [p.source_id for p in inp.passages]
        reply, usage = await self._ask(
            "agent_researcher",
            FindingsReply,
            query=inp.topic_text(),
            step_title=inp.step.title,
            step_description=inp.step.description or NONE,
            sources=_passages(inp.passages),
            source_ids=", ".join(str(n) for n in dict.fromkeys(known)),
            language=language_name(inp.language),
        )
        observation = _cut(_only_known_citations(reply.observation, set(known)), OBSERVATION_LIMIT)
        source_ids = [n for n in dict.fromkeys([*_cited(observation), *reply.source_ids]) if n in known]
        return ObserveOutput(
            observation=observation,
            source_ids=source_ids,
            needs_more=reply.needs_more,
            suggested_agent=reply.suggested_agent if reply.needs_more else None,
            suggested_query=reply.suggested_query if reply.needs_more else None,
            usage=usage,
        )

    async def reflect(self, inp: ReflectInput) -> ReflectOutput:
        """The decision as the model made it; the workflow enforces the minimum-steps rule, so a
        refused COMPLETE is recorded there with its reason."""
        pending = sum(1 for s in inp.plan.steps if s.status in (StepStatus.PENDING, StepStatus.IN_PROGRESS))
        reply, usage = await self._ask(
            "agent_reflector",
            ReflectReply,
            query=inp.topic_text(),
            plan=_plan(inp.plan),
            completed_steps=inp.completed_steps,
            total_steps=len(inp.plan.steps),
            pending_steps=pending,
            min_steps=inp.min_steps,
            sources_count=inp.sources_count,
        )
        return ReflectOutput(**dict(reply), usage=usage)

    async def synthesize(self, inp: SynthesizeInput) -> SynthesizeOutput:
        """The report in markdown with `[n]` citations; a Sources list is appended if the model
        left it out, so every report says where its citations lead."""
        model = self._settings.model_for(PROMPTS["agent_synthesizer"].tier.value)
        reply, usage = await self._ask(
            "agent_synthesizer",
            ReportReply,
            query=inp.topic_text(),
            findings=_findings(inp.plan),
            passages=_passages(inp.passages),
            sources="\n".join(f"[{s.id}] {s.title} - {s.url} ({origin(s)})" for s in inp.sources) or NONE,
            notes="\n".join(f"- {n}" for n in inp.notes) or NONE,
            evidence=_evidence(inp.evidence),
            feedback="\n".join(f"- {f}" for f in inp.feedback) or NONE,
            target_words=inp.target_words,
            language=language_name(inp.language),
        )
        markdown = reply.markdown.strip()
        by_id = {s.id: s for s in inp.sources}
        cited = [by_id[n] for n in _cited(markdown) if n in by_id]
        if cited and not re.search(r"^#+\s*Sources\b", markdown, re.M | re.I):
            listing = "\n".join(f"[{s.id}] {s.title} - {s.url} ({origin(s)})" for s in sorted(cited, key=lambda s: s.id))
            markdown += f"\n\n## Sources\n\n{listing}"
        claims = [Claim(text=c.text, source_ids=c.source_ids) for c in reply.claims if c.text.strip()]
        return SynthesizeOutput(markdown=markdown + "\n", claims=claims, engine=f"openai:{model}", usage=usage)

    async def outline_report(self, inp: OutlineInput) -> OutlineOutput:
        """The long report's title and sections, each with the steps whose findings it uses."""
        model = self._settings.model_for(PROMPTS["agent_outliner"].tier.value)
        steps = "\n\n".join(
            f"Step {i}: {s.title}\n{untrusted(s.observation, 'findings')}"
            for i, s in enumerate(inp.plan.steps) if s.status is StepStatus.COMPLETED and s.observation
        )
        reply, usage = await self._ask(
            "agent_outliner",
            OutlineReply,
            query=inp.topic_text(),
            findings=steps or NONE,
            notes="\n".join(f"- {n}" for n in inp.notes) or NONE,
            feedback="\n".join(f"- {f}" for f in inp.feedback) or NONE,
            target_words=inp.target_words,
            language=language_name(inp.language),
        )
        sections = [ReportSection(heading=s.heading, brief=s.brief, step_indexes=s.step_indexes)
                    for s in reply.sections if s.heading.strip()]
        return OutlineOutput(title=reply.title.strip(), sections=sections, engine=f"openai:{model}", usage=usage)

    async def write_section(self, inp: SectionInput) -> SectionOutput:
        """One section's prose; citations to ids outside the section's sources are removed."""
        known = {s.id for s in inp.sources}
        reply, usage = await self._ask(
            "agent_section_writer",
            SectionReply,
            query=inp.topic_text(),
            title=inp.title,
            heading=inp.section.heading,
            brief=inp.section.brief or NONE,
            findings=_step_findings(inp.steps),
            evidence=_evidence(inp.evidence),
            sources=_source_list(inp.sources),
            other_headings="\n".join(f"- {h}" for h in inp.other_headings) or NONE,
            told_before=untrusted(_cut("\n".join(inp.told_before), 4000), "findings") if inp.told_before else NONE,
            feedback="\n".join(f"- {f}" for f in inp.feedback) or NONE,
            target_words=inp.target_words,
            language=language_name(inp.language),
        )
        return SectionOutput(markdown=_only_known_citations(reply.markdown.strip(), known),
                             claims=_cited_claims(reply.claims, known), usage=usage)

    async def summarize_report(self, inp: SummaryInput) -> SummaryOutput:
        known = {s.id for s in inp.sources}
        reply, usage = await self._ask(
            "agent_summarizer",
            SummaryReply,
            query=inp.topic_text(),
            title=inp.title,
            sections="\n".join(f"- {s.heading}: {s.brief}" for s in inp.sections) or NONE,
            findings=_step_findings(inp.steps),
            sources=_source_list(inp.sources),
            feedback="\n".join(f"- {f}" for f in inp.feedback) or NONE,
            target_words=inp.target_words,
            language=language_name(inp.language),
        )
        return SummaryOutput(markdown=_only_known_citations(reply.markdown.strip(), known),
                             claims=_cited_claims(reply.claims, known), usage=usage)

    async def verify_claims(self, inp: VerifyClaimsInput) -> VerifyClaimsOutput:
        """The judge's verdict per claim; a claim the model skipped stays out of the answer and
        the workflow keeps it `unverified` rather than guessing."""
        asked = {c.index for c in inp.claims}
        reply, usage = await self._ask(
            "agent_verifier",
            VerifyReply,
            query=inp.topic_text(),
            claims="\n".join(f"{c.index}. {c.text} (cites {_ids(c.source_ids)})" for c in inp.claims),
            evidence=_evidence(inp.evidence),
        )
        verdicts = {v.index: v for v in reply.verdicts if v.index in asked}
        return VerifyClaimsOutput(verdicts=list(verdicts.values()), usage=usage)

    async def revise_claims(self, inp: ReviseClaimsInput) -> ReviseClaimsOutput:
        """Rewrites that cite only the ids the claim cited: a rewrite may narrow, never re-source."""
        allowed = {c.index: set(c.source_ids) for c in inp.claims}
        reasons = dict(zip((c.index for c in inp.claims), inp.reasons))
        reply, usage = await self._ask(
            "agent_reviser",
            ReviseReply,
            query=inp.topic_text(),
            claims="\n".join(
                f"{c.index}. {c.text} (cites {_ids(c.source_ids)}; judged unsupported: {reasons.get(c.index, NONE)})"
                for c in inp.claims
            ),
            evidence=_evidence(inp.evidence),
            language=language_name(inp.language),
        )
        rewrites = [
            r.model_copy(update={"text": _only_known_citations(r.text, allowed[r.index]).strip()})
            for r in reply.rewrites
            if r.index in allowed
        ]
        return ReviseClaimsOutput(rewrites=rewrites, usage=usage)

    async def critique(self, inp: CritiqueInput) -> CritiqueOutput:
        v = inp.verification
        reply, usage = await self._ask(
            "agent_critic",
            CritiqueReply,
            query=inp.topic_text(),
            report=untrusted(_cut(inp.report_markdown, 12000), 'report'),
            verification=(
                f"{v.claims} claims: {v.supported} supported, {v.partial} partly supported, "
                f"{v.unsupported} unsupported ({v.removed} removed, {v.revised} rewritten), {v.unverified} unverified"
            ),
            sources_count=inp.sources_count,
            steps=f"{inp.steps_completed} of {inp.steps_planned} planned steps researched",
        )
        return CritiqueOutput(**dict(reply), usage=usage)

    # --- the one place that talks to the endpoint --------------------------------------------------------

    async def _ask(
        self,
        role: str,
        reply: type[T],
        *,
        trace: dict[str, Any] | None = None,
        describe: Callable[[T], dict[str, Any]] | None = None,
        **values: Any,
    ) -> tuple[T, Usage]:
        """Render the role's prompt, call the model, validate the reply; each request is one
        Langfuse generation (`describe` adds what the reply means to its metadata).

        Tries strict structured output first; a server that rejects a feature gets the call again
        without it (remembered per base URL and model, so later calls skip the failed attempt).
        Everything else becomes a classified `ApplicationError`.
        """
        model = self._settings.model_for(PROMPTS[role].tier.value)
        prompt, rendered = await self._prompts.get(role, values)
        unsupported = _UNSUPPORTED.setdefault((self._base_url, model), set())
        while True:
            content, options = _request(role, rendered, reply, unsupported)
            messages = [{"role": "user", "content": content}]
            with tracing.generation(
                self._langfuse, role=role, model=model, prompt=prompt, messages=messages,
                parameters={k: v for k, v in options.items() if k != "response_format"},
                metadata={"response_format": options.get("response_format", {}).get("type", "none"),
                          **(trace or {})},
            ) as generation:
                try:
                    completion = await self._client.chat.completions.create(
                        model=model, messages=messages, timeout=self._timeout(role), **options  # type: ignore[arg-type]
                    )
                except openai.APIStatusError as err:
                    feature = _rejected_feature(err, _features(options))
                    if feature is None:
                        failure = self._error(err, model)
                        generation.failed(failure.message)
                        raise failure from None
                    generation.failed(f"the server rejected {feature}; asking again without it")
                    log.warning(
                        "%s (model %s) rejected %s: asking without it from now on", redact(self._base_url), model, feature
                    )
                    unsupported.add(feature)
                    continue
                except openai.OpenAIError as err:
                    failure = self._error(err, model)
                    generation.failed(failure.message)
                    raise failure from None
                usage = self._usage(completion, model)
                served(usage.prompt_tokens, usage.completion_tokens, usage)
                try:
                    if _cut_off(completion):
                        parsed, usage = await self._continued(role, model, messages, options, completion, reply, usage)
                    else:
                        parsed = read_reply(completion, reply, model, lambda err: self._error(err, model))
                except ApplicationError as failure:
                    text = completion.choices[0].message.content if completion.choices else None
                    generation.failed(failure.message, output=text, usage=usage)
                    raise
                generation.succeeded(parsed.model_dump(), usage, describe(parsed) if describe else None)
                return parsed, usage

    async def _continued(
        self, role: str, model: str, messages: list[dict[str, str]], options: dict[str, Any],
        completion: Any, reply: type[T], usage: Usage,
    ) -> tuple[T, Usage]:
        """A reply cut off at `max_tokens` is continued once, in the same conversation, rather
        than thrown away: the two parts are read as one reply. A continuation that is cut off
        too fails as a truncated reply (the role's fallback applies)."""
        partial = completion.choices[0].message.content
        more_messages = [
            *messages,
            {"role": "assistant", "content": partial},
            {"role": "user", "content": "Your reply was cut off by the length limit. Continue it exactly where "
                                        "it stopped: write only the rest, with no preface and nothing repeated."},
        ]
        plain = {k: v for k, v in options.items() if k != "response_format"}
        try:
            more = await self._client.chat.completions.create(
                model=model, messages=more_messages, timeout=self._timeout(role), **plain  # type: ignore[arg-type]
            )
        except openai.OpenAIError as err:
            raise self._error(err, model) from None
        extra = self._usage(more, model)
        served(extra.prompt_tokens, extra.completion_tokens, extra)
        usage = _added(usage, extra)
        if _cut_off(more) or not more.choices:
            return read_reply(more, reply, model, lambda err: self._error(err, model)), usage
        return read_text(partial + (more.choices[0].message.content or ""), reply, model), usage

    def _usage(self, completion: Any, model: str) -> Usage:
        """What one completion cost: its tokens, priced by the model's row (None: no price known)."""
        prompt_tokens = getattr(completion.usage, "prompt_tokens", 0) or 0
        completion_tokens = getattr(completion.usage, "completion_tokens", 0) or 0
        price = pricing.price_of(model, self._prices)
        return Usage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            requests=1,
            cost_usd=None if price is None else price.cost(prompt_tokens, completion_tokens),
            unpriced=None if price is not None else model,
            price_in=price.input if price else 0.0,
            price_out=price.output if price else 0.0,
        )

    def _timeout(self, role: str) -> float:
        return self._settings.llm_request_timeout_s or PROMPTS[role].request_timeout_s

    def _error(self, err: openai.OpenAIError, model: str) -> ApplicationError:
        return classify_error(err, model=model, base_url=self._base_url, secret=self._secret)


def _cut_off(completion: Any) -> bool:
    """A reply stopped by `max_tokens` with text worth continuing."""
    return bool(completion.choices) and completion.choices[0].finish_reason == "length" and bool(
        completion.choices[0].message.content)


def _added(a: Usage, b: Usage) -> Usage:
    cost = None if a.cost_usd is None or b.cost_usd is None else a.cost_usd + b.cost_usd
    return a.model_copy(update={
        "prompt_tokens": a.prompt_tokens + b.prompt_tokens,
        "completion_tokens": a.completion_tokens + b.completion_tokens,
        "requests": a.requests + b.requests,
        "cost_usd": cost,
    })


def _step_findings(steps: list[Any]) -> str:
    """Each step's observation under its title, delimited as data."""
    return "\n\n".join(f"{s.title}:\n{untrusted(s.observation or '', 'findings')}" for s in steps) or NONE


def _source_list(sources: list[Any]) -> str:
    return "\n".join(f"[{s.id}] {s.title} - {s.url}" for s in sources) or NONE


def _cited_claims(claims: list[Any], known: set[int]) -> list[Claim]:
    """The reply's claims that cite at least one of the sources the writer was given."""
    kept = [Claim(text=c.text, source_ids=[n for n in c.source_ids if n in known]) for c in claims if c.text.strip()]
    return [c for c in kept if c.source_ids]
