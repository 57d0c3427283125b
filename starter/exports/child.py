"""`python -m starter.exports.child FORMAT [ACCESSED]`: one export in a process of its own, for the web app's
downloads (starter/web/services/downloads.py), which can then bound it in time and memory and kill it when
the person who asked has left.

Reads a `ResearchResult` as JSON on stdin (ACCESSED, an ISO date, dates the web pages of a
reference file); writes to stdout a 4-byte big-endian length, that many
bytes of JSON header (`{"content_type", "name"}`), then the file. A refused report (ValueError)
exits 3 with its one line on stderr. The process lowers its own priority, so pages and the API of
the server that started it come first, and caps its address space at MEMORY_MB.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import date

MEMORY_MB = 1536


def _limit() -> None:
    try:
        os.nice(10)
    except OSError:
        pass
    try:
        import resource

        limit = MEMORY_MB * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass


def main(argv: list[str]) -> int:
    _limit()
    from starter.exports import export
    from workflows.models import ResearchResult

    fmt = argv[0] if argv else ""
    try:
        accessed = date.fromisoformat(argv[1]) if len(argv) > 1 else None
        result = ResearchResult.model_validate_json(sys.stdin.buffer.read())
        body, content_type, name = export(result, fmt, accessed)
    except ValueError as err:
        print(" ".join(str(err).split())[:300], file=sys.stderr)
        return 3
    except MemoryError:
        print("the report needs more memory than a download may use", file=sys.stderr)
        return 4
    header = json.dumps({"content_type": content_type, "name": name}).encode()
    out = sys.stdout.buffer
    out.write(len(header).to_bytes(4, "big") + header)
    out.write(body)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
