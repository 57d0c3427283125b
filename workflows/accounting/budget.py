"""Budgets a research keeps: tokens, money and time, for the whole research, report included.

Before each LLM call the workflow knows what has been spent (the activities' exact usage,
counted across retries, `calls.account`) and what the call will likely cost: its prompt,
estimated from the input's size, plus what the role's calls wrote so far in this research (the
longest reply seen, with a margin; half its `max_tokens` before it has served). While
researching, a call is admitted only if that, the calls already in flight, and a *reserve* for
writing and checking the report all fit; otherwise the research stops (`BudgetSpent`) and the
report is written from what it has. Until the first step is researched, the reserve is only the
report's one call (a step found is worth more than the critic's reading of an empty report).
While writing the report, a call that would not fit at all is skipped and its role's fallback
applies (a plain report, lexical-only verification, no critic). So the budget is spent, not
hoarded: a third of a research's tokens buys its first steps, and the budget is overshot by at
most what the calls in flight wrote beyond their estimates (never beyond their `max_tokens`,
which the engine sends). The report always comes out, opening with a line that says it is
partial and why. Under a budget, steps run at once only while it could pay for all of them.

The reserve is sized from the evidence gathered so far: the report calls read the observations
and the evidence pool, verification reads the evidence again, the critic reads the report; what
the report calls write follows the report's length target (by depth). A prompt is estimated as
its input plus the prompt's own text, scaled by what the calls already served showed (the
largest ratio seen between the prompt tokens the endpoint counted and the estimate: the role's
own once it has served, else the largest of any role's).

The arithmetic works on the research's `Ledger` (workflows/accounting/parts.py: the limits, what was spent,
the running `Spending`); `report_reserve`, `over_budget` and `stop` read and write the research
as a whole (what it gathered sizes the reserve; a stop skips the steps left and says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import BaseModel

from workflows import roles
from workflows.accounting.parts import Ledger, Spending
from workflows.accounting.state import ResearchState
from workflows.activity_role import AnyRole
from workflows.events import Event, EventKind, emit
from workflows.models import TARGET_WORDS, Budget, BudgetKind, Depth, PlanStep, StepStatus
from workflows.record import PAGE_TEXT_LIMIT

#: Characters per token when estimating a prompt from its input's JSON: English prose runs near
#: 4, JSON keys and ids lower the ratio; 3 errs on the side of a larger estimate.
CHARS_PER_TOKEN = 3
#: A prompt's own text (instructions, schema) on top of its input, in tokens, until a served call
#: shows the real figure: the longest prompt file is about 3,000 characters, the schema adds some.
PROMPT_OVERHEAD = 1000
#: Tokens per word of report prose (English runs near 1.3; other languages and markdown more).
TOKENS_PER_WORD = 1.6
#: What a call is expected to write beyond the longest reply its role wrote so far in this
#: research (replies vary; the engine's `max_tokens` still bounds each one).
COMPLETION_MARGIN = 1.25
#: Pages a research step reads at most (researching.PAGES_PER_STEP), for a step's cost before
#: any step has been observed.
PAGES_PER_STEP = 3


class BudgetSpent(Exception):
    """Raised inside the research when the next call would eat into the reserve: the research
    loop stops there and the report is written from what it has (never leaves the workflow)."""


@dataclass(frozen=True)
class Charge:
    """What an admitted call holds in flight until it returns, and its input's size in tokens
    (to learn the prompt's own size from what the endpoint counts)."""

    tokens: int
    cost: float
    input_tokens: int = 0


def limits(
    request_max_tokens: int | None, max_cost: float | None, time_budget_s: float | None
) -> Budget:
    return Budget(max_tokens=request_max_tokens, max_cost_usd=max_cost, time_budget_s=time_budget_s)


def input_tokens(arg: BaseModel, shown_only: bool = False) -> int:
    """An input's size in tokens; `shown_only`: without the fields its prompt does not show
    (marked `shown=False`: what was read, which only the guard on what a model writes reads)."""
    hidden = {
        name
        for name, f in type(arg).model_fields.items()
        if shown_only
        and isinstance(f.json_schema_extra, dict)
        and f.json_schema_extra.get("shown") is False
    }
    return math.ceil(len(arg.model_dump_json(exclude=hidden)) / CHARS_PER_TOKEN)


def _prompt(spending: Spending, given: int, role: str | None = None) -> int:
    """A prompt's tokens from its input's: plus the prompt's own text, scaled by how far off
    such estimates were on the calls already served (between a quarter and four times): on the
    role's own calls when `role` is given and has served, else on any call."""
    seen = spending.ratio_by_role.get(role) if role is not None else None
    ratio = seen if seen is not None else spending.ratio_seen
    ratio = 1.0 if ratio is None else min(4.0, max(0.25, ratio))
    return math.ceil((given + PROMPT_OVERHEAD) * ratio)


def likely(spending: Spending, role: AnyRole, arg: BaseModel) -> Charge:
    """What a call of `role` will likely take, for admission: its prompt (estimated with the
    role's own prompt ratio once it has served) plus its likely reply (`likely_completion`)."""
    given = input_tokens(arg, shown_only=spending.afforded_report)
    prompt = _prompt(spending, given, role.name)
    return _charge(
        spending,
        role,
        prompt,
        likely_completion(spending, role, getattr(arg, "target_words", None)),
        given,
    )


def likely_completion(spending: Spending, role: AnyRole, words: int | None = None) -> int:
    """What a call will likely write: as the role wrote before, with a margin; before it has
    served, the words it is asked for (report prose, as the reserve counts them), else half
    its `max_tokens`."""
    if role.name in spending.completion_seen:
        return min(
            role.max_tokens, math.ceil(spending.completion_seen[role.name] * COMPLETION_MARGIN) + 20
        )
    if words is not None:
        return _prose(role, words)
    return role.max_tokens // 2


def _prose(role: AnyRole, words: int) -> int:
    """The tokens of `words` words of report prose and its claims list, within `max_tokens`."""
    return min(role.max_tokens, math.ceil(words * TOKENS_PER_WORD) + 100)


def _charge(spending: Spending, role: AnyRole, prompt: int, completion: int, given: int) -> Charge:
    price_in, price_out = _prices(spending, role.name)
    return Charge(
        prompt + completion, (prompt * price_in + completion * price_out) / 1_000_000, given
    )


def expected(
    spending: Spending, role: AnyRole, input_chars: int, writes_words: int | None = None
) -> tuple[int, float]:
    """What a call of `role` will likely take, for the reserve: what it writes follows the words
    it is asked for (report prose), else what the role wrote before, else half its `max_tokens`."""
    prompt = _prompt(spending, math.ceil(input_chars / CHARS_PER_TOKEN))
    if writes_words is not None:
        completion = _prose(role, writes_words)
    else:
        completion = spending.completion_seen.get(role.name, role.max_tokens // 2)
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


def remember(
    spending: Spending,
    role: str,
    prompt_tokens: int,
    completion_tokens: int,
    requests: int,
    price: tuple[float, float] | None,
    given_tokens: int,
) -> None:
    """Learn from a served call: its per-request completion size, how far its prompt's estimate
    was off, its model's price."""
    if requests > 0 and prompt_tokens > 0:
        per_request = prompt_tokens // requests
        spending.completion_seen[role] = max(
            spending.completion_seen.get(role, 0), completion_tokens // requests
        )
        if given_tokens > 0:
            ratio = per_request / (given_tokens + PROMPT_OVERHEAD)
            spending.ratio_seen = max(spending.ratio_seen or 0.0, ratio)
            spending.ratio_by_role[role] = max(spending.ratio_by_role.get(role, 0.0), ratio)
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


def reserve(
    spending: Spending,
    sectioned: bool,
    sections: int,
    observations_chars: int,
    evidence_chars: int,
    verify: bool,
    words: int,
) -> tuple[int, float]:
    """What writing and checking the report will likely take, from what has been gathered and
    the report's length target in `words`."""
    parts: list[tuple[int, float]] = []
    if sectioned:
        parts.append(
            expected(spending, roles.OUTLINE, observations_chars, writes_words=40 * sections)
        )
        per_section = (observations_chars + evidence_chars) // max(sections, 1)
        parts += [
            expected(
                spending, roles.WRITE_SECTION, per_section, writes_words=words // max(sections, 1)
            )
            for _ in range(max(sections, 1))
        ]
        parts.append(expected(spending, roles.SUMMARIZE, observations_chars, writes_words=150))
    else:
        parts.append(
            expected(
                spending, roles.SYNTHESIZE, observations_chars + evidence_chars, writes_words=words
            )
        )
    if verify:
        claims = CLAIMS_PER_STEP * max(sections, 1)
        batches = max(1, math.ceil(claims / 12))
        parts += [
            expected(spending, roles.VERIFY_CLAIMS, evidence_chars // batches, writes_words=25 * 12)
            for _ in range(batches)
        ]
        report_chars = int(words * TOKENS_PER_WORD * CHARS_PER_TOKEN)
        parts.append(expected(spending, roles.CRITIQUE, min(12000, report_chars), writes_words=200))
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def report_words(depth: Depth, done: int, planned: int) -> int:
    """The report's length target: the depth's, in proportion to the steps researched (a
    research a budget stopped after one step of four gets a quarter-length report)."""
    full = TARGET_WORDS[depth]
    if planned <= 0 or done >= planned:
        return full if planned > 0 else full // 3
    return max(full // 4, full * max(done, 1) // planned)


def sectioned_depth(depth: Depth) -> bool:
    """Medium and extended reports are written section by section; light ones in one call."""
    return depth in (Depth.MEDIUM, Depth.EXTENDED, Depth.AUTO)


def completed(steps: list[PlanStep]) -> list[PlanStep]:
    return [s for s in steps if s.status is StepStatus.COMPLETED]


def spent_text(
    prompt_tokens: int, completion_tokens: int, cost_usd: float | None, budget: Budget | None
) -> str:
    """What the research spent, against its budgets: ", 12,400 tokens of 20,000, $0.0031"."""
    tokens = prompt_tokens + completion_tokens
    if not tokens:
        return ""
    text = f", {tokens:,} tokens"
    if budget and budget.max_tokens:
        text += f" of {budget.max_tokens:,}"
    if cost_usd is not None and cost_usd > 0:
        text += f", ${cost_usd:.4f}"
        if budget and budget.max_cost_usd:
            text += f" of ${budget.max_cost_usd:g}"
    if budget and budget.exhausted:
        text += f" ({budget.exhausted.value} budget spent)"
    return text


# --- the research's budget --------------------------------------------------------------------------


def report_reserve(
    state: ResearchState,
    sectioned: bool = False,
    checked: bool = True,
    adding: tuple[int, int] = (0, 0),
) -> tuple[int, float]:
    """What writing and (unless not `checked`) checking the report will likely take, sized from
    what was gathered, plus `adding` (a step's observation and evidence, in characters, not yet
    gathered). The research keeps the reserve of a report written in one call (the cheapest
    form); a budget with room for more gets a report in sections (reporting.py). Since
    REPORT_AS_AFFORDED, the background's passages count only while there is no plan: with one,
    the report is written from the findings and never shows them."""
    inquiry, material, spending = state.inquiry, state.material, state.ledger.spending
    steps = completed(inquiry.plan.steps) if inquiry.plan else []
    shown = not (spending.afforded_report and inquiry.plan is not None)
    observations = sum(len(s.observation or "") for s in steps) + adding[0]
    observations += sum(len(p.text) for p in material.background) if shown else 0
    evidence = sum(len(e.text) for e in material.evidence) + adding[1]
    done = inquiry.steps_done() + (1 if adding != (0, 0) else 0)
    return reserve(
        spending,
        sectioned=sectioned,
        sections=max(len(steps), 1),
        observations_chars=observations + 200 * len(material.sources),
        evidence_chars=evidence,
        verify=state.request.verify and checked,
        words=report_words(inquiry.depth, done, inquiry.steps_planned()),
    )


def target_words(state: ResearchState) -> int:
    """The report's length target for this research (`report_words`)."""
    return report_words(
        state.inquiry.depth, state.inquiry.steps_done(), state.inquiry.steps_planned()
    )


def research_reserve(state: ResearchState, adding: tuple[int, int] = (0, 0)) -> tuple[int, float]:
    """The reserve a research call must leave: the report's, checks included, once a step has
    been researched; before that only the report's one call (`likely` admission only). The first
    step's observation leaves the reserve of the report over what it will add (step_budget.py)."""
    return report_reserve(state, checked=state.inquiry.steps_done() > 0, adding=adding)


def affordable(state: ResearchState, wave: list[int]) -> list[int]:
    """The steps of `wave` the budgets could pay for at once (at least the first): each step's
    observation and a share of the reflection, twice over (the reserve grows with each step).
    Steps left out stay pending for the next wave, so a tight budget costs time, not research."""
    limit, spending = state.ledger.budget, state.ledger.spending
    if len(wave) < 2 or (limit.max_tokens is None and limit.max_cost_usd is None):
        return wave
    observe = expected(
        spending, roles.OBSERVE, PAGES_PER_STEP * PAGE_TEXT_LIMIT
    )  # pages read in full
    reflect = expected(spending, roles.REFLECT, 0)
    per_step = (2 * (observe[0] + reflect[0]), 2 * (observe[1] + reflect[1]))
    reserve_tokens, reserve_cost = report_reserve(state)
    for k in range(len(wave), 1, -1):
        if (
            over_budget(
                state.ledger, reserve_tokens + k * per_step[0], reserve_cost + k * per_step[1]
            )
            is None
        ):
            return wave[:k]
    return wave[:1]


def over_budget(ledger: Ledger, tokens: int, cost: float) -> BudgetKind | None:
    """The budget that `tokens` / `cost` more, on top of what is spent and in flight, would
    break; a cost budget cannot be kept once a model without a price has served a call."""
    limit, spending = ledger.budget, ledger.spending
    if spending.unpriced and limit.max_cost_usd is not None:
        return BudgetKind.COST
    return exceeded(
        limit,
        limit.spent_tokens + spending.in_flight_tokens + tokens,
        (limit.spent_cost_usd or 0.0) + spending.in_flight_cost + cost,
    )


def stop(state: ResearchState, kind: BudgetKind) -> None:
    """Record which budget stopped the research, after how many steps; skip the rest."""
    if not record_stop(state, kind):
        return
    why = (partial_line(state.ledger.budget, state.ledger.spending) or "").removeprefix(
        "> Partial report: "
    )
    state.writeup.notes.append(
        f"{why[:1].upper()}{why[1:].rstrip('.')}; the report covers what was found by then."
    )
    state.inquiry.skip_pending(f"the {kind.value} budget ran out")
    announce(state)  # the event stream says so too


def record_stop(state: ResearchState, kind: BudgetKind) -> bool:
    """Mark `kind` as the budget that stopped the research, with the steps done and planned by
    then; False when another budget stopped it first (the first one stands)."""
    ledger = state.ledger
    if ledger.budget.exhausted is not None:
        return False
    ledger.budget.exhausted = kind
    ledger.spending.stopped_after = (state.inquiry.steps_done(), state.inquiry.steps_planned())
    return True


def announce(state: ResearchState) -> Event:
    """The research stopped for a budget: which one, what was spent, how far it got."""
    limit = state.ledger.budget
    done, planned = state.ledger.spending.stopped_after or (0, 0)
    kind = limit.exhausted.value if limit.exhausted else "?"
    return emit(
        state.events,
        EventKind.BUDGET,
        f"{kind} budget spent after {done} of {planned} steps: {limit.spent_tokens:,} tokens"
        + (f" of {limit.max_tokens:,}" if limit.max_tokens else "")
        + (f", ${limit.spent_cost_usd:.4f}" if limit.spent_cost_usd else "")
        + (f" of ${limit.max_cost_usd:g}" if limit.max_cost_usd else ""),
        {
            "exhausted": kind,
            "spent_tokens": limit.spent_tokens,
            "max_tokens": limit.max_tokens,
            "spent_cost_usd": limit.spent_cost_usd,
            "max_cost_usd": limit.max_cost_usd,
            "time_budget_s": limit.time_budget_s,
            "steps_done": done,
            "steps_planned": planned,
        },
    )
