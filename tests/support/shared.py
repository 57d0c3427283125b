"""Where the shared data sits (../shared/data, beside the clone in CI) and how its absence reads.

A clone on its own has no ../shared. Tests and benches whose point is that data (the Rust book's
rankings, the dev set, the extraction benchmark) say so in one line and move on; everything else
uses what the project writes itself (tests/support/corpus.py).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: SHARED_DATA_DIR points elsewhere (or, set to a missing folder, shows what a lone clone does).
SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR") or REPO.parent / "shared" / "data").absolute()
RUST_BOOK = SHARED_DATA / "corpus" / "rust-book"
DEV_SET = SHARED_DATA / "rust-book-dev-questions.md"
EXTRACTION_BENCHMARK = SHARED_DATA / "extraction-benchmark"
#: How every skip for missing shared data is counted at the end of a run, whatever its wording.
SHARED_MISSING = "need ../shared/data (not in this clone)"


def missing(*paths: Path) -> str | None:
    """Why something cannot run without these parts of ../shared/data, or None when all are there."""
    absent = [p for p in paths if not p.exists()]
    if not absent:
        return None
    return f"needs {', '.join(shown(p) for p in absent)} (not in this clone)"


def shown(path: Path) -> str:
    """A shared path as a person reads it: relative to the clone, unless SHARED_DATA_DIR moved it."""
    if os.environ.get("SHARED_DATA_DIR"):
        return str(path)
    return f"../shared/data/{path.relative_to(SHARED_DATA).as_posix()}"


def skip_bench(*paths: Path) -> None:
    """End a bench that only makes sense on shared data with one line and status 0, so `make
    bench` goes on with the next one."""
    if reason := missing(*paths):
        print(f"skipped: {reason}")
        raise SystemExit(0)


def mentions_shared(reason: str) -> bool:
    """Whether a skip's reason is about ../shared, however the test worded it."""
    return any(
        text in reason for text in (str(SHARED_DATA), str(SHARED_DATA.resolve()), "../shared")
    )
