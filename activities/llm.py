"""The LLM activities, one per LLM role of workflows/roles.py, built from the rows.

Each is the configured engine's method of the same name (activities/engine.py), metered: the
engine is `offline` (deterministic, extractive, no network) unless an OpenAI-compatible endpoint
is configured. Engines raise `ApplicationError`s already classified as retryable or not; these
activities add nothing but the name Temporal records in history (the row's), so a test can stand
in for any role by registering a function under the same activity name (tests/support/doubles.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from activities.engine import Engine, method
from activities.usage import metered
from settings import settings
from workflows.activity_role import Role
from workflows.roles import LLM_ROLES


@lru_cache(maxsize=1)
def engine() -> Engine:
    """The process-wide engine: one HTTP client per worker, not one per call."""
    name = settings().llm.engine
    if name == "offline":
        from activities.offline_engine import OfflineEngine

        return OfflineEngine()
    if name == "openai":
        from activities.openai_engine import OpenAIEngine

        return OpenAIEngine(settings())
    raise ApplicationError(
        f"unknown LLM_PROVIDER {name!r}: use 'openai' or 'offline'",
        type="ConfigError",
        non_retryable=True,
    )


def llm_activity(role: Role[Any, Any]) -> Callable[[BaseModel], Awaitable[BaseModel]]:
    """The activity of one LLM role: its engine method, every call metered (tokens and completions
    over all attempts, see activities.usage)."""

    async def serve(inp: BaseModel) -> BaseModel:
        served = engine()
        if served.name == "offline":
            # Pure CPU work (BM25 over the pages read, sentence alignment): in a thread of its
            # own, so the worker's event loop keeps running workflow tasks and answering queries
            # meanwhile. On the loop itself it held a busy machine's workflow tasks for 5-8 s
            # (Temporal's TMPRL1104 warning in `make demo`) and left `status` unanswered.
            work = asyncio.to_thread(asyncio.run, method(served, role)(inp))
            return await metered(work, counts_itself=False)
        return await metered(method(served, role)(inp), counts_itself=True)

    return role.define(serve)


LLM_ACTIVITIES = [llm_activity(role) for role in LLM_ROLES]
