"""The program name in every command the starter prints: a hint must run when pasted into the
shell that ran the starter, whether or not the virtualenv is active.

`deep-research` when that name on PATH is this installation's console script (the virtualenv is
active, or it was installed on PATH); else the console script by its absolute path, beside this
interpreter; else (no console script installed) this interpreter's absolute path with `-m starter`.
`python -m starter` alone would fail in a shell without the virtualenv (no `python`, or one
without temporalio).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

SCRIPT = "deep-research"


def program() -> str:
    """How to run the starter from the current shell, quoted for it."""
    # Not resolved: a virtualenv's python is a symlink out of it, and the script sits beside the link.
    beside = Path(sys.executable).parent / SCRIPT
    if not beside.is_file():
        return f"{shlex.quote(sys.executable)} -m starter"
    found = shutil.which(SCRIPT)
    if found and _same(Path(found), beside):
        return SCRIPT
    return shlex.quote(str(beside))


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


# --- the commands a hint names ------------------------------------------------------------------


def answer_command(workflow_id: str) -> str:
    return f'{program()} answer {shlex.quote(workflow_id)} "<your answer>"'


def result_command(workflow_id: str) -> str:
    return f"{program()} result {shlex.quote(workflow_id)}"


def watch_command(workflow_id: str, since: int = 0) -> str:
    return f"{program()} watch {shlex.quote(workflow_id)}" + (f" --since {since}" if since else "")


def show_command(research_id: str, version: int | None = None) -> str:
    """The command that prints the stored report (at VERSION)."""
    return f"{program()} show {shlex.quote(research_id)}" + (
        f" --version {version}" if version else ""
    )
