"""`python -m starter.web.services.check_child`: one `POST /api/check` in a process of its own, so the web
app (starter/web/services/checks.py) can bound it in time and memory and kill it when the client leaves.

Reads a pickle of `(request as JSON, Settings, owner, named sources)` on stdin (the app's own
settings: its crawl rules and its model; an owner and the sources named on the Check citations
page, or None and [] for the API; a pipe, never argv or the environment, so no key shows in `ps`); writes the check's
JSON object to stdout. A refused check (a `ClientError`, INVALID) exits 3 with its one line on stderr; one that
needs more memory than MEMORY_MB exits 4. The process lowers its own priority, so pages and the API
of the app that started it come first: aligning claims is CPU work, and in a thread of the app it
held the GIL that every other request needs (another user's library took 187 s).
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import sys

MEMORY_MB = 1024


def _limit() -> None:
    try:
        os.nice(10)
    except OSError:
        pass
    try:
        import resource

        limit = MEMORY_MB * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)  # kept: extraction children set theirs
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass


def main() -> int:
    _limit()
    from starter.client.citations_check import CheckRequest, check_request
    from starter.client.errors import ClientError, Kind

    raw, cfg, owner, named = pickle.loads(sys.stdin.buffer.read())  # noqa: S301 - the app's own
    try:
        request = CheckRequest.model_validate_json(raw)
        result = asyncio.run(check_request(request, cfg, owner, named))
    except ClientError as err:
        print(" ".join(str(err).split())[:300], file=sys.stderr)
        return 3 if err.kind is Kind.INVALID else 1
    except MemoryError:
        print(f"the check needs more than {MEMORY_MB} MB: check fewer sources", file=sys.stderr)
        return 4
    sys.stdout.buffer.write(json.dumps(result).encode())
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
