"""Sending a person's review to a research: the one way every front end does it.

The workflow's `review` update validates what a signal would only record (nothing pending, a
decision that is not exactly approve / revise / cancel, bad steps), so a refusal comes back at once
with the workflow's own reason. Kept apart from the CLI's review prompt (starter/cli/reviews.py) so
the research client, which the web app and MCP use, needs nothing of the terminal.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import (
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.service import RPCError

from starter.client.temporal import (
    ResearchHandle,
    not_taken,
    refused,
    root_message,
    translated,
)
from starter.client.terminal import clean
from workflows.research import DeepResearchWorkflow

UPDATE_WAIT_S = 30.0


async def send_review(handle: ResearchHandle, payload: dict[str, Any]) -> str:
    """Send PAYLOAD through the validating `review` update, its feedback and steps without control
    characters or bidi overrides; a `ClientError` with the workflow's reason when it is refused
    (`review refused: ...`)."""
    try:
        async with asyncio.timeout(UPDATE_WAIT_S):
            return await handle.execute_update(DeepResearchWorkflow.review, cleaned(payload))
    except WorkflowUpdateFailedError as err:
        raise refused("review", root_message(err)) from err
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError) as err:
        raise not_taken("review") from err
    except RPCError as err:
        raise translated(err, handle.id) from err


def cleaned(payload: dict[str, Any]) -> dict[str, Any]:
    """The review with `terminal.clean` applied to its feedback and to each step's texts."""
    out = {**payload}
    if isinstance(out.get("feedback"), str):
        out["feedback"] = clean(out["feedback"])
    if isinstance(out.get("steps"), list):
        out["steps"] = [
            {key: clean(value) if isinstance(value, str) else value for key, value in step.items()}
            if isinstance(step, dict)
            else step
            for step in out["steps"]
        ]
    return out
