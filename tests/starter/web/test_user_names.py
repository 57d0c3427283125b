"""User names compared without case (`alice` and `Alice` are never two users) and
`local`, the CLI's and the MCP server's user, reserved: such token lists are refused when the web
app starts, in one line, exit 2, no token shown."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from settings import ConfigError
from starter.web.identity.auth import parse_tokens

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("tokens", "said"),
    [
        ("carol:carol-token-0123456789x,Carol:other-token-0123456789y", "named twice"),
        ("dave:dave-token-0123456789xyz,DAVE:dave2-token-0123456789x", "without case"),
        ("local:local-token-0123456789xy", "reserved"),
        ("erin:erin-token-0123456789abc,Local:loc-token-0123456789ab", "reserved"),
    ],
)
def test_names_differing_in_case_or_named_local_are_refused_at_start(
    tokens: str, said: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_tokens(tokens)
    assert said in str(refused.value)
    env = {
        **os.environ,
        "RESEARCH_API_TOKENS": tokens,
        "RESEARCH_DATA_DIR": str(tmp_path),
        "RESEARCH_DB_URL": f"sqlite:///{tmp_path / 'library.sqlite'}",
    }
    served = subprocess.run(
        [sys.executable, "-m", "starter", "serve", "--host", "127.0.0.1", "--port", "0"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 2, served.stderr
    lines = served.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], served.stderr
    assert "0123456789" not in served.stderr


def test_names_of_one_case_each_are_taken() -> None:
    assert set(parse_tokens("alice:alice-token-0123456789ab,bob:bob-token-0123456789abc")) == {
        "alice",
        "bob",
    }
