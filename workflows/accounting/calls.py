"""The failure policy, in one place: how the research calls an activity and what a failure means.

- An activity error that retrying cannot fix (non-retryable: a rejected key, a bad configuration)
  ends the research with that one-line reason.
- A role whose retries are spent takes its documented fallback (`Role.fallback`: routing ->
  research; reflection -> CONTINUE while steps remain, else COMPLETE; ...): `call` returns None,
  the caller applies the fallback, and a note says so.
- An isolated role (one page, the stored copy) fails quietly: the caller goes on without it.

Activities are called by name (`Role.name`) with the role's typed result, so this module and the
whole workflow package import no activity code. What an LLM call cost, over all its attempts,
is added to `stats` here, for successes and failures alike, and each LLM call is admitted against
the research's token and cost budgets first (`workflows/accounting/budget.py`).
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

from pydantic import BaseModel
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception
from temporalio.exceptions import TimeoutError as ActivityTimeout

from workflows.accounting import budget, model_use, step_budget
from workflows.accounting.parts import Ledger
from workflows.accounting.stages import REPORT_STAGES, RESEARCH_STAGES
from workflows.accounting.state import ResearchState
from workflows.activity_models import REPLY_PROBLEMS, ObserveInput, Usage
from workflows.activity_role import AnyRole, Role
from workflows.models import TokenCount
from workflows.text import trim
from workflows.text.redaction import redact

Req = TypeVar("Req", bound=BaseModel)
Rep = TypeVar("Rep", bound=BaseModel)


async def call(state: ResearchState, role: Role[Req, Rep], arg: Req) -> Rep | None:
    """Run one activity; None when its retries are spent (the caller applies the fallback) or
    when the budget has no room for it while the report is written. Raises `BudgetSpent` while
    researching when the call would eat into the report's reserve."""
    charge = admit(state, role, arg) if role.llm else budget.Charge(0, 0.0)
    if charge is None:
        return None
    try:
        return await _run(state, role, arg, charge)
    finally:
        spending = state.ledger.spending
        spending.in_flight_tokens -= charge.tokens
        spending.in_flight_cost -= charge.cost


async def _run(
    state: ResearchState, role: Role[Req, Rep], arg: Req, charge: budget.Charge
) -> Rep | None:
    try:
        result = await role.run(arg)
    except (ActivityError, ApplicationError, ActivityTimeout) as err:
        # A local activity's failure arrives as its cause itself (ApplicationError, TimeoutError),
        # a regular one's wrapped in an ActivityError: one policy for both.
        if is_cancelled_exception(err):
            raise asyncio.CancelledError() from err
        cause = err.cause if isinstance(err, ActivityError) else err
        _failed(state, role, cause or err, charge)
        return None
    if role.llm:
        usage = getattr(result, "usage", None)
        account(state.ledger, role.name, usage, succeeded=True, given_tokens=charge.input_tokens)
        if usage is not None and usage.fell_back:  # the engine's own answer, not the model's
            _unanswered(state, role, None, usage.fell_back)
            _noted(state, role, usage.fell_back)
        else:
            model_use.answered(state.ledger.stats)
    return result


def _failed(
    state: ResearchState, role: AnyRole, cause: BaseException, charge: budget.Charge
) -> None:
    """A call whose retries are spent: account for it, then end the research (an error no retry
    fixes, a model that never answered) or note the fallback the caller applies."""
    if role.llm:
        account(
            state.ledger,
            role.name,
            usage_of_failure(cause),
            succeeded=False,
            given_tokens=charge.input_tokens,
        )
    message = redact(cause.message if isinstance(cause, ApplicationError) else str(cause))
    if role.llm:
        _unanswered(state, role, cause, message)
    if (
        isinstance(cause, ApplicationError)
        and cause.non_retryable
        and not role.isolated
        and cause.type not in REPLY_PROBLEMS
    ):
        raise ApplicationError(
            f"{role.name}: {message}", type=cause.type, non_retryable=True
        ) from None
    _noted(state, role, message)
    return None


def _noted(state: ResearchState, role: AnyRole, message: str) -> None:
    """The research's note that ROLE fell back, and why (a role of its own, isolated, says so
    in its own words)."""
    if not role.isolated:
        state.writeup.notes.append(
            f"{role.name} failed ({trim(message.splitlines()[0], 200)}); a fallback was used."
        )


def _unanswered(
    state: ResearchState, role: AnyRole, cause: BaseException | None, message: str
) -> None:
    """Count a call the model left unanswered; a model that has answered nothing yet, failing
    for lack of any answer, ends the research in one line (workflows/accounting/model_use.py)."""
    kind = cause.type if isinstance(cause, ApplicationError) else None
    no_answer = model_use.unanswered(state.ledger.stats, role.name, kind)
    if no_answer and model_use.never_answered(state.ledger.stats):
        raise model_use.failure(trim(message.splitlines()[0], 400)) from None


def admit(state: ResearchState, role: AnyRole, arg: BaseModel) -> budget.Charge | None:
    """Hold the call's likely cost against the budgets (see workflows/accounting/budget.py)."""
    limit, spending = state.ledger.budget, state.ledger.spending
    if limit.max_tokens is None and limit.max_cost_usd is None:
        return budget.Charge(0, 0.0)
    charge = budget.likely(spending, role, arg)
    if state.stage in RESEARCH_STAGES:  # research must leave the report's reserve intact
        reserve_tokens, reserve_cost = (
            step_budget.reserve_beside(state, arg)
            if isinstance(arg, ObserveInput)
            else budget.research_reserve(state)
        )
        over = budget.over_budget(
            state.ledger, charge.tokens + reserve_tokens, charge.cost + reserve_cost
        )
        if over is not None:
            budget.stop(state, over)
            raise budget.BudgetSpent(over.value)
    elif state.stage in REPORT_STAGES:  # the report's calls must fit the limit itself
        over = budget.over_budget(state.ledger, charge.tokens, charge.cost)
        if over is not None:
            budget.stop(state, over)  # the first budget to run out; later ones are only noted
            state.writeup.notes.append(
                f"{role.name} was skipped: the {over.value} budget had no room left for it; "
                "a fallback was used."
            )
            return None
    spending.in_flight_tokens += charge.tokens
    spending.in_flight_cost += charge.cost
    return charge


def account(
    ledger: Ledger, role: str, usage: Usage | None, *, succeeded: bool, given_tokens: int = 0
) -> None:
    """Add what one role call cost over all its attempts: completions served, retries, tokens,
    money; and learn its size and price for the budget's next estimates.

    A result without a usage record (an old history, a test double) counts as one call.
    """
    stats, spending = ledger.stats, ledger.spending
    if usage is None:
        if not succeeded:
            return
        usage = Usage(requests=1)
    stats.llm_calls += usage.requests
    stats.llm_calls_by_role[role] = stats.llm_calls_by_role.get(role, 0) + usage.requests
    stats.llm_repaired += usage.repaired
    stats.llm_reasked += usage.reasked
    if usage.attempt > 1:
        stats.llm_retries += usage.attempt - 1
        stats.llm_retries_by_role[role] = stats.llm_retries_by_role.get(role, 0) + usage.attempt - 1
    stats.prompt_tokens += usage.prompt_tokens
    stats.completion_tokens += usage.completion_tokens
    if usage.prompt_tokens or usage.completion_tokens:
        tokens = stats.tokens_by_role.setdefault(role, TokenCount())
        tokens.prompt_tokens += usage.prompt_tokens
        tokens.completion_tokens += usage.completion_tokens
    if usage.cost_usd is None:
        stats.cost_usd = None
        spending.unpriced = spending.unpriced or usage.unpriced or "(unknown)"
    elif stats.cost_usd is not None:
        stats.cost_usd = round(stats.cost_usd + usage.cost_usd, 6)
    budget.remember(
        spending,
        role,
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.requests,
        None if usage.cost_usd is None else (usage.price_in, usage.price_out),
        given_tokens,
    )
    ledger.budget.spent_tokens = stats.prompt_tokens + stats.completion_tokens
    ledger.budget.spent_cost_usd = stats.cost_usd


def usage_of_failure(cause: BaseException | None) -> Usage | None:
    """What a failed LLM activity spent: its failure's details (retries ran out or the error was
    permanent) or, when it timed out, its last heartbeat's."""
    if isinstance(cause, ApplicationError):
        details = cause.details
    elif isinstance(cause, ActivityTimeout):
        details = cause.last_heartbeat_details
    else:
        return None
    for item in reversed(list(details or ())):
        if isinstance(item, dict):
            try:
                return Usage.model_validate(item)
            except ValueError:
                continue
    return None
