"""What the model writes back, and how the engine reads it.

Each LLM role's reply model (`REPLIES`, one per row of workflows/roles.py) is its activity output
without the fields the engine fills in itself (`usage`, and the verifier's `checked_by`), so the
schema never asks the model for token counts; the writers' replies have a shape of their own.
The model's `__name__` is the JSON schema name sent to the endpoint (and what the test server
recognises a role by), so the names below are part of the wire format: keep them.

Models do not always write clean JSON; `parse_reply` tolerates what they wrap around it, and
`read_reply` turns a completion into the validated reply or a classified failure (cut off,
filtered, refused, unreadable). A reply may cite only what it was shown: `_only_known_citations`
drops the rest.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from enum import Enum
from typing import Any, TypeVar

import json_repair
import openai
from openai.lib._pydantic import to_strict_json_schema
from pydantic import BaseModel, ValidationError, create_model
from temporalio.exceptions import ApplicationError

from activities.openai_engine.formatting import _cut
from workflows.kit.citations import citations_in, sub_citations
from workflows.roles import LLM_ROLES

T = TypeVar("T", bound=BaseModel)


# --- structured replies -------------------------------------------------------------------------------


def reply_model(
    output: type[BaseModel], exclude: frozenset[str] = frozenset({"usage"})
) -> type[BaseModel]:
    """The part of an output model the LLM writes: the same fields without `usage` (and whatever
    else the engine fills in itself), so the schema never asks the model for token counts."""
    # (annotation, FieldInfo) by name: typed loosely, as `create_model` takes its field definitions
    # and its own `__config__`, `__base__` ... through the same keywords.
    fields: dict[str, Any] = {
        name: (f.annotation, f) for name, f in output.model_fields.items() if name not in exclude
    }
    return create_model(f"{output.__name__}Reply", **fields)


@functools.cache
def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAI's strict JSON schema for `model`. The SDK's helper marks every field required and
    closes every object; it keeps non-null `default`s, which strict mode rejects ("'default' is
    not permitted"), so they are removed here (pydantic still applies them when validating).

    Built once per reply model and shared: read it, never change it. (Built per call it was 3 %
    of a busy worker's CPU: docs/performance.md.)"""

    def without_defaults(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: without_defaults(v) for k, v in node.items() if k != "default"}
        if isinstance(node, list):
            return [without_defaults(v) for v in node]
        return node

    schema = to_strict_json_schema(model)
    return {k: without_defaults(v) for k, v in schema.items() if k != "default"}


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
#: Reasoning a model writes into its reply (DeepSeek-R1, Qwen3, QwQ through Ollama or a proxy that
#: does not split it into `reasoning_content`): a whole block, or one cut off before it closed.
_THINK = re.compile(
    r"<(think|thinking|reasoning|thought)>.*?(?:</\1>|\Z)|^.*?</(?:think|thinking|reasoning)>",
    re.S | re.I,
)


def without_reasoning(text: str) -> str:
    """`text` without the model's reasoning blocks (also one whose opening tag the server ate)."""
    return _THINK.sub("", text) if "<" in text else text


def _cleaned(value: Any) -> Any:
    """Every string of a parsed reply without reasoning blocks: none reaches a report."""
    if isinstance(value, str):
        return without_reasoning(value).strip() if "<" in value else value
    if isinstance(value, list):
        return [_cleaned(v) for v in value]
    if isinstance(value, dict):
        return {k: _cleaned(v) for k, v in value.items()}
    return value


def _unwrapped(text: str | None) -> str:
    """The reply without reasoning blocks and ```json fences."""
    cleaned = without_reasoning(text or "").strip()
    fenced = _FENCE.search(cleaned)
    return fenced.group(1).strip() if fenced else cleaned


def parse_reply(text: str | None, model: type[T]) -> T:
    """Validate a reply that should be one JSON object, tolerating what models wrap around it:
    `<think>` blocks, ```json fences, prose before or after, enum values in the wrong case, raw
    line breaks inside strings.
    Raises ValueError (pydantic's ValidationError is one) when no valid object is found."""
    cleaned = _unwrapped(text)
    start, end = cleaned.find("{"), cleaned.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the reply contains no JSON object")
    # strict=False: a raw newline or tab inside a string (a report's Markdown, written by a model
    # without a grammar, or one whose grammar lets it: Qwen2.5-Coder-1.5B on llama.cpp) is read
    # as what it plainly means instead of failing the reply.
    data = json.loads(cleaned[start : end + 1], strict=False)
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    return _validated(data, model)


def repaired_reply(text: str | None, model: type[T]) -> T:
    """A reply that is nearly JSON read as the object it meant: a missing closing brace or
    quote, single quotes, a trailing comma, comments, prose after the object (json-repair, a
    parser written for what language models get wrong). The object must still validate: a
    repair never invents a required field. Raises ValueError when it cannot be repaired."""
    cleaned = _unwrapped(text)
    start = cleaned.find("{")
    if start < 0:
        raise ValueError("the reply contains no JSON object")
    data = json_repair.repair_json(cleaned[start:], return_objects=True)
    if isinstance(data, list):
        data = next((item for item in data if isinstance(item, dict)), None)
    if not isinstance(data, dict) or not data:
        raise ValueError("the reply contains no JSON object that could be repaired")
    try:
        return _validated(data, model)
    except ValidationError as err:
        return _validated(_within_bounds(data, err), model)


#: pydantic's error types for a number outside its field's bounds, and the bound they name.
_BOUNDS = {"less_than_equal": "le", "greater_than_equal": "ge"}


def _within_bounds(data: dict[str, Any], err: ValidationError) -> dict[str, Any]:
    """A top-level number just outside its field's range (a score of 2.5 where at most 1 is
    allowed, a small model's habit) set to the nearest bound: the reply meant "very much"."""
    fixed = dict(data)
    for problem in err.errors():
        bound = (problem.get("ctx") or {}).get(_BOUNDS.get(problem["type"], ""))
        loc = problem["loc"]
        if isinstance(bound, int | float) and len(loc) == 1 and isinstance(loc[0], str):
            fixed[loc[0]] = bound
    return fixed


def _validated(data: dict[str, Any], model: type[T]) -> T:
    data = _cleaned(data)
    for name, field in model.model_fields.items():
        kind, value = field.annotation, data.get(name)
        if isinstance(kind, type) and issubclass(kind, Enum) and isinstance(value, str):
            data[name] = next(
                (m.value for m in kind if str(m.value).lower() == value.strip().lower()), value
            )
    return model.model_validate(data)


# --- reply models (what the LLM writes; the engine adds usage and the rest) -------------------------------


class ClaimReply(BaseModel):
    text: str
    source_ids: list[int]


# The synthesizer writes the report and its key claims. Verdicts are for a verifier to give, not
# for the writer to grade itself, so claims start `unverified`. (A comment, not a docstring: a
# docstring would become the schema's description and be sent to the model.)
class ReportReply(BaseModel):
    markdown: str
    claims: list[ClaimReply]


class SectionPlanReply(BaseModel):
    heading: str
    brief: str
    step_indexes: list[int]


class OutlineReply(BaseModel):
    title: str
    sections: list[SectionPlanReply]


class SectionReply(BaseModel):
    markdown: str
    claims: list[ClaimReply]


class SummaryReply(BaseModel):
    markdown: str
    claims: list[ClaimReply]


#: The writers' replies, shaped unlike their outputs (claims without verdicts, no engine name).
WRITTEN: dict[str, type[BaseModel]] = {
    "synthesize": ReportReply,
    "outline_report": OutlineReply,
    "write_section": SectionReply,
    "summarize_report": SummaryReply,
}
#: What the engine fills in itself, beyond `usage`: the verifier's `checked_by`.
FILLED = {"verify_claims": frozenset({"usage", "checked_by"})}

#: What each LLM role's model writes, by role name: the writers' replies above, the role's output
#: without what the engine fills in for the others.
REPLIES: dict[str, type[BaseModel]] = {
    role.name: WRITTEN.get(role.name)
    or reply_model(role.output, FILLED.get(role.name, frozenset({"usage"})))
    for role in LLM_ROLES
}


# --- reading a completion ------------------------------------------------------------------------------


def read_reply(
    completion: Any,
    reply: type[T],
    model: str,
    classify: Callable[[openai.OpenAIError], ApplicationError],
) -> tuple[T, bool]:
    """The validated reply, or a classified error: cut-off and filtered replies cannot be
    fixed by asking again; an unreadable one often can (sampling differs), so it is retryable.
    `classify` is the engine's error classification, for the finish reasons the SDK names."""
    if not completion.choices:
        raise ApplicationError(f"model {model} returned no choices", type="InvalidLLMReply")
    choice = completion.choices[0]
    finish: openai.OpenAIError | None = None
    if choice.finish_reason == "length":
        finish = openai.LengthFinishReasonError(completion=completion)
    elif choice.finish_reason == "content_filter":
        finish = openai.ContentFilterFinishReasonError(completion=completion)
    if finish is not None:
        raise classify(finish) from None
    message = choice.message
    if message.content is None and getattr(message, "refusal", None):
        raise ApplicationError(
            f"model {model} refused to answer: {_cut(message.refusal, 200)}",
            type="LLMRefused",
            non_retryable=True,
        )
    return read_text(message.content, reply, model)


def read_text(content: str | None, reply: type[T], model: str) -> tuple[T, bool]:
    """The validated reply from a reply's text (a whole reply, or a cut-off one and its
    continuation), and whether it had to be repaired to be read (`repaired_reply`)."""
    try:
        return parse_reply(content, reply), False
    except ValueError as err:
        try:
            return repaired_reply(content, reply), True
        except ValueError:
            pass
        excerpt = _cut(" ".join((content or "").split()), 200) or "(empty)"
        raise ApplicationError(
            f"model {model} replied with something that is not a valid {reply.__name__}: "
            f"{_cut(str(err).splitlines()[0], 200)}; reply began: {excerpt}",
            type="InvalidLLMReply",
        ) from None


# --- what a reply may cite ------------------------------------------------------------------------------


def _cited(markdown: str) -> list[int]:
    ids: list[int] = []
    for match in citations_in(markdown):
        ids += [int(n) for n in match.group(1).split(",") if int(n) not in ids]
    return ids


def _only_known_citations(text: str, known: set[int]) -> str:
    """Drop `[n]` markers for ids that were not given: a citation must point at something read."""

    def keep(match: re.Match[str]) -> str:
        good = [n for n in (int(p) for p in match.group(1).split(",")) if n in known]
        return f"[{', '.join(map(str, good))}]" if good else ""

    return sub_citations(text, keep)
