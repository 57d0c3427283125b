"""The price table: built-in rows, LLM_PRICES over them, and how a model name finds its row."""

from __future__ import annotations

import pytest

from activities import pricing


def test_built_in_prices_find_dated_and_routed_model_names() -> None:
    prices = pricing.table(None)
    assert pricing.price_of("gpt-4o-mini", prices) == pricing.Price(0.15, 0.60)
    assert pricing.price_of("gpt-4o-mini-2024-07-18", prices) == pricing.Price(0.15, 0.60)
    assert pricing.price_of("gpt-4o-2024-08-06", prices) == pricing.Price(2.50, 10.0)
    assert pricing.price_of("openai/gpt-4.1-mini", prices) == pricing.Price(0.40, 1.60)
    assert pricing.price_of("o3-mini", prices) == pricing.Price(1.10, 4.40)
    assert pricing.price_of("llama3.1:8b", prices) is None
    assert pricing.price_of("gpt-4", prices) is None  # no guessing from a shorter name


def test_llm_prices_add_and_override_rows() -> None:
    prices = pricing.table('{"llama3.1:8b": {"input": 0, "output": 0}, "gpt-4o-mini": {"input": 1, "output": 2}}')
    assert pricing.price_of("llama3.1:8b", prices) == pricing.Price(0, 0)
    assert pricing.price_of("gpt-4o-mini", prices) == pricing.Price(1, 2)
    assert pricing.Price(1, 2).cost(1_000_000, 500_000) == 2.0


@pytest.mark.parametrize("raw, says", [
    ("{not json", "not valid JSON"),
    ('["gpt-4o"]', "must be a JSON object"),
    ('{"m": {"input": 1}}', "LLM_PRICES['m']"),
    ('{"m": {"input": -1, "output": 1}}', "0 or more"),
])
def test_a_bad_llm_prices_is_one_clear_line(raw: str, says: str) -> None:
    with pytest.raises(pricing.PriceError) as caught:
        pricing.table(raw)
    assert says in str(caught.value) and "\n" not in str(caught.value)
