"""The CLI run as a person runs it, in a child process the test reads while it runs.

A test that fails (or times out) half-way through reading a child used to leave the process
running into the next tests, on a busy machine too. `cli` always ends the
child and waits for it, however the test ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def cli(
    *args: str, env: dict[str, str], stdin: Any = asyncio.subprocess.DEVNULL
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`python -m starter ARGS...` with its output piped; killed and reaped on the way out."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starter",
        *args,
        cwd=REPO,
        env=env,
        stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.communicate()
