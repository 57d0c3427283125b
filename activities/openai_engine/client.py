"""The endpoint's client, what one request carries, and what each server turned out not to support.

The engine asks for strict structured output (`response_format` `json_schema`) with the prompt's
temperature (its row in `workflows/roles.py`). Some servers reject `json_schema`, `json_object` or
`temperature` (HTTP 400/422 naming it); the rejected feature is remembered per (base URL, model)
for the life of the process (`_UNSUPPORTED`), and later requests leave it out: JSON mode with the
schema written into the prompt, then the prompt alone, so a local server works without
configuration. The client itself (`connect`) leaves retries to Temporal: `max_retries=0`.
"""

from __future__ import annotations

import json
from typing import Any

import openai
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from activities.openai_engine.replies import strict_schema
from config import Settings
from workflows.roles import PROMPTS

#: Key used for servers that need none (Ollama, vLLM, LM Studio) when only OPENAI_BASE_URL is set.
NO_KEY = "not-needed"

#: Features a server rejected, per (base_url, model), for the life of the process. One of
#: "json_schema" (use JSON mode), "json_object" (no response_format at all), "temperature",
#: "max_tokens" (newer OpenAI models want `max_completion_tokens`), "max_completion_tokens".
_UNSUPPORTED: dict[tuple[str, str], set[str]] = {}


def connect(settings: Settings, secret: str) -> openai.AsyncOpenAI:
    """The endpoint's client (one connection pool): a local server needs no key, the SDK's own
    retries are off and its default timeout is the longest prompt's."""
    key = secret or (NO_KEY if settings.openai_base_url else "")
    if not key:
        raise ApplicationError(
            "the openai engine needs OPENAI_API_KEY (OpenAI and hosted providers) or "
            "OPENAI_BASE_URL (a local server such as Ollama or vLLM)",
            type="ConfigError",
            non_retryable=True,
        )
    return openai.AsyncOpenAI(
        api_key=key,
        base_url=settings.openai_base_url,
        max_retries=0,  # Temporal owns retries
        timeout=max(p.request_timeout_s for p in PROMPTS.values()),
    )


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
    if "max_completion_tokens" in sent and "max_completion_tokens" in text:
        return "max_completion_tokens"
    if "max_tokens" in sent and "max_tokens" in text:
        return "max_tokens"
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
        options["temperature"] = PROMPTS[role].temperature
    # The reply's length cap is what bounds a call's cost before it is made (workflows/budget.py).
    if "max_tokens" not in unsupported:
        options["max_tokens"] = PROMPTS[role].max_tokens
    elif "max_completion_tokens" not in unsupported:
        options["max_completion_tokens"] = PROMPTS[role].max_tokens
    return content, options


def _features(options: dict[str, Any]) -> set[str]:
    sent = {options["response_format"]["type"]} if "response_format" in options else set()
    return sent | ({"temperature", "max_tokens", "max_completion_tokens"} & options.keys())
