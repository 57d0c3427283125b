"""What the LLM endpoint served, counted across an activity's retries.

Temporal retries an LLM activity when a reply is unreadable or the endpoint stumbles, and each of
those attempts may have cost tokens. The workflow only ever sees the last attempt's result, so
the running total travels in the activity's heartbeat details (which Temporal keeps from one
attempt to the next, even when an attempt fails) and in the failure's details when the retries
run out. Engines report each completion they receive with `served()`; `metered()` does the rest.
"""

from __future__ import annotations

from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.heartbeats import with_heartbeats
from workflows.activity_models import LLMOutput, Usage

T = TypeVar("T", bound=LLMOutput)

_METER: ContextVar[Usage | None] = ContextVar("llm_usage_meter", default=None)


def served(prompt_tokens: int, completion_tokens: int, cost: Usage | None = None) -> None:
    """Count one completion the endpoint returned (whether or not its reply turns out usable);
    `cost` carries its price (`cost_usd`, None when the model has no known price, and the
    model's prices), absent for an engine that costs nothing."""
    total = _METER.get()
    if total is not None:
        total.requests += 1
        total.prompt_tokens += prompt_tokens
        total.completion_tokens += completion_tokens
        if cost is not None:
            if cost.cost_usd is None or total.cost_usd is None:
                total.cost_usd = None
                total.unpriced = total.unpriced or cost.unpriced
            else:
                total.cost_usd += cost.cost_usd
            total.price_in, total.price_out = cost.price_in, cost.price_out


def beat() -> None:
    """Heartbeat now, with the running total as every beat carries it: a streaming call's sign
    that the model is writing (outside an activity, as in the engine's own tests, nothing)."""
    total = _METER.get()
    if total is not None and activity.in_activity():
        activity.heartbeat(total.model_dump())


def spent_before() -> Usage:
    """The usage earlier attempts of this activity recorded in their heartbeats."""
    details = activity.info().heartbeat_details
    if details:
        try:
            return Usage.model_validate(details[-1])
        except ValueError:
            pass
    return Usage()


async def metered(work: Awaitable[T], *, counts_itself: bool = True) -> T:
    """Run one LLM role call as part of an activity attempt; its result's `usage` is the total over
    all attempts, and a failure carries that total in its details for the workflow's accounting.

    `counts_itself=False` is for engines without an endpoint (the offline engine): the call
    counts as one request served, with no tokens.
    """
    total = spent_before()
    total.attempt = activity.info().attempt
    token = _METER.set(total)
    try:
        result = await with_heartbeats(work, details=lambda: total.model_dump())
        if not counts_itself:
            served(0, 0)
    except ApplicationError as err:
        activity.heartbeat(total.model_dump())
        raise ApplicationError(
            err.message,
            total.model_dump(),
            type=err.type,
            non_retryable=err.non_retryable,
            next_retry_delay=err.next_retry_delay,
        ) from None
    except BaseException:
        activity.heartbeat(total.model_dump())
        raise
    finally:
        _METER.reset(token)
    # How the reply was read (repaired, asked again) is the engine's to say, not the meter's.
    total.repaired, total.reasked = result.usage.repaired, result.usage.reasked
    total.fell_back = result.usage.fell_back
    result.usage = total
    return result
