"""The price table: built-in rows, LLM_PRICES over them, and how a model name finds its row."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from activities import pricing

REPO = Path(__file__).resolve().parents[2]


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
    prices = pricing.table(
        '{"llama3.1:8b": {"input": 0, "output": 0}, "gpt-4o-mini": {"input": 1, "output": 2}}'
    )
    assert pricing.price_of("llama3.1:8b", prices) == pricing.Price(0, 0)
    assert pricing.price_of("gpt-4o-mini", prices) == pricing.Price(1, 2)
    assert pricing.Price(1, 2).cost(1_000_000, 500_000) == 2.0


@pytest.mark.parametrize(
    "raw, says",
    [
        ("{not json", "not valid JSON"),
        ('["gpt-4o"]', "must be a JSON object"),
        ('{"m": {"input": 1}}', "LLM_PRICES['m']"),
        ('{"m": {"input": -1, "output": 1}}', "from 0 to 10,000"),
        # JSON parsers accept these; a price of infinity made the usage `null` and wedged the research.
        ('{"m": {"input": Infinity, "output": 1}}', "from 0 to 10,000"),
        ('{"m": {"input": 1e400, "output": 1}}', "from 0 to 10,000"),
        ('{"m": {"input": 1, "output": 1e308}}', "from 0 to 10,000"),
        ('{"m": {"input": NaN, "output": 1}}', "from 0 to 10,000"),
    ],
)
def test_a_bad_llm_prices_is_one_clear_line(raw: str, says: str) -> None:
    with pytest.raises(pricing.PriceError) as caught:
        pricing.table(raw)
    assert says in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "variable, value, says",
    [
        (
            "LLM_PRICES",
            '{"m": {"input": Infinity, "output": 1}}',
            "LLM_PRICES['m']: prices must be numbers",
        ),
        ("CRAWL_PAGE_TIMEOUT_S", "inf", "CRAWL_PAGE_TIMEOUT_S: Input should be a finite number"),
        ("CRAWL_HOST_GAP_S", "nan", "CRAWL_HOST_GAP_S: Input should be a finite number"),
        (
            "CRAWL_PAGE_TIMEOUT_S",
            "86400",
            "CRAWL_PAGE_TIMEOUT_S: Input should be less than or equal to 600",
        ),
    ],
)
def test_the_worker_refuses_a_bad_number_at_start_in_one_line(
    variable: str, value: str, says: str, tmp_path: Path
) -> None:
    """Before it reaches Temporal (none runs here): exit 2 and one line, no traceback."""
    env = {
        **os.environ,
        variable: value,
        "TEMPORAL_ADDRESS": "127.0.0.1:9",
        "LLM_PROVIDER": "offline",
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "worker.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and says in line
