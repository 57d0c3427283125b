"""What Temporal should do about a failed call: every failure leaves as an `ApplicationError`.

Retries belong to Temporal, not to the HTTP client (built with `max_retries=0`): transient trouble
is retryable (a 429 with the server's requested delay), what no retry can fix is non-retryable
with a message that says what to change. Messages never carry the API key: server text is
redacted here, and callers raise the result `from None` so the SDK's exception is not attached.
"""

from __future__ import annotations

import openai
from temporalio.exceptions import ApplicationError

from activities.retry_after import retry_after
from workflows.activity_models import REPLY_PROBLEMS
from workflows.text.redaction import redact


def reply_problem(err: ApplicationError) -> bool:
    """A failure about one reply, not the endpoint (`REPLY_PROBLEMS`)."""
    return err.non_retryable and err.type in REPLY_PROBLEMS


def _server_message(err: openai.APIStatusError, secret: str) -> str:
    body = err.body
    message = body.get("message") if isinstance(body, dict) else body
    return redact(str(message or err.message or ""), [secret]).strip()[:300]


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
    base_url = redact(base_url)  # a proxy reached as http://user:password@host keeps its password
    if isinstance(err, openai.APIStatusError):
        return _status_error(err, model, base_url, secret)
    return _call_error(err, model, base_url, secret)


def _call_error(
    err: openai.OpenAIError, model: str, base_url: str, secret: str
) -> ApplicationError:
    """A call that got no answer, or a reply the SDK refused to read (cut off, filtered)."""
    where = f"the LLM endpoint {base_url}"
    if isinstance(err, openai.APITimeoutError):
        return ApplicationError(
            f"{where} did not answer in time (model {model})", type="LLMTimeout"
        )
    if isinstance(err, openai.APIConnectionError):
        return ApplicationError(
            f"could not connect to {where}: is the server running and the URL right?",
            type="LLMUnavailable",
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
    return ApplicationError(f"LLM call failed: {redact(str(err), [secret])[:300]}", type="LLMError")


def _status_error(
    err: openai.APIStatusError, model: str, base_url: str, secret: str
) -> ApplicationError:
    """An HTTP error status: transient (408, 409, 429, 5xx) or what to change."""
    where = f"the LLM endpoint {base_url}"
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
        return ApplicationError(
            f"{where} is unavailable ({status}): {detail}", type="LLMUnavailable"
        )
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
