"""The research's time budget: a durable clock over the stretches of research, paused while a
person is waited for.

Research runs until it is done or a budget stops it: the token or cost budget from inside
(`BudgetSpent`, workflows/accounting/budget.py), the time budget from outside with a durable timer. Time spent
waiting for a person's review does not count: the timer is re-armed with what is left once the
person has answered. Deterministic: only `workflow.now()` and workflow timers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import datetime
from typing import Any

from temporalio import workflow

from workflows.accounting import budget
from workflows.accounting.state import ResearchState
from workflows.models import MODE_BUDGET_S, BudgetKind
from workflows.text import duration


def time_budget(state: ResearchState) -> float | None:
    return state.request.time_budget_s or MODE_BUDGET_S[state.request.mode]


class ResearchClock:
    """When this run's current stretch of research began (None between stretches)."""

    def __init__(self) -> None:
        self.research_started: datetime | None = None

    def can_research_more(self, state: ResearchState) -> bool:
        """No budget has run out, and research time is left (a refinement may add steps)."""
        limit_s = time_budget(state)
        time_left = limit_s is None or state.research_elapsed_s < limit_s
        return state.ledger.budget.exhausted is None and time_left

    def count(self, state: ResearchState) -> None:
        """Add this stretch of research (less the waits for a person) to the research's time."""
        if self.research_started is not None:
            stretch = (workflow.now() - self.research_started).total_seconds()
            state.research_elapsed_s += stretch - state.oversight.paused_s
            state.oversight.paused_s = 0.0
            self.research_started = None

    async def guarded(self, state: ResearchState, work: Coroutine[Any, Any, None]) -> None:
        """Run research until it is done or a budget stops it (module docstring)."""
        try:
            await self._within_time(state, work)
        except budget.BudgetSpent:
            pass  # the ledger says which budget, the notes say so; the report is written next
        self.count(state)

    async def _within_time(self, state: ResearchState, work: Coroutine[Any, Any, None]) -> None:
        oversight = state.oversight
        limit_s = time_budget(state)
        research = asyncio.create_task(work)
        started = self.research_started = workflow.now()
        try:
            if limit_s is None:
                await research
                return
            while not research.done():
                if oversight.waiting_since is not None:
                    await workflow.wait_condition(
                        lambda: research.done() or oversight.waiting_since is None
                    )
                    continue
                spent = (
                    state.research_elapsed_s
                    + (workflow.now() - started).total_seconds()
                    - oversight.paused_s
                )
                if spent >= limit_s:
                    break
                done, _ = await workflow.wait([research], timeout=limit_s - spent)
                if not done and oversight.waiting_since is None and oversight.paused_s == 0:
                    break  # the budget ran out with nobody waited for: no re-arming needed
        except asyncio.CancelledError:
            await _stop(research)
            raise
        if research.done():
            research.result()
            return
        await _stop(research)
        state.writeup.notes.append(
            f"The {state.request.mode.value} mode's time budget of {duration(limit_s)} ran out; "
            "the report covers the steps finished by then."
        )
        if budget.record_stop(state, BudgetKind.TIME):
            budget.announce(state)


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
