"""The CLI's exit codes, and the one place a `ClientError`'s kind becomes one (and its line, with
the command that follows it).

0 the research completed (or the command did what it said), 1 it failed or no worker answered
in time (try again), 2 the person's input, id or setup cannot be used (fix it first), 3 it waits for the person (a question or a
review), 130 interrupted.
"""

from __future__ import annotations

import shlex

from starter.cli.hints import program
from starter.client.errors import ClientError, Kind

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PENDING = 0, 1, 2, 3

EXIT_CODE: dict[Kind, int] = {
    Kind.INVALID: EXIT_USAGE,
    Kind.NOT_FOUND: EXIT_USAGE,
    Kind.CONFLICT: EXIT_USAGE,
    Kind.LIMITED: EXIT_USAGE,
    Kind.UNREACHABLE: EXIT_USAGE,
    Kind.NO_ANSWER: EXIT_FAILED,
    Kind.FAILED: EXIT_FAILED,
}


def exit_code(err: ClientError) -> int:
    return EXIT_CODE[err.kind]


def error_line(err: ClientError) -> str:
    """The error as the CLI says it: the client's line, and the command that follows what it is
    about, as it runs in this shell (the client names no command of any front end)."""
    if not err.follow:
        return str(err)
    return f"{err} (follow it with `{program()} {shlex.join(err.follow)}`)"
