"""Budgets a research keeps: tokens, money and time, for the whole research, report included.

Before each LLM call the workflow knows what has been spent (the activities' exact usage,
counted across retries, `calls.account`) and what the call may cost at most: its prompt, estimated
from the input's size, plus the prompt's `max_tokens` (which the engine sends, so the reply cannot
be longer). While researching, a call is admitted only if that worst case, the calls already in
flight, and a *reserve* for writing and checking the report all fit; otherwise the research stops
(`BudgetSpent`) and the report is written from what it has. While writing the report, a call that
would not fit at all is skipped and its role's fallback applies (a plain report, lexical-only
verification, no critic). So the budget is overshot by at most what one call's prompt estimate
missed, and the report always comes out, opening with a line that says it is partial and why.

The reserve is sized from the evidence gathered so far: the report calls read the observations
and the evidence pool, verification reads the evidence again, the critic reads the report. A role
already served is estimated from what it really took; one not yet served from its `max_tokens`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pydantic import BaseModel

from workflows.models import Budget, BudgetKind, Depth, StepStatus
from workflows import roles
from workflows.roles import PROMPTS, Role

#: Characters per token when estimating a prompt from its input's JSON: English prose runs near
#: 4, JSON keys and ids lower the ratio; 3 errs on the side of a larger estimate.
CHARS_PER_TOKEN = 3
#: A prompt's own text (instructions, schema) on top of its input, in tokens; the longest prompt
#: file is about 3,000 characters and the reply schema adds a few hundred tokens.
PROMPT_OVERHEAD = 1000


class BudgetSpent(Exception):
    """Raised inside the research when the next call would eat into the reserve: the research
    loop stops there and the report is written from what it has (never leaves the workflow)."""


@dataclass
class Spending:
    """The budget's running bookkeeping (the `Budget` the result shows is derived from it)."""

    #: "research" (calls must leave the reserve intact) or "report" (calls must fit the limit).
    phase: str = "research"
    in_flight_tokens: int = 0
    in_flight_cost: float = 0.0
    #: Per role: the largest prompt and completion seen, and the model's prices (USD per 1M).
    prompt_seen: dict[str, int] = field(default_factory=dict)
    completion_seen: dict[str, int] = field(default_factory=dict)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: The model without a known price, when one served a call under a cost budget.
    unpriced: str | None = None
    #: Steps done and planned when the budget stopped the research (for the partial label).
    stopped_after: tuple[int, int] | None = None


@dataclass(frozen=True)
class Charge:
    """What an admitted call holds in flight until it returns."""

    tokens: int
    cost: float


def limits(request_max_tokens: int | None, max_cost: float | None, time_budget_s: float | None) -> Budget:
    return Budget(max_tokens=request_max_tokens, max_cost_usd=max_cost, time_budget_s=time_budget_s)


def estimate(spending: Spending, role: Role, arg: BaseModel | None, input_chars: int | None = None) -> tuple[int, float]:
    """The most a call of `role` may take: (tokens, USD)."""
    chars = input_chars if input_chars is not None else len(arg.model_dump_json()) if arg is not None else 0
    prompt = max(math.ceil(chars / CHARS_PER_TOKEN) + PROMPT_OVERHEAD, spending.prompt_seen.get(role.name, 0))
    completion = max((PROMPTS[p].max_tokens for p in role.prompts), default=0)
    price_in, price_out = _prices(spending, role.name)
    return prompt + completion, (prompt * price_in + completion * price_out) / 1_000_000


def expected(spending: Spending, role: Role, input_chars: int) -> tuple[int, float]:
    """What a call of `role` will likely take, for the reserve: its completion as seen before
    (or half its `max_tokens` when not yet served)."""
    prompt = math.ceil(input_chars / CHARS_PER_TOKEN) + PROMPT_OVERHEAD
    cap = max((PROMPTS[p].max_tokens for p in role.prompts), default=0)
    completion = spending.completion_seen.get(role.name, cap // 2)
    price_in, price_out = _prices(spending, role.name)
    return prompt + completion, (prompt * price_in + completion * price_out) / 1_000_000


def _prices(spending: Spending, role: str) -> tuple[float, float]:
    """The role's model prices; before it has served, the dearest seen (a tier's model is
    usually dearer than the router's, so this errs high)."""
    if role in spending.prices:
        return spending.prices[role]
    if not spending.prices:
        return 0.0, 0.0
    return max(p[0] for p in spending.prices.values()), max(p[1] for p in spending.prices.values())


def remember(spending: Spending, role: str, prompt_tokens: int, completion_tokens: int, requests: int,
             price: tuple[float, float] | None) -> None:
    """Learn from a served call: its per-request size and its model's price."""
    if requests > 0:
        spending.prompt_seen[role] = max(spending.prompt_seen.get(role, 0), prompt_tokens // requests)
        spending.completion_seen[role] = max(spending.completion_seen.get(role, 0), completion_tokens // requests)
    if price is not None:
        spending.prices[role] = price


def exceeded(budget: Budget, tokens: int, cost: float) -> BudgetKind | None:
    """Which limit `tokens` / `cost` (spent plus planned) would break, if any."""
    if budget.max_tokens is not None and tokens > budget.max_tokens:
        return BudgetKind.TOKENS
    if budget.max_cost_usd is not None and cost > budget.max_cost_usd:
        return BudgetKind.COST
    return None


def partial_line(budget: Budget, spending: Spending) -> str | None:
    """The report's first line when a budget stopped the research early."""
    if budget.exhausted is None:
        return None
    what = {
        BudgetKind.TOKENS: f"the token budget of {budget.max_tokens or 0:,}",
        BudgetKind.COST: f"the cost budget of ${budget.max_cost_usd or 0:,.4g}",
        BudgetKind.TIME: f"the time budget of {_seconds(budget.time_budget_s or 0)}",
    }[budget.exhausted]
    if spending.unpriced and budget.exhausted is BudgetKind.COST:
        return f"> Partial report: {what} could not be kept, because model {spending.unpriced} has no known price (set LLM_PRICES)."
    if spending.stopped_after is None:
        return f"> Partial report: {what} ran out before the research began."
    done, planned = spending.stopped_after
    if planned == 0:
        return f"> Partial report: {what} ran out before a plan was made."
    return f"> Partial report: {what} ran out after {done} of {planned} steps."


def _seconds(s: float) -> str:
    if s >= 120:
        return f"{s / 60:g} min"
    return f"{s:g} s"


# --- the reserve ------------------------------------------------------------------------------------

#: Claims per completed step a report makes, roughly, for sizing verification.
CLAIMS_PER_STEP = 4


def reserve(spending: Spending, sectioned: bool, sections: int, observations_chars: int,
            evidence_chars: int, verify: bool) -> tuple[int, float]:
    """What writing and checking the report will likely take, from what has been gathered."""
    parts: list[tuple[int, float]] = []
    if sectioned:
        parts.append(expected(spending, roles.OUTLINE, observations_chars))
        per_section = (observations_chars + evidence_chars) // max(sections, 1)
        parts += [expected(spending, roles.WRITE_SECTION, per_section) for _ in range(max(sections, 1))]
        parts.append(expected(spending, roles.SUMMARIZE, observations_chars))
    else:
        parts.append(expected(spending, roles.SYNTHESIZE, observations_chars + evidence_chars))
    if verify:
        batches = max(1, math.ceil(CLAIMS_PER_STEP * max(sections, 1) / 12))
        parts += [expected(spending, roles.VERIFY_CLAIMS, evidence_chars // batches) for _ in range(batches)]
        parts.append(expected(spending, roles.CRITIQUE, min(12000, observations_chars + 2000)))
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def sectioned_depth(depth: Depth) -> bool:
    """Medium and extended reports are written section by section; light ones in one call."""
    return depth in (Depth.MEDIUM, Depth.EXTENDED, Depth.AUTO)


def completed(steps: list) -> list:  # type: ignore[type-arg]
    return [s for s in steps if s.status is StepStatus.COMPLETED]
