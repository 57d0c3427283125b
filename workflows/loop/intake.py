"""What a research receives: the request decoded from its start payload and checked. A request
that cannot be read, or a question of the wrong length, fails the research at once as a
non-retryable `InvalidRequest` with one line saying why.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

from workflows.models import QUERY_MAX_CHARS, QUERY_MIN_CHARS, ResearchRequest


def valid_request(raw: RawValue | ResearchRequest | dict[str, Any]) -> ResearchRequest:
    if isinstance(raw, ResearchRequest):
        return raw
    try:
        if isinstance(raw, RawValue):
            return workflow.payload_converter().from_payload(raw.payload, ResearchRequest)
        return ResearchRequest.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "request"
        problem = f"{where}: {first['msg']}"
    except Exception as err:  # noqa: BLE001 - any payload that cannot be read is a bad request
        problem = str(err).splitlines()[0] if str(err) else type(err).__name__
    raise ApplicationError(
        f"invalid research request: {problem[:300]}", type="InvalidRequest", non_retryable=True
    )


def check_question(query: str) -> None:
    if not QUERY_MIN_CHARS <= len(query) <= QUERY_MAX_CHARS:
        raise ApplicationError(
            f"the question must be {QUERY_MIN_CHARS} to {QUERY_MAX_CHARS} characters, got {len(query)}",
            type="InvalidRequest",
            non_retryable=True,
        )
