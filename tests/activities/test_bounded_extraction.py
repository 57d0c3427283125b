"""A hostile document costs its page, never the worker: extraction in child processes with limits."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from activities.web.bounded import ExtractionLimit, ExtractionPool, Limits
from tests.conftest import REPO
from tests.support import hostile_pdf

MIB = 1024 * 1024


@pytest_asyncio.fixture
async def pool() -> AsyncIterator[ExtractionPool]:
    bounded = ExtractionPool(Limits(memory_mb=1024, timeout_s=15.0, processes=2))
    yield bounded
    bounded.close()


async def test_a_pdf_that_inflates_past_the_memory_limit_costs_that_page_only(
    pool: ExtractionPool,
) -> None:
    bomb = hostile_pdf.inflating(100)  # ~350 KiB on the wire, > 1 GiB to read
    assert len(bomb) < MIB
    with pytest.raises(ExtractionLimit, match="1024 MiB"):
        await pool.extract(bomb, "application/pdf", None, None)
    after = await pool.extract(hostile_pdf.normal(), "application/pdf", None, None)
    assert "Ownership rules" in after.text  # a new child took over


@pytest.mark.parametrize("make", [hostile_pdf.page_tree_loop, hostile_pdf.deep_nesting])
async def test_loops_and_deep_nesting_end_in_an_answer(pool: ExtractionPool, make: object) -> None:
    try:
        await pool.extract(make(), "application/pdf", None, None)  # type: ignore[operator]
    except ValueError as err:  # unreadable is an answer too; a hang or a crash is not
        assert str(err)


async def test_a_document_that_takes_too_long_is_abandoned() -> None:
    slow = ExtractionPool(Limits(memory_mb=2048, timeout_s=0.3, processes=1))
    try:
        started = time.monotonic()
        with pytest.raises(ExtractionLimit, match="longer than 0.3 s"):
            await slow.extract(hostile_pdf.inflating(60), "application/pdf", None, None)
        assert time.monotonic() - started < 3
        assert (
            "Ownership"
            in (await slow.extract(hostile_pdf.normal(), "application/pdf", None, None)).text
        )
    finally:
        slow.close()


async def test_cancelling_the_read_kills_the_work(pool: ExtractionPool) -> None:
    read = asyncio.ensure_future(
        pool.extract(hostile_pdf.inflating(60), "application/pdf", None, None)
    )
    await asyncio.sleep(0.3)
    read.cancel()
    with pytest.raises(asyncio.CancelledError):
        await read
    started = time.monotonic()
    await pool.extract(hostile_pdf.normal(), "application/pdf", None, None)
    assert time.monotonic() - started < 5


def test_starter_extract_on_a_pdf_bomb_fails_in_one_line_with_bounded_memory(
    tmp_path: Path,
) -> None:
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(hostile_pdf.inflating(100))
    normal = tmp_path / "normal.pdf"
    normal.write_bytes(hostile_pdf.normal())
    # A fresh interpreter runs the starter and reports the peak RSS of everything it waited for.
    probe = (
        "import resource, subprocess, sys\n"
        f"run = subprocess.run([sys.executable, '-m', 'starter', 'extract', {str(bomb)!r}, {str(normal)!r}],"
        f" cwd={str(REPO)!r}, capture_output=True, text=True)\n"
        "print(run.returncode); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n"
        "sys.stderr.write(run.stderr); sys.stdout.write(run.stdout)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    code, peak_mib, *printed = out.stdout.splitlines()
    errors = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    print(f"starter extract on a 100 MiB PDF bomb: peak RSS {peak_mib} MiB")
    assert code == "1" and "Traceback" not in out.stderr
    assert len(errors) == 1 and "1024 MiB" in errors[0]
    assert any("Ownership rules" in line for line in printed)  # the next input was still read
    assert int(peak_mib) < 1300


def test_a_child_runs_any_module_level_function_and_says_why_it_failed() -> None:
    one = ExtractionPool(Limits(memory_mb=1024, timeout_s=15.0, processes=1))
    try:
        assert one.run_now(int, "42") == 42
        with pytest.raises(ValueError, match="invalid literal"):
            one.run_now(int, "forty-two")
        assert one.run_now(len, "still here") == 10  # the same child goes on
    finally:
        one.close()
