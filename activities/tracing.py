"""Langfuse tracing: one trace per research run, one generation per LLM request.

The trace id is derived from the workflow id and run id, so every activity of a run, on any
worker and in any attempt, lands in the same trace without passing anything through the
workflow; the session is the workflow id, so a research and its re-runs sit together. Spans are
exported by Langfuse's OpenTelemetry batch processor on a background thread and flushed when the
worker shuts down, never per call, so a slow or absent Langfuse costs a research nothing.

Without LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY no client is built at all: no tracing, no
prompt fetches, no warnings.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from temporalio import activity

from activities.prompts.loader import Prompt
from settings import Settings
from workflows.activity_models import Usage

log = logging.getLogger(__name__)

TRACE_NAME = "DeepResearchWorkflow"
#: Seconds Langfuse may take per HTTP request (prompt fetches, span exports).
LANGFUSE_TIMEOUT_S = 5
#: Longest a worker waits at shutdown for the last spans to leave.
FLUSH_WAIT_S = 5.0

_CLIENTS: dict[tuple[str, str], Any] = {}
_LOCK = threading.Lock()


def langfuse_for(config: Settings) -> Any | None:
    """The process-wide Langfuse client for these credentials, or None when tracing is off."""
    secret = config.langfuse.secret_key.get_secret_value() if config.langfuse.secret_key else ""
    if not (config.langfuse.public_key and secret):
        return None
    host = (config.langfuse.host or "https://cloud.langfuse.com").rstrip("/")
    key = (host, config.langfuse.public_key)
    with _LOCK:
        if key not in _CLIENTS:
            from langfuse import Langfuse

            _CLIENTS[key] = Langfuse(
                public_key=config.langfuse.public_key,
                secret_key=secret,
                base_url=host,
                timeout=LANGFUSE_TIMEOUT_S,
            )
        return _CLIENTS[key]


def _sdk_noise(record: logging.LogRecord) -> bool:
    """The SDK reports every prompt that is not managed in Langfuse, and every failed fetch, on
    each fetch; PromptBook says the same once per back-off period, in words about the research."""
    message = record.getMessage()
    return (
        "not found during refresh" not in message and "Error while fetching prompt" not in message
    )


logging.getLogger("langfuse").addFilter(_sdk_noise)


def trace_id(workflow_id: str, run_id: str) -> str:
    """The Langfuse trace id of one research run (32 hex characters, the same on every worker)."""
    from langfuse import Langfuse

    return Langfuse.create_trace_id(seed=f"{workflow_id}:{run_id}")


def flush_all() -> None:
    """Send what is still buffered; called once at worker shutdown, bounded by FLUSH_WAIT_S."""
    with _LOCK:
        clients = list(_CLIENTS.values())
    for client in clients:
        flushing = threading.Thread(target=_quietly, args=(client.flush,), daemon=True)
        flushing.start()
        flushing.join(FLUSH_WAIT_S)


class Generation:
    """What the engine reports about one request; every call is safe when tracing is off."""

    def __init__(self, observation: Any | None) -> None:
        self._observation = observation

    def succeeded(self, output: Any, usage: Usage, metadata: dict[str, Any] | None = None) -> None:
        self._update(
            output=output,
            usage_details={"input": usage.prompt_tokens, "output": usage.completion_tokens},
            **({"metadata": metadata} if metadata else {}),
        )

    def failed(self, message: str, output: Any = None, usage: Usage | None = None) -> None:
        details = (
            {"input": usage.prompt_tokens, "output": usage.completion_tokens} if usage else None
        )
        self._update(
            level="ERROR", status_message=message[:500], output=output, usage_details=details
        )

    def _update(self, **fields: Any) -> None:
        if self._observation is not None:
            _quietly(self._observation.update, **{k: v for k, v in fields.items() if v is not None})


@contextmanager
def generation(
    langfuse: Any | None,
    *,
    role: str,
    model: str,
    prompt: Prompt,
    messages: list[dict[str, str]],
    parameters: dict[str, Any],
    metadata: dict[str, Any],
) -> Iterator[Generation]:
    """A Langfuse generation around one request to the endpoint, in its research run's trace."""
    if langfuse is None or not activity.in_activity():
        yield Generation(None)
        return
    info = activity.info()
    from langfuse import propagate_attributes

    with (
        langfuse.start_as_current_observation(
            as_type="generation",
            name=role,
            trace_context={
                "trace_id": trace_id(info.workflow_id or "", info.workflow_run_id or "")
            },
            input=messages,
            model=model,
            model_parameters=parameters,
            metadata={
                **metadata,
                "prompt": prompt.role,
                "prompt_source": prompt.source,
                "attempt": info.attempt,
                "activity": info.activity_type,
                "workflow_id": info.workflow_id,
                "run_id": info.workflow_run_id,
            },
            prompt=prompt.client,
        ) as observation,
        propagate_attributes(session_id=info.workflow_id, trace_name=TRACE_NAME),
    ):
        yield Generation(observation)


def _quietly(call: Any, *args: Any, **kwargs: Any) -> None:
    """Tracing must never fail a research: a Langfuse SDK error is logged and forgotten."""
    try:
        call(*args, **kwargs)
    except Exception as err:  # noqa: BLE001
        log.warning("Langfuse: %s", err)
