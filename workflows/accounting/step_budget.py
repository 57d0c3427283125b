"""A step a tight budget can still pay for: its sources read in part rather than not at all.

A token or cost budget too small for a step's observation over every page it read used to stop
the research before its first step. A finding from part of the sources is worth more than a
report with none. So when the observation of all the passages would not fit (the call's likely
cost plus the report's reserve, as `calls.admit` judges it), the passages are cut, best-ranked
first, to the most text that fits, and the report's notes say the step read only part of its
sources. Below `MIN_CHARS` of text there is no finding to buy: the passages stay as they are and
the admission stops the research as before.
"""

from __future__ import annotations

from workflows import roles
from workflows.accounting import budget
from workflows.accounting.state import ResearchState
from workflows.activity_models import ObserveInput
from workflows.kit.evidence import EVIDENCE_CHARS, EVIDENCE_PER_SOURCE
from workflows.models import BudgetKind
from workflows.record import Passage

#: The least page text worth an observation: a paragraph or two of one source.
MIN_CHARS = 1200
#: A budget's name in a sentence.
WORDS = {BudgetKind.TOKENS: "token", BudgetKind.COST: "cost", BudgetKind.TIME: "time"}
#: Where a cut passage ends, if a sentence ends near the cut (else at the cut itself).
SENTENCE_ENDS = (". ", ".\n", "\n\n")


def affordable_wave(state: ResearchState, observes: list[ObserveInput]) -> list[ObserveInput]:
    """The observations a wave asks for, each over what the budget can pay for once the steps
    before it in the wave hold theirs in flight; as they are when there is no budget."""
    limit = state.ledger.budget
    if limit.max_tokens is None and limit.max_cost_usd is None:
        return observes
    asked: list[ObserveInput] = []
    held = (0, 0.0)
    for observe in observes:
        observe = affordable_passages(state, observe, held)
        charge = budget.likely(state.ledger.spending, roles.OBSERVE, observe)
        held = (held[0] + charge.tokens, held[1] + charge.cost)
        asked.append(observe)
    return asked


def affordable_passages(
    state: ResearchState, observe: ObserveInput, held: tuple[int, float] = (0, 0.0)
) -> ObserveInput:
    """`observe` itself when it fits the budgets (or there are none), else the same step over its
    passages cut to the most text that fits (at least MIN_CHARS). `held` is what the steps of the
    same wave before this one will hold in flight when this one is admitted."""
    limit = state.ledger.budget
    if limit.max_tokens is None and limit.max_cost_usd is None:
        return observe
    kind = _over(state, observe, held)
    if kind is None:
        return observe
    total = sum(len(p.text) for p in observe.passages)
    if total <= MIN_CHARS or _over(state, _cut(observe, MIN_CHARS), held) is not None:
        return observe  # no finding to buy: the admission stops the research
    low, high = MIN_CHARS, total  # low fits, high does not
    while high - low > 200:
        middle = (low + high) // 2
        if _over(state, _cut(observe, middle), held) is None:
            low = middle
        else:
            high = middle
    state.writeup.notes.append(
        f"Step {_step_number(state, observe)} read {low:,} of its sources' {total:,} characters: "
        f"the {WORDS[kind]} budget had room for no more."
    )
    return _cut(observe, low)


def _over(
    state: ResearchState, observe: ObserveInput, held: tuple[int, float]
) -> BudgetKind | None:
    """The budget admitting `observe` would break (as `calls.admit` judges a research call), with
    `held` (the wave's steps before it) and the report's reserve (`reserve_beside`) kept aside."""
    charge = budget.likely(state.ledger.spending, roles.OBSERVE, observe)
    reserve = reserve_beside(state, observe, held)
    return budget.over_budget(
        state.ledger, charge.tokens + held[0] + reserve[0], charge.cost + held[1] + reserve[1]
    )


def reserve_beside(
    state: ResearchState, observe: ObserveInput, held: tuple[int, float] = (0, 0.0)
) -> tuple[int, float]:
    """The reserve a step's observation must leave: since REPORT_AS_AFFORDED, the cheapest report
    the budget allows. That is the one-call report over what the step will add to it (a reserve
    sized before the step bought a step whose findings left no room for the report that cites
    them). For the research's first step, reading no more than MIN_CHARS with nothing else in
    flight, when the budget cannot pay for both: none, the report then listing the findings as
    found. Measured once: a third of a medium research's tokens researched nothing and spent what it
    had kept on writing and checking a report with no findings in it."""
    reserve = budget.research_reserve(state, adding=step_adds(state, observe))
    if not _first_look(state, observe, held):
        return reserve
    charge = budget.likely(state.ledger.spending, roles.OBSERVE, observe)
    both = (charge.tokens + reserve[0], charge.cost + reserve[1])
    return reserve if budget.over_budget(state.ledger, *both) is None else (0, 0.0)


def _first_look(state: ResearchState, observe: ObserveInput, held: tuple[int, float]) -> bool:
    """The research's first observation, over at most MIN_CHARS, alone in flight (patched)."""
    spending = state.ledger.spending
    return (
        spending.afforded_report
        and state.inquiry.steps_done() == 0
        and held == (0, 0.0)
        and spending.in_flight_tokens == 0
        and sum(len(p.text) for p in observe.passages) <= MIN_CHARS
    )


def step_adds(state: ResearchState, observe: ObserveInput) -> tuple[int, int]:
    """What a step's observation adds to the report's prompt, in characters: the observation
    (as long as the role wrote before, else half its `max_tokens`) and the evidence kept from
    its passages (evidence.py: at most EVIDENCE_PER_SOURCE paragraphs of EVIDENCE_CHARS each per
    source). Only for the research's first step: later steps leave the reserve of a checked
    report, whose verification and critic the report does without when short (calls.admit), so
    what a step adds is paid from them; counted for every step, a research whose budget is all
    it spends unbudgeted researched 1 of 2 light steps (make bench). Nothing for a research from
    before the patch."""
    spending = state.ledger.spending
    if not spending.afforded_report or state.inquiry.steps_done() > 0:
        return (0, 0)
    observation = budget.likely_completion(spending, roles.OBSERVE) * budget.CHARS_PER_TOKEN
    read: dict[int, int] = {}
    for passage in observe.passages:
        read[passage.source_id] = read.get(passage.source_id, 0) + len(passage.text)
    most = EVIDENCE_PER_SOURCE * EVIDENCE_CHARS
    return observation, sum(min(chars, most) for chars in read.values())


def _cut(observe: ObserveInput, chars: int) -> ObserveInput:
    """The passages in their order (best-ranked first) up to `chars` characters of text in all,
    the last one cut at a sentence's end where one is near; passages past the cut are dropped."""
    kept: list[Passage] = []
    room = chars
    for passage in observe.passages:
        if room <= 0:
            break
        text = passage.text if len(passage.text) <= room else _at_sentence(passage.text, room)
        kept.append(passage.model_copy(update={"text": text}))
        room -= len(text)
    return observe.model_copy(update={"passages": kept})


def _at_sentence(text: str, room: int) -> str:
    head = text[:room]
    end = max(head.rfind(mark) for mark in SENTENCE_ENDS)
    return head[: end + 1] if end >= room // 2 else head


def _step_number(state: ResearchState, observe: ObserveInput) -> int:
    plan = state.inquiry.plan
    steps = plan.steps if plan else []
    for number, step in enumerate(steps, 1):
        if step.title == observe.step.title:
            return number
    return len(steps)
