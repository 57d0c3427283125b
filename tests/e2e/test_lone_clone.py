"""A clone with nothing beside it: what needs ../shared/data says so in one line and moves on.

SHARED_DATA_DIR pointed at a folder that does not exist stands in for a clone from the public host
(tests/support/shared.py); the commands are the ones a user runs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "SHARED_DATA_DIR": str(tmp_path / "nothing-here"),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("report", [[], ["-rs"]])
def test_tests_on_shared_data_skip_at_once_and_the_run_ends_with_why(
    tmp_path: Path, report: list[str]
) -> None:
    run = _run(
        tmp_path,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *report,
        "tests/activities/test_corpus.py",
        "tests/activities/test_extraction.py",
    )
    assert run.returncode == 0, run.stdout[-3000:]
    closing = re.search(
        r"^skipped (\d+): (\d+) need \.\./shared/data \(not in this clone\)$", run.stdout, re.M
    )
    assert closing, run.stdout[-3000:]
    assert closing.group(1) == closing.group(2) and int(closing.group(1)) >= 10
    assert re.search(rf"\b\d+ passed, {closing.group(1)} skipped\b", run.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    ("bench", "needs"),
    [
        ("extraction", "extraction-benchmark"),
        ("retrieval", "corpus/rust-book, {shared}/rust-book-dev-questions.md"),
    ],
)
def test_benches_on_shared_data_skip_with_one_line_and_let_make_bench_go_on(
    tmp_path: Path,
    bench: str,
    needs: str,
) -> None:
    run = _run(tmp_path, "-m", f"bench.{bench}")
    shared = tmp_path / "nothing-here"
    assert (run.returncode, run.stderr) == (0, "")
    assert (
        run.stdout == f"skipped: needs {shared}/{needs.format(shared=shared)} (not in this clone)\n"
    )
