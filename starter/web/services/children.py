"""Heavy work of a request in a child process of its own (an export, a citation check): the web
app's threads stay free for everyone else, the child is killed when its client leaves or its time
runs out, and its memory ends with it. The callers (downloads.py, checks.py) say in their own
words what a departed client or a slow child means."""

from __future__ import annotations

import asyncio
import sys

from starlette.requests import Request


class ClientLeft(Exception):
    """The client disconnected before the child finished; the child was killed."""


class TooSlow(Exception):
    """The child did not finish in time; it was killed."""


async def run_child(
    request: Request, args: list[str], payload: bytes, timeout_s: float
) -> tuple[bytes, bytes, int]:
    """`python ARGS` fed PAYLOAD on its standard input: its output, errors and exit code."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    work = asyncio.ensure_future(child.communicate(payload))
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        done, _ = await asyncio.wait(
            {work, gone}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        if not work.done():
            _kill(child)
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
            await child.wait()
        gone.cancel()
        await asyncio.gather(gone, return_exceptions=True)
    if work not in done:
        raise ClientLeft() if gone in done else TooSlow()
    out, err = work.result()
    return out, err, child.returncode if child.returncode is not None else -1


def failure_line(err: bytes, code: int, otherwise: str) -> str:
    """The child's own one-line reason for an expected failure (exit 3 or 4), else OTHERWISE."""
    reason = err.decode("utf-8", "replace").strip().splitlines()
    return reason[-1] if reason and code in (3, 4) else otherwise


async def _disconnected(request: Request) -> None:
    """Returns when the client has gone (its body was already read)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _kill(child: asyncio.subprocess.Process) -> None:
    try:
        child.kill()
    except ProcessLookupError:
        pass
