"""One failure, three front ends: every kind of `ClientError` the client raises has its exit code
and its HTTP status, and the same kind of failure reads the same from every command (an unknown
standing research exits 2 like an unknown research, not a code of its own)."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from starter.cli.exits import EXIT_CODE
from starter.client.errors import Kind
from starter.web.deps import HTTP_STATUS
from tests.starter.cli.test_starter import error_line, starter


def test_every_kind_has_an_exit_code_and_an_http_status() -> None:
    assert set(EXIT_CODE) == set(Kind) == set(HTTP_STATUS)
    # what the person must fix first is 2; what may pass if they try again is 1
    assert EXIT_CODE[Kind.INVALID] == EXIT_CODE[Kind.NOT_FOUND] == EXIT_CODE[Kind.UNREACHABLE] == 2
    assert EXIT_CODE[Kind.NO_ANSWER] == EXIT_CODE[Kind.FAILED] == 1
    assert HTTP_STATUS[Kind.NOT_FOUND] == 404 and HTTP_STATUS[Kind.LIMITED] == 429


@pytest.mark.parametrize("command", ["show", "pause", "resume", "run", "delete"])
async def test_an_unknown_standing_research_exits_2_as_an_unknown_research_does(
    dev_client: Client, subprocess_env: dict[str, str], command: str
) -> None:
    run = await starter("schedule", command, "standing-nosuchone", env=subprocess_env)
    assert run.code == 2, run.err
    assert error_line(run) == "error: no standing research with id standing-nosuchone"
