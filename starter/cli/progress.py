"""What the user sees of a research: the status summary, the commands to run next, the prompt.

The live progress lines are the research's events (starter/cli/stream.py).

Everything here writes to stderr, so stdout carries only the report (or the JSON result).
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import textwrap
import threading

from starter.cli.hints import (  # noqa: F401 (the commands' hints, used as progress.X)
    answer_command,
    program,
    result_command,
    watch_command,
)
from workflows.models import ResearchStatus, ReviewTarget

#: The width every line of the status summary fits (a command is never wrapped: it is pasted).
WIDTH = 80


def say(line: str = "") -> None:
    print(line, file=sys.stderr, flush=True)


def clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def step_line(status: ResearchStatus) -> str | None:
    """`step i/N: title` for the step being worked on, if any."""
    plan = status.plan
    if plan is None or not plan.steps or status.current_step_index >= len(plan.steps):
        return None
    index = max(status.current_step_index, 0)
    return f"step {index + 1}/{len(plan.steps)}: {plan.steps[index].title}"


def review_round(status: ResearchStatus) -> str:
    """The round shown, "review round 2 of 3" ("review round 1" when the research does not say how many)."""
    most = status.review_rounds_max
    return f"review round {status.review_rounds}" + (f" of {most}" if most else "")


def status_summary(workflow_id: str, status: ResearchStatus) -> str:
    """The summary `status` prints, every line but a command within WIDTH columns."""
    lines = [
        f"research {workflow_id}: {status.stage.value}",
        f"  question: {clip(status.query)}",
        f"  depth {status.depth.value}, mode {status.mode.value}, "
        f"stages: {' > '.join(s.value for s in status.stage_history) or '-'}",
    ]
    if status.pending_question:
        lines.append(f"  waiting for an answer: {status.pending_question}")
        lines.append(f"    answer with: {answer_command(workflow_id)}")
    if status.pending_review:
        lines.append(
            f"  waiting for a review of the {status.pending_review.value} ({review_round(status)})"
        )
        lines.append(f"    review with: {program()} review {shlex.quote(workflow_id)} --approve")
        lines.append("    (or --feedback TEXT, --steps FILE or --cancel in place of --approve)")
    if status.plan is not None:
        lines.append(f"  plan (iteration {status.plan_iterations}): {status.plan.title}")
        step = step_line(status)
        if status.pending_review is ReviewTarget.PLAN:  # the plan under review: every step
            lines += [
                f"    {i}. [{s.status.value}] {clip(s.title)}"
                for i, s in enumerate(status.plan.steps, start=1)
            ]
        elif step:
            lines.append(f"  {step}")
        done = sum(1 for s in status.plan.steps if s.status.value in ("completed", "skipped"))
        lines.append(f"  steps done: {done}/{len(status.plan.steps)}")
    lines.append(f"  sources: {status.sources_count}, clarifications: {status.clarification_count}")
    for reflection in status.reflections:
        lines.append(f"  reflection: {reflection.decision.value}: {clip(reflection.reasoning)}")
    for note in status.notes:
        lines.append(f"  note: {clip(note)}")
    return "\n".join(wrapped for line in lines for wrapped in fit(line))


def fit(line: str, width: int = WIDTH) -> list[str]:
    """LINE wrapped to WIDTH columns, continuation lines indented under its text; a line that
    gives a command (`... with: COMMAND`) is kept whole, so it still runs when pasted."""
    if len(line) <= width or " with: " in line:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    return textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False) or [line]


# --- reading an answer without blocking the event loop -----------------------------------------


def read_line() -> asyncio.Future[str | None]:
    """One line from the terminal (None at end of input), read in a daemon thread.

    Not `asyncio.to_thread`: its executor thread would keep the process alive after Ctrl-C until
    the user pressed Enter (and __main__ leaves with os._exit, so a blocked reader never holds
    up the exit). The prompt itself is printed to stderr by the caller, so stdout stays
    the report even when it is redirected.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def deliver(line: str | None) -> None:
        if not future.done():
            future.set_result(line)

    def read() -> None:
        try:
            line: str | None = input()
        except (EOFError, OSError, ValueError):
            line = None
        try:
            loop.call_soon_threadsafe(deliver, line)
        except RuntimeError:  # the loop is gone: nobody wants the line any more
            pass

    threading.Thread(target=read, name="starter-prompt", daemon=True).start()
    return future
