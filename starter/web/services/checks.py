"""`POST /api/check` as bounded work: `run_check(request, body, user)`.

A check fetches up to 50 pages and aligns every cited sentence with its sources' text: seconds to
minutes of CPU. The red team's checks ran on the app's shared thread pool, went on after the
client left, and six at once made another user's library take 187 s. Now each is bounded:

- in concurrency: at most WEB_CHECKS_PER_USER at a time for one user (429 with Retry-After), and
  WEB_CHECKS in all (503 with Retry-After), refused at once rather than queued;
- in size: cited sentences × sources at most MAX_PAIRS (422, starter/client/citations_check.py),
  and each source's page read through the crawler's caps, a few at a time, trimmed at once;
- off the app's threads: in a child process (starter/web/services/check_child.py) at a lower priority,
  its memory capped, so it shares neither the GIL nor the request threads;
- in time: a child still working after CHECK_TIMEOUT_S is killed (503);
- by the client: when the person who asked disconnects, the child is killed at once.
"""

from __future__ import annotations

import json
import pickle
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.requests import Request

from settings import Settings
from starter.client.citations_check import CheckRequest, GivenSource
from starter.web.deps import ApiError
from starter.web.services.children import ClientLeft, TooSlow, failure_line, run_child

#: How long a check may take in all (reading its sources included), and how long a refused
#: client is told to wait.
CHECK_TIMEOUT_S = 300.0
RETRY_AFTER_S = 10.0


class Checks:
    """The check slots of one app."""

    def __init__(self, total: int, per_user: int) -> None:
        self.total = total
        self.per_user = per_user
        self.users: Counter[str] = Counter()

    @asynccontextmanager
    async def slot(self, user: str) -> AsyncIterator[None]:
        if self.users[user] >= self.per_user:
            raise ApiError(
                429,
                f"you already have {self.per_user} check(s) running: wait for one to finish",
                RETRY_AFTER_S,
            )
        if sum(self.users.values()) >= self.total:
            raise ApiError(
                503, "the server is running too many checks: try again in a minute", RETRY_AFTER_S
            )
        self.users[user] += 1
        try:
            yield
        finally:
            self.users[user] -= 1
            if self.users[user] <= 0:
                del self.users[user]


def checks_of(request: Request) -> Checks:
    state = request.app.state
    found = getattr(state, "checks", None)
    if found is None:
        cfg: Settings = state.backend.cfg
        found = state.checks = Checks(cfg.web.checks, cfg.web.checks_per_user)
    return found


async def run_check(
    request: Request,
    body: CheckRequest,
    user: str,
    cfg: Settings,
    named: list[GivenSource] | None = None,
) -> Any:
    """The check's JSON object, computed in a child under the module's bounds. With NAMED (the
    Check citations page: possibly none), local sources named as the product names them are read
    from the corpus and USER's documents (`citations_check.named_file`); the API reads none."""
    owner = user if named is not None else None
    async with checks_of(request).slot(user):
        payload = (body.model_dump_json(), cfg, owner, named or [])
        return await _in_child(request, pickle.dumps(payload))


async def _in_child(request: Request, payload: bytes) -> Any:
    try:
        out, err, code = await run_child(
            request, ["-m", "starter.web.services.check_child"], payload, CHECK_TIMEOUT_S
        )
    except ClientLeft:
        raise ApiError(499, "the check was cancelled: the client left") from None
    except TooSlow:
        raise ApiError(
            503,
            f"the check did not finish within {CHECK_TIMEOUT_S:.0f} s: check fewer sentences "
            "or sources at a time",
        ) from None
    if code != 0:
        raise ApiError(422 if code == 3 else 503, failure_line(err, code, "the check failed"))
    return json.loads(out)
