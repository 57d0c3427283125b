"""What an LLM call costs: a price table per model, built in and overridable with LLM_PRICES.

Built-in list prices in USD per 1M tokens (input, output), as the providers published them on
2025-08-31 for standard (not batch, not cached) requests. Prices change: a deployment that
budgets money should set LLM_PRICES for its models, e.g.
`LLM_PRICES='{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}'`.

A model is found by its exact name, then without a routing prefix (`openai/gpt-4o` on
OpenRouter), then by its longest priced prefix (`gpt-4o-mini-2024-07-18` is priced as
`gpt-4o-mini`). Nothing else is guessed: an unknown model has no price, and a research with a
cost budget refuses to start on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

#: The date the built-in prices were taken from the providers' price pages.
PRICES_TAKEN = "2025-08-31"


@dataclass(frozen=True)
class Price:
    input: float  # USD per 1M prompt tokens
    output: float  # USD per 1M completion tokens

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


BUILT_IN: dict[str, Price] = {
    "gpt-5": Price(1.25, 10.0),
    "gpt-5-mini": Price(0.25, 2.0),
    "gpt-5-nano": Price(0.05, 0.40),
    "gpt-4.1": Price(2.0, 8.0),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4o": Price(2.50, 10.0),
    "gpt-4o-mini": Price(0.15, 0.60),
    "o3": Price(2.0, 8.0),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-3-5-haiku": Price(0.80, 4.0),
    "gemini-2.5-pro": Price(1.25, 10.0),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "deepseek-chat": Price(0.27, 1.10),
}


class PriceError(ValueError):
    """LLM_PRICES is not what the README describes."""


#: No model costs more than this per 1M tokens; a larger figure is a typo (or `1e308`, which would
#: overflow a research's cost into infinity and its state into `null`).
MAX_PRICE_USD = 10_000.0


def table(llm_prices: str | None) -> dict[str, Price]:
    """The built-in prices with LLM_PRICES over them."""
    prices = dict(BUILT_IN)
    if not llm_prices or not llm_prices.strip():
        return prices
    try:
        given = json.loads(llm_prices)
    except json.JSONDecodeError as err:
        raise PriceError(
            f"LLM_PRICES is not valid JSON ({err.msg} at character {err.pos})"
        ) from None
    if not isinstance(given, dict):
        raise PriceError(
            'LLM_PRICES must be a JSON object: {"MODEL": {"input": USD, "output": USD}}'
        )
    for model, row in given.items():
        try:
            price = Price(float(row["input"]), float(row["output"]))
        except (TypeError, KeyError, ValueError):
            raise PriceError(
                f'LLM_PRICES[{model!r}] must be {{"input": USD per 1M tokens, "output": USD per 1M tokens}}'
            ) from None
        if not all(
            0 <= p <= MAX_PRICE_USD for p in (price.input, price.output)
        ):  # also refuses inf, nan
            raise PriceError(
                f"LLM_PRICES[{model!r}]: prices must be numbers from 0 to {MAX_PRICE_USD:,.0f} "
                "USD per 1M tokens"
            )
        prices[model] = price
    return prices


def price_of(model: str, prices: dict[str, Price]) -> Price | None:
    """The model's price, or None when it is unknown."""
    for name in (model, model.rsplit("/", 1)[-1]):
        if name in prices:
            return prices[name]
    bare = model.rsplit("/", 1)[-1]
    prefixes = [known for known in prices if bare.startswith(known + "-")]
    return prices[max(prefixes, key=len)] if prefixes else None
