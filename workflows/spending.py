"""What a research spent: the tokens, calls and cost its `stats` count, and the budgets it ran under.

Kept apart from what the research found (workflows/record.py) because other readers want it: the
accounting floor adds to it call by call, and the outside prices and shows it. Like the record,
re-exported by workflows/models.py. Pure: no I/O.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, Field

from workflows.record import Calibration


class TokenCount(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Stats(BaseModel):
    """What the research cost. LLM figures are what the endpoint served: `llm_calls` counts every
    completion returned (a reply that failed validation and was asked again counts twice), and
    `llm_retries` counts the activity attempts after the first, whatever their outcome."""

    llm_calls: int = 0
    llm_calls_by_role: dict[str, int] = Field(default_factory=dict)
    llm_retries: int = 0
    llm_retries_by_role: dict[str, int] = Field(default_factory=dict)
    tokens_by_role: dict[str, TokenCount] = Field(default_factory=dict)
    searches: int = 0
    pages_fetched: int = 0
    duration_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: What the LLM calls cost in USD (prices: LLM_PRICES or the built-in table); None when a
    #: model in use has no known price. The offline engine costs 0.
    cost_usd: float | None = 0.0
    #: LLM role calls the engine answered, and per role the calls the model left unanswered
    #: (the endpoint failed, or never gave a usable reply, over all retries): their fallback was
    #: used. `workflows/accounting/model_use.py` tells a research its model never answered from one where
    #: some roles fell back.
    llm_answered: int = 0
    llm_unanswered_by_role: dict[str, int] = Field(default_factory=dict)
    #: Of the answered calls: replies read only once repaired (nearly JSON), and replies that
    #: came when the model was asked again with the reason its first could not be read.
    llm_repaired: int = 0
    llm_reasked: int = 0
    #: The model's judge on its canaries, when a model judged the claims (None: no model judged).
    judge_calibration: Calibration | None = None


class BudgetKind(str, Enum):
    TOKENS = "tokens"
    COST = "cost"
    TIME = "time"


class Budget(BaseModel):
    """The research's budgets and what was spent against them; `exhausted` names the budget
    that stopped the research early (its report is then partial and says so)."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    time_budget_s: float | None = None
    spent_tokens: int = 0
    spent_cost_usd: float | None = 0.0
    exhausted: BudgetKind | None = None
