"""`schedule delete` at a terminal asks first, as the web app's Delete does; `--yes`, or a script whose input is no terminal, does not."""

from __future__ import annotations

import asyncio
import os
import pty
import sys

from temporalio.client import Client

from tests.starter.cli.test_starter import REPO, starter

QUESTION = "How do lighthouse lenses focus light over long distances?"


async def at_a_terminal(env: dict[str, str], typed: str, *args: str) -> tuple[int, str]:
    """`python -m starter ARGS` with a terminal for its input, TYPED typed into it."""
    leader, follower = pty.openpty()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "starter", *args, cwd=REPO, env=env, stdin=follower,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    os.close(follower)
    os.write(leader, typed.encode())
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    os.close(leader)
    return proc.returncode or 0, out.decode()


async def listed(env: dict[str, str]) -> list[str]:
    shown = await starter("schedule", "list", env=env)
    return [line.split()[0] for line in shown.out.splitlines()[1:] if line.strip()]


async def test_delete_at_a_terminal_asks_and_keeps_it_unless_told_yes(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    added = await starter("schedule", "add", QUESTION, "--every", "7d", env=subprocess_env)
    assert added.code == 0, added.err
    standing_id = added.out.strip().split()[-1]

    code, out = await at_a_terminal(subprocess_env, "n\n", "schedule", "delete", standing_id)
    assert code == 0 and "Delete the standing research" in out and f"{standing_id} kept" in out
    assert standing_id in await listed(subprocess_env)

    code, out = await at_a_terminal(subprocess_env, "y\n", "schedule", "delete", standing_id)
    assert code == 0 and f"{standing_id} deleted" in out, out
    assert standing_id not in await listed(subprocess_env)


async def test_delete_with_yes_or_from_a_script_does_not_ask(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    ids = []
    for _ in range(2):
        added = await starter("schedule", "add", QUESTION, "--every", "7d", env=subprocess_env)
        ids.append(added.out.strip().split()[-1])
    code, out = await at_a_terminal(subprocess_env, "", "schedule", "delete", ids[0], "--yes")
    scripted = await starter("schedule", "delete", ids[1], env=subprocess_env)
    assert code == 0 and "Delete the standing research" not in out and f"{ids[0]} deleted" in out
    assert scripted.code == 0 and f"{ids[1]} deleted" in scripted.err
