"""The endpoint's client, what one request carries, and what each server turned out not to take.

One request path for every OpenAI-compatible server (docs/configuration.md, "Local models"). The
engine first asks for strict structured output (`response_format` `json_schema`) with the prompt's
temperature and `max_tokens` (its row in `workflows/roles.py`). A server that refuses one of those
says so in its own words, and not always with a 400: llama-cpp-python answers HTTP 500 with
pydantic's validation error for `json_schema`, OpenAI's reasoning models a 400 naming `temperature`
or `max_tokens`. A refusal is recognised from what the server says about a field we sent, whatever
the status (`refused_feature`), remembered per (base URL, model) for the life of the process
(`facts_for`, servers.py) and the call is asked again without it. Structured output degrades one
rung at a time, keeping decoding constrained as long as the server can:

1. `json_schema` (OpenAI, vLLM, Ollama 0.5+, LM Studio, llama-server, LiteLLM passes it on);
2. `json_object` with the schema beside it (`response_format.schema`: llama.cpp's servers turn it
   into a grammar, so even a 135M model cannot answer outside the schema);
3. `json_object` alone; 4. no `response_format`. From rung 2 on the schema is also in the prompt.

Replies are streamed (`stream`, with `stream_options.include_usage`; streaming.py); a server that
refuses either is asked without it, the same way. The client itself (`connect`) leaves retries to
Temporal: `max_retries=0`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from activities.openai_engine.replies import strict_schema
from settings import Settings
from workflows.roles import PROMPTS

#: Key used for servers that need none (Ollama, vLLM, LM Studio) when only OPENAI_BASE_URL is set.
NO_KEY = "not-needed"

#: The rungs of structured output, strongest first (module docstring). Each is also the name a
#: refusal of it is remembered by.
JSON_SCHEMA, JSON_OBJECT_SCHEMA, JSON_OBJECT = "json_schema", "json_object+schema", "json_object"
RUNGS = (JSON_SCHEMA, JSON_OBJECT_SCHEMA, JSON_OBJECT)
#: Sampling and length fields a server may refuse (reasoning models: `temperature`, `max_tokens`).
KNOBS = ("temperature", "max_tokens", "max_completion_tokens")
#: Streaming (streaming.py) and its usage chunk: a server that refuses them is asked without.
STREAM, STREAM_OPTIONS = "stream", "stream_options"
_NO_STREAMING = re.compile(
    r"\bstream(?:ing)? (?:is )?not (?:supported|allowed)|does not support stream", re.I
)
#: Statuses that say who the caller is or how fast it may ask, never which field was wrong.
NOT_ABOUT_FIELDS = frozenset({401, 403, 429})


def connect(settings: Settings, secret: str) -> openai.AsyncOpenAI:
    """The endpoint's client (one connection pool): a local server needs no key, the SDK's own
    retries are off, and its default timeout is the longest a call may take (each request sets
    its own, streaming.py)."""
    key = secret or (NO_KEY if settings.llm.base_url else "")
    if not key:
        raise ApplicationError(
            "the openai engine needs OPENAI_API_KEY (OpenAI and hosted providers) or "
            "OPENAI_BASE_URL (a local server such as Ollama or vLLM)",
            type="ConfigError",
            non_retryable=True,
        )
    return openai.AsyncOpenAI(
        api_key=key,
        base_url=settings.llm.base_url,
        max_retries=0,  # Temporal owns retries
        timeout=settings.llm.call_limit_s,
    )


def server_text(err: openai.APIStatusError) -> str:
    """Everything the server said about the failure, in one lower-case string: its message,
    the `param` it named and the raw body (a framework's own error page, a validation list)."""
    body = err.body
    try:
        raw = json.dumps(body) if not isinstance(body, str) else body
    except (TypeError, ValueError):
        raw = str(body)
    return f"{err.message} {err.param or ''} {raw}".lower()


def refused_features(err: openai.APIStatusError, sent: set[str]) -> set[str]:
    """Which optional features we sent the server's error is about, whatever its status (a 500
    from llama-cpp-python is a refusal of `json_schema`); empty when it names none of them. A
    refusal of JSON mode while its schema rung was sent refuses both JSON-mode rungs."""
    if err.status_code in NOT_ABOUT_FIELDS:
        return set()
    text = server_text(err)
    param = (err.param or "").lower()
    if STREAM_OPTIONS in sent and (param.startswith(STREAM_OPTIONS) or STREAM_OPTIONS in text):
        return {STREAM_OPTIONS}
    if STREAM in sent and (param == STREAM or _NO_STREAMING.search(text)):
        return {STREAM, STREAM_OPTIONS}
    for knob in KNOBS:  # a named param is the surest sign; max_completion_tokens before max_tokens
        if knob in sent and param.startswith(knob):
            return {knob}
    rung = next((r for r in RUNGS if r in sent), None)
    if rung == JSON_SCHEMA and ("response_format" in text or "json_schema" in text):
        return {rung}
    if rung in (JSON_OBJECT_SCHEMA, JSON_OBJECT) and "json_object" in text:
        return {JSON_OBJECT_SCHEMA, JSON_OBJECT}
    if rung is not None and (
        "response_format" in text or (rung == JSON_OBJECT_SCHEMA and "schema" in text)
    ):
        return {rung}
    for knob in ("temperature", "max_completion_tokens", "max_tokens"):
        if knob in sent and knob in text:
            return {knob}
    return set()


def build_request(
    role: str, prompt: str, reply: type[BaseModel], unsupported: set[str], max_tokens: int
) -> tuple[str, dict[str, Any]]:
    """The message text and the optional request fields, minus what this server refused: the
    strongest rung of structured output it takes, the prompt's temperature and the reply's cap."""
    schema = strict_schema(reply)
    content = prompt
    options: dict[str, Any] = {}  # request fields of every kind, under the SDK's names
    rung = next((r for r in RUNGS if r not in unsupported), None)
    if rung == JSON_SCHEMA:
        options["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": reply.__name__, "schema": schema, "strict": True},
        }
    else:
        content += (
            "\n\nReply with one JSON object only, no other text. It must match this JSON schema:\n"
            + json.dumps(schema)
        )
        if rung == JSON_OBJECT_SCHEMA:
            options["response_format"] = {"type": "json_object", "schema": schema}
        elif rung == JSON_OBJECT:
            options["response_format"] = {"type": "json_object"}
    if "temperature" not in unsupported:
        options["temperature"] = PROMPTS[role].temperature
    # The reply's length cap is what bounds a call's cost before it is made (workflows/accounting/budget.py).
    if "max_tokens" not in unsupported:
        options["max_tokens"] = max_tokens
    elif "max_completion_tokens" not in unsupported:
        options["max_completion_tokens"] = max_tokens
    if STREAM not in unsupported:
        options[STREAM] = True
        if STREAM_OPTIONS not in unsupported:
            options[STREAM_OPTIONS] = {"include_usage": True}
    return content, options


def features_sent(options: dict[str, Any]) -> set[str]:
    """The optional features a request carries, by the names refusals are remembered by."""
    sent = set((*KNOBS, STREAM, STREAM_OPTIONS)) & options.keys()
    format_ = options.get("response_format")
    if format_ is not None:
        kind = format_.get("type")
        sent.add(JSON_OBJECT_SCHEMA if kind == "json_object" and "schema" in format_ else kind)
    return sent
