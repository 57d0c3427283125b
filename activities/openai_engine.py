"""The LLM engine for any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter ...).

Each research role is a prompt file (`activities/prompts/<role>.md`) plus one typed chat call:

- The prompt is rendered with plain `{{name}}` substitution and sent as one user message.
- The reply is requested as strict structured output (`response_format` `json_schema`, built from
  the role's pydantic model without its `usage` field) and validated with that model.
- Some servers do not support `json_schema`, `json_object` or a `temperature`. When one rejects
  a feature (HTTP 400/422 naming it), the engine remembers that per (base URL, model) for the life
  of the process and asks again without it: JSON mode with the schema written into the prompt,
  then plain text; the reply is then parsed tolerantly (code fences, `<think>` blocks and text
  around the JSON object are ignored).

Retries belong to Temporal, not to the HTTP client: the client is built with `max_retries=0` and
every failure leaves as an `ApplicationError` classified by `classify_error` (retryable, with a
server-requested delay for 429, or non-retryable with a message that says what to fix). Each call
has its own timeout (ROLE_TIMEOUT_S) below the activity's start-to-close timeout, so a hung server
shows up as a clean `LLMTimeout` attempt instead of a killed activity.
"""

from __future__ import annotations

import email.utils
import json
import logging
import re
import time
from datetime import timedelta
from enum import Enum
from collections.abc import Callable
from typing import Any, TypeVar

import openai
from openai.lib._pydantic import to_strict_json_schema
from pydantic import BaseModel, create_model
from temporalio.exceptions import ApplicationError

from activities import tracing
from activities.config import Settings
from activities.prompts.loader import PromptBook, load_prompt  # noqa: F401 - load_prompt re-exported for tests
from activities.usage import served
from workflows.models import (
    OBSERVATION_LIMIT,
    ROUTING_HISTORY,
    Claim,
    Evidence,
    Message,
    Passage,
    Plan,
    PlanStep,
    RoutingDecision,
    Speaker,
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

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

#: Model tier per role (seed 002): cheap models route and judge, the strongest one writes the report.
ROLE_TIER = {
    "agent_orchestrator": "simple",
    "agent_clarification": "simple",
    "agent_coordinator": "simple",
    "agent_background": "simple",
    "agent_researcher_queries": "analytical",
    "agent_planner": "analytical",
    "agent_researcher": "analytical",
    "agent_reflector": "simple",
    "agent_synthesizer": "complex",
    # Judging a claim against a passage is a reading task; rewriting one is close to it.
    "agent_verifier": "analytical",
    "agent_reviser": "analytical",
    "agent_critic": "analytical",
}

#: The agent each routing decision hands the conversation to.
NEXT_AGENT = {RoutingDecision.CLARIFICATION: "clarification", RoutingDecision.RESEARCH: "coordinator"}

#: Low for decisions (routing at 0.3 per seed 000), a little higher where variety helps.
ROLE_TEMPERATURE = {
    "agent_orchestrator": 0.3,
    "agent_clarification": 0.5,
    "agent_coordinator": 0.2,
    "agent_background": 0.4,
    "agent_researcher_queries": 0.4,
    "agent_planner": 0.4,
    "agent_researcher": 0.2,
    "agent_reflector": 0.2,
    "agent_synthesizer": 0.3,
    "agent_verifier": 0.0,
    "agent_reviser": 0.2,
    "agent_critic": 0.0,
}

#: Seconds one HTTP call may take. Kept below the activity start-to-close timeouts the workflow sets
#: (90 s, synthesis 180 s) so the client gives up first and the failure is classified.
ROLE_TIMEOUT_S = {role: 60.0 for role in ROLE_TIER} | {"agent_synthesizer": 120.0}

#: Longest wait a 429's Retry-After may ask for; longer waits are Temporal's backoff's business.
RETRY_AFTER_CAP_S = 60.0

#: Key used for servers that need none (Ollama, vLLM, LM Studio) when only OPENAI_BASE_URL is set.
NO_KEY = "not-needed"

#: Features a server rejected, per (base_url, model), for the life of the process. One of
#: "json_schema" (use JSON mode), "json_object" (no response_format at all), "temperature".
_UNSUPPORTED: dict[tuple[str, str], set[str]] = {}


# --- structured replies -------------------------------------------------------------------------------


def reply_model(output: type[BaseModel], exclude: frozenset[str] = frozenset({"usage"})) -> type[BaseModel]:
    """The part of an output model the LLM writes: the same fields without `usage` (and whatever
    else the engine fills in itself), so the schema never asks the model for token counts."""
    fields = {name: (f.annotation, f) for name, f in output.model_fields.items() if name not in exclude}
    return create_model(f"{output.__name__}Reply", **fields)  # type: ignore[call-overload]


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAI's strict JSON schema for `model`. The SDK's helper marks every field required and
    closes every object; it keeps non-null `default`s, which strict mode rejects ("'default' is
    not permitted"), so they are removed here (pydantic still applies them when validating)."""

    def without_defaults(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: without_defaults(v) for k, v in node.items() if k != "default"}
        if isinstance(node, list):
            return [without_defaults(v) for v in node]
        return node

    return without_defaults(to_strict_json_schema(model))


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


def parse_reply(text: str | None, model: type[T]) -> T:
    """Validate a reply that should be one JSON object, tolerating what models wrap around it:
    `<think>` blocks, ```json fences, prose before or after, enum values in the wrong case.
    Raises ValueError (pydantic's ValidationError is one) when no valid object is found."""
    cleaned = _THINK.sub("", text or "").strip()
    fenced = _FENCE.search(cleaned)
    if fenced:
        cleaned = fenced.group(1).strip()
    start, end = cleaned.find("{"), cleaned.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the reply contains no JSON object")
    data = json.loads(cleaned[start : end + 1])
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    for name, field in model.model_fields.items():
        kind, value = field.annotation, data.get(name)
        if isinstance(kind, type) and issubclass(kind, Enum) and isinstance(value, str):
            data[name] = next((m.value for m in kind if str(m.value).lower() == value.strip().lower()), value)
    return model.model_validate(data)


# --- errors ---------------------------------------------------------------------------------------------

_KEY_LIKE = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-*]{6,}")


def _redact(text: str, secret: str) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return _KEY_LIKE.sub(r"\1-***", text)


def _server_message(err: openai.APIStatusError, secret: str) -> str:
    body = err.body
    message = body.get("message") if isinstance(body, dict) else body
    return _redact(str(message or err.message or ""), secret).strip()[:300]


def retry_after(headers: Any) -> timedelta | None:
    """The delay a 429 asks for (`retry-after-ms`, else `retry-after` in seconds or as an HTTP
    date), capped at RETRY_AFTER_CAP_S; None when the server did not say."""
    seconds: float | None = None
    try:
        if headers.get("retry-after-ms") is not None:
            seconds = float(headers["retry-after-ms"]) / 1000
        elif headers.get("retry-after") is not None:
            value = headers["retry-after"].strip()
            try:
                seconds = float(value)
            except ValueError:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None
    if seconds is None or seconds < 0:
        return None
    return timedelta(seconds=min(seconds, RETRY_AFTER_CAP_S))


def classify_error(
    err: openai.OpenAIError, *, model: str, base_url: str, secret: str = ""
) -> ApplicationError:
    """Map an OpenAI SDK error to what Temporal should do about it.

    Transient trouble (timeouts, connection failures, 408, 409, 429, 5xx, an unreadable reply) is
    retryable; a 429 carries the server's Retry-After as `next_retry_delay`. What no retry can fix
    (a bad key, an unknown model, a rejected request, an exhausted quota, a reply cut off by the
    length limit or a content filter) is non-retryable, with a message that names the cause and
    what to change. Messages never contain the API key: server text is redacted, and the caller
    raises the result `from None` so the SDK's exception (with the raw body) is not attached.
    """
    where = f"the LLM endpoint {base_url}"
    if isinstance(err, openai.APITimeoutError):
        return ApplicationError(f"{where} did not answer in time (model {model})", type="LLMTimeout")
    if isinstance(err, openai.APIConnectionError):
        return ApplicationError(
            f"could not connect to {where}: is the server running and the URL right?", type="LLMUnavailable"
        )
    if isinstance(err, openai.LengthFinishReasonError):
        return ApplicationError(
            f"model {model} stopped at its output token limit before finishing the reply; "
            "use a model with a larger context or output limit",
            type="LLMReplyTruncated",
            non_retryable=True,
        )
    if isinstance(err, openai.ContentFilterFinishReasonError):
        return ApplicationError(
            f"the reply of model {model} was withheld by the provider's content filter",
            type="LLMContentFiltered",
            non_retryable=True,
        )
    if not isinstance(err, openai.APIStatusError):
        return ApplicationError(f"LLM call failed: {_redact(str(err), secret)[:300]}", type="LLMError")

    status, detail = err.status_code, _server_message(err, secret)
    if status == 429:
        if err.code == "insufficient_quota" or err.type == "insufficient_quota":
            return ApplicationError(
                f"{where} refused the call: the account's quota is exhausted (429 insufficient_quota); "
                "check the plan and billing of the API key",
                type="LLMQuotaExceeded",
                non_retryable=True,
            )
        return ApplicationError(
            f"{where} is rate limiting (429): {detail}",
            type="LLMRateLimited",
            next_retry_delay=retry_after(err.response.headers),
        )
    if status in (408, 409) or status >= 500:
        return ApplicationError(f"{where} is unavailable ({status}): {detail}", type="LLMUnavailable")
    if status == 401:
        return ApplicationError(
            f"the LLM endpoint rejected the API key (401) at {base_url}; check OPENAI_API_KEY",
            type="LLMAuthError",
            non_retryable=True,
        )
    if status == 403:
        return ApplicationError(
            f"the API key may not use model {model} at {base_url} (403): {detail}",
            type="LLMPermissionDenied",
            non_retryable=True,
        )
    if status == 404:
        return ApplicationError(
            f"model {model} not found at {base_url} (404); set LLM_MODEL (or LLM_MODEL_SIMPLE/"
            "_ANALYTICAL/_COMPLEX) to a model the endpoint serves",
            type="LLMModelNotFound",
            non_retryable=True,
        )
    return ApplicationError(
        f"{where} rejected the request for model {model} ({status}): {detail}",
        type="LLMBadRequest",
        non_retryable=True,
    )


# --- optional request features, for servers that lack some -------------------------------------------


def _rejected_feature(err: openai.APIStatusError, sent: set[str]) -> str | None:
    """Which of the optional features we sent a 400/422 complains about, if any."""
    if err.status_code not in (400, 422):
        return None
    text = f"{err.message} {err.param or ''}".lower()
    if "json_schema" in sent and ("json_schema" in text or "response_format" in text):
        return "json_schema"
    if "json_object" in sent and ("json_object" in text or "response_format" in text):
        return "json_object"
    if "temperature" in sent and "temperature" in text:
        return "temperature"
    return None


def _request(
    role: str, prompt: str, reply: type[BaseModel], unsupported: set[str]
) -> tuple[str, dict[str, Any]]:
    """The message text and the optional request fields, minus what this server rejected:
    strict `json_schema`; else `json_object` with the schema in the prompt; else the prompt alone."""
    schema = strict_schema(reply)
    content, options = prompt, {}
    if "json_schema" not in unsupported:
        options["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": reply.__name__, "schema": schema, "strict": True},
        }
    else:
        content += (
            "\n\nReply with one JSON object only, no other text. It must match this JSON schema:\n"
            + json.dumps(schema)
        )
        if "json_object" not in unsupported:
            options["response_format"] = {"type": "json_object"}
    if "temperature" not in unsupported:
        options["temperature"] = ROLE_TEMPERATURE[role]
    return content, options


def _features(options: dict[str, Any]) -> set[str]:
    sent = {options["response_format"]["type"]} if "response_format" in options else set()
    return sent | ({"temperature"} & options.keys())


# --- formatting the inputs for the prompts ---------------------------------------------------------------

_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
NONE = "(none)"


def _conversation(messages: list[Message]) -> str:
    lines = [
        f"{'User' if m.role is Speaker.USER else 'Assistant'}: {m.content.strip()}"
        for m in messages[-ROUTING_HISTORY:]
    ]
    return "\n".join(lines) or NONE


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _passages(passages: list[Passage]) -> str:
    blocks = [f"[{p.source_id}] {p.title}\nURL: {p.url}\n{p.text.strip()}" for p in passages]
    return "\n\n".join(blocks) or NONE


def _completed_steps(steps: list[PlanStep]) -> str:
    lines = []
    for i, step in enumerate(steps, 1):
        lines.append(f"{i}. {step.title}: {step.description}".rstrip(": "))
        if step.observation:
            lines.append(f"   Found: {_cut(step.observation, 800)}")
    return "\n".join(lines) or NONE


def _plan(plan: Plan) -> str:
    lines = [f"Title: {plan.title}"]
    for i, step in enumerate(plan.steps, 1):
        lines.append(f"{i}. [{step.status.value}] {step.title}: {step.description}".rstrip(": "))
        if step.observation:
            lines.append(f"   Found: {_cut(step.observation, 800)}")
    return "\n".join(lines)


def _findings(plan: Plan | None) -> str:
    if plan is None:
        return NONE
    blocks = [
        f"### Step {i}: {step.title}\n{step.observation.strip()}"
        for i, step in enumerate(plan.steps, 1)
        if step.observation
    ]
    return "\n\n".join(blocks) or NONE


def _evidence(evidence: list[Evidence]) -> str:
    """The evidence pool grouped by source, each paragraph under its source id."""
    by_source: dict[int, list[str]] = {}
    for item in evidence:
        by_source.setdefault(item.source_id, []).append(item.text.strip())
    blocks = [f"[{n}]\n" + "\n".join(f"- {t}" for t in texts) for n, texts in sorted(by_source.items())]
    return "\n\n".join(blocks) or NONE


def _ids(ids: list[int]) -> str:
    return ", ".join(f"[{n}]" for n in ids) or NONE


def _cited(markdown: str) -> list[int]:
    ids: list[int] = []
    for match in _CITATION.finditer(markdown):
        ids += [int(n) for n in match.group(1).split(",") if int(n) not in ids]
    return ids


def _only_known_citations(text: str, known: set[int]) -> str:
    """Drop `[n]` markers for ids that were not given: a citation must point at something read."""

    def keep(match: re.Match[str]) -> str:
        good = [n for n in (int(p) for p in match.group(1).split(",")) if n in known]
        return f"[{', '.join(map(str, good))}]" if good else ""

    return _CITATION.sub(keep, text)


# --- reply models (what the LLM writes; the engine adds usage and the rest) -------------------------------

RouteReply = reply_model(RouteOutput)
ClarifyReply = reply_model(ClarifyOutput)
ClassificationReply = reply_model(CoordinateOutput)
QueriesReply = reply_model(WriteQueriesOutput)
PlanReply = reply_model(PlanOutput)
FindingsReply = reply_model(ObserveOutput)
ReflectReply = reply_model(ReflectOutput)
VerifyReply = reply_model(VerifyClaimsOutput, exclude=frozenset({"usage", "checked_by"}))
ReviseReply = reply_model(ReviseClaimsOutput)
CritiqueReply = reply_model(CritiqueOutput)


class ClaimReply(BaseModel):
    text: str
    source_ids: list[int]


# The synthesizer writes the report and its key claims. Verdicts are for a verifier to give, not
# for the writer to grade itself, so claims start `unverified`. (A comment, not a docstring: a
# docstring would become the schema's description and be sent to the model.)
class ReportReply(BaseModel):
    markdown: str
    claims: list[ClaimReply]


# --- the engine -------------------------------------------------------------------------------------------


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
        if client is None:
            key = self._secret or (NO_KEY if settings.openai_base_url else "")
            if not key:
                raise ApplicationError(
                    "the openai engine needs OPENAI_API_KEY (OpenAI and hosted providers) or "
                    "OPENAI_BASE_URL (a local server such as Ollama or vLLM)",
                    type="ConfigError",
                    non_retryable=True,
                )
            client = openai.AsyncOpenAI(
                api_key=key,
                base_url=settings.openai_base_url,
                max_retries=0,  # Temporal owns retries
                timeout=max(ROLE_TIMEOUT_S.values()),
            )
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
            "agent_clarification", ClarifyReply, conversation_history=_conversation(inp.messages)
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
            background=inp.background.strip() or NONE,
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
        model = self._settings.model_for(ROLE_TIER["agent_synthesizer"])
        reply, usage = await self._ask(
            "agent_synthesizer",
            ReportReply,
            query=inp.topic_text(),
            findings=_findings(inp.plan),
            passages=_passages(inp.passages),
            sources="\n".join(f"[{s.id}] {s.title} - {s.url}" for s in inp.sources) or NONE,
            notes="\n".join(f"- {n}" for n in inp.notes) or NONE,
            evidence=_evidence(inp.evidence),
        )
        markdown = reply.markdown.strip()
        by_id = {s.id: s for s in inp.sources}
        cited = [by_id[n] for n in _cited(markdown) if n in by_id]
        if cited and not re.search(r"^#+\s*Sources\b", markdown, re.M | re.I):
            listing = "\n".join(f"[{s.id}] {s.title} - {s.url}" for s in sorted(cited, key=lambda s: s.id))
            markdown += f"\n\n## Sources\n\n{listing}"
        claims = [Claim(text=c.text, source_ids=c.source_ids) for c in reply.claims if c.text.strip()]
        return SynthesizeOutput(markdown=markdown + "\n", claims=claims, engine=f"openai:{model}", usage=usage)

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
            report=_cut(inp.report_markdown, 12000),
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
        model = self._settings.model_for(ROLE_TIER[role])
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
                        "%s (model %s) rejected %s: asking without it from now on", self._base_url, model, feature
                    )
                    unsupported.add(feature)
                    continue
                except openai.OpenAIError as err:
                    failure = self._error(err, model)
                    generation.failed(failure.message)
                    raise failure from None
                usage = Usage(
                    prompt_tokens=getattr(completion.usage, "prompt_tokens", 0) or 0,
                    completion_tokens=getattr(completion.usage, "completion_tokens", 0) or 0,
                    requests=1,
                )
                served(usage.prompt_tokens, usage.completion_tokens)
                try:
                    parsed = self._read(completion, reply, model)
                except ApplicationError as failure:
                    text = completion.choices[0].message.content if completion.choices else None
                    generation.failed(failure.message, output=text, usage=usage)
                    raise
                generation.succeeded(parsed.model_dump(), usage, describe(parsed) if describe else None)
                return parsed, usage

    def _timeout(self, role: str) -> float:
        return self._settings.llm_request_timeout_s or ROLE_TIMEOUT_S[role]

    def _error(self, err: openai.OpenAIError, model: str) -> ApplicationError:
        return classify_error(err, model=model, base_url=self._base_url, secret=self._secret)

    def _read(self, completion: Any, reply: type[T], model: str) -> T:
        """The validated reply, or a classified error: cut-off and filtered replies cannot be
        fixed by asking again; an unreadable one often can (sampling differs), so it is retryable."""
        if not completion.choices:
            raise ApplicationError(f"model {model} returned no choices", type="InvalidLLMReply")
        choice = completion.choices[0]
        finish = None
        if choice.finish_reason == "length":
            finish = openai.LengthFinishReasonError(completion=completion)
        elif choice.finish_reason == "content_filter":
            finish = openai.ContentFilterFinishReasonError(completion=completion)
        if finish is not None:
            raise self._error(finish, model) from None
        message = choice.message
        if message.content is None and getattr(message, "refusal", None):
            raise ApplicationError(
                f"model {model} refused to answer: {_cut(message.refusal, 200)}",
                type="LLMRefused",
                non_retryable=True,
            )
        try:
            return parse_reply(message.content, reply)
        except ValueError as err:
            excerpt = _cut(" ".join((message.content or "").split()), 200) or "(empty)"
            raise ApplicationError(
                f"model {model} replied with something that is not a valid {reply.__name__}: "
                f"{_cut(str(err).splitlines()[0], 200)}; reply began: {excerpt}",
                type="InvalidLLMReply",
            ) from None
