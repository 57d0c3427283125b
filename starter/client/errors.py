"""The one failure every front end shows: what went wrong in one line, and its kind.

The client (this package) says what kind of failure it met; each front end decides once what that
kind means to its audience: the CLI an exit code (`starter/cli/main.py`), the web app an HTTP
status (`starter/web/app.py`), the MCP server a tool error (`starter/mcp/server.py`). So a new
failure is written once, where it is found, and reads the same in all three.
"""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """What the person can do about it, which is what each front end's mapping encodes."""

    #: The input is wrong: say why, and they can fix it (exit 2, HTTP 422).
    INVALID = "invalid"
    #: Nothing by that id is theirs (someone else's looks the same) (exit 2, HTTP 404).
    NOT_FOUND = "not_found"
    #: The thing exists but is not in a state for this (already running, already cancelled)
    #: (exit 2, HTTP 409).
    CONFLICT = "conflict"
    #: A limit of theirs is reached: wait or ask less (exit 2, HTTP 429).
    LIMITED = "limited"
    #: What the command needs is not there: Temporal, the library, Langfuse cannot be reached;
    #: start it or fix the setting (exit 2, HTTP 503).
    UNREACHABLE = "unreachable"
    #: Asked, but no worker answered in time: it may be busy; try again (exit 1, HTTP 503).
    NO_ANSWER = "no_answer"
    #: The research itself failed (exit 1, HTTP 502).
    FAILED = "failed"


class ClientError(Exception):
    """A failure a person can cause or meet, worded for them: never a traceback."""

    def __init__(
        self,
        message: str,
        kind: Kind,
        retry_after_s: float | None = None,
        *,
        follow: tuple[str, ...] | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        #: For `LIMITED`: when it is worth trying again (the web app's Retry-After).
        self.retry_after_s = retry_after_s
        #: What follows the thing this is about, as a command's words (`("result", ID)`): a front
        #: end with commands names it in its own way (the CLI's hint); the others need not.
        self.follow = follow
