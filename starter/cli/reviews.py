"""`python -m starter review ID ...` and the review prompt of an attached `research`.

Both go through the workflow's `review` update, whose validator refuses what a signal would only
record (nothing pending, a decision that is not exactly approve / revise / cancel, bad steps), so
a refusal is reported at once with the workflow's own reason.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from starter.cli import progress
from starter.cli.exits import EXIT_OK
from starter.cli.hints import program
from starter.cli.progress import say
from starter.client import research_client
from starter.client.errors import ClientError, Kind
from starter.client.finding import find_running
from starter.client.research_client import Handle
from starter.client.session import Session
from starter.client.temporal import deliver
from workflows.models import STEP_LIMITS, ResearchResult, ResearchStatus, ReviewTarget

#: The draft report's lines shown where a person decides on it; a longer draft is cut there, with
#: the command that shows it whole (`status ID`).
DRAFT_LINES = 80
_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")


#: `review --steps`'s help: the file's forms and how many steps a plan may have at each depth
#: (the workflow refuses any other count, naming the depth).
STEPS_HELP = (
    "replace the steps not yet done: a JSON list, or one step a line (Title — description); "
    "the plan (steps done plus these) must have "
    + ", ".join(
        f"{low} to {high} steps at {depth.value}" for depth, (low, high) in STEP_LIMITS.items()
    )
    + " depth"
)


async def review(args: argparse.Namespace, session: Session) -> int:
    payload = _payload(args)
    handle = (await find_running(session, args.id)).handle
    assert handle is not None  # find_running found it in Temporal
    print(await deliver(handle, "review", lambda running: research_client.review(running, payload)))
    return EXIT_OK


def _payload(args: argparse.Namespace) -> dict[str, Any]:
    if args.approve:
        return {"decision": "approve"}
    if args.cancel:
        return {"decision": "cancel"}
    if args.steps:
        try:
            text = Path(args.steps).read_text(encoding="utf-8")
        except OSError as err:
            raise ClientError(
                f"cannot read {args.steps}: {err.strerror or err}", Kind.INVALID
            ) from None
        return {"decision": "approve", "steps": parse_steps(text), "feedback": args.feedback or ""}
    return {"decision": "revise", "feedback": args.feedback}


def parse_steps(text: str) -> list[dict[str, str]]:
    """Steps from a JSON list (`[{"title", "description"}]` or strings) or from lines: one step a
    line, list markers allowed, `Title — description` (or ` -- `), `#` lines ignored."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except json.JSONDecodeError as err:
            raise ClientError(
                f"the steps are not valid JSON: {err.msg} (line {err.lineno})", Kind.INVALID
            ) from None
        if not isinstance(items, list):
            raise ClientError("the steps must be a JSON list", Kind.INVALID)
        return [
            {"title": str(i), "description": ""}
            if not isinstance(i, dict)
            else {"title": str(i.get("title", "")), "description": str(i.get("description", ""))}
            for i in items
        ]
    steps = []
    for line in text.splitlines():
        line = _MARKER.sub("", line).strip()
        if not line or line.startswith("#"):
            continue
        parts = re.split(r"\s+(?:—|--)\s+", line, maxsplit=1)
        title, description = parts[0].strip(), (parts[1].strip() if len(parts) > 1 else "")
        steps.append({"title": title, "description": description})
    return steps


def review_command(workflow_id: str) -> str:
    return f"{program()} review {shlex.quote(workflow_id)} (--approve | --feedback TEXT | --steps FILE | --cancel)"


def status_command(workflow_id: str) -> str:
    return f"{program()} status {shlex.quote(workflow_id)}"


def report_under_review(
    workflow_id: str, status: ResearchStatus, limit: int | None = DRAFT_LINES
) -> list[str]:
    """The draft report a person is asked to approve, between marked lines, and the critic's
    verdict on it: the whole draft, or its first LIMIT lines and the command that shows it whole
    (nobody should approve what they were not shown)."""
    lines = (status.draft_report_markdown or "").rstrip().splitlines()
    cut = limit is not None and len(lines) > limit
    out = [
        "",
        f"----- draft report under review ({len(lines)} lines"
        + (f", the first {limit} shown" if cut else "")
        + ") -----",
    ]
    out += lines[:limit] if cut else lines
    if cut:
        out.append(
            f"[... {len(lines) - (limit or 0)} more lines; the whole draft with: {status_command(workflow_id)}]"
        )
    out.append("----- end of the draft -----")
    critique = status.critique
    out.append(
        "the critic: "
        + (
            f"quality {critique.quality:.2f}, hallucination risk {critique.hallucination_risk:.2f}"
            if critique
            else "no verdict"
        )
    )
    for issue in critique.issues if critique else []:
        out.append(f"  - ({issue.severity.value}) {issue.text}")
    if critique and critique.rewrite_suggestion:
        out.append(f"  suggestion: {critique.rewrite_suggestion}")
    return out


def revise_means(status: ResearchStatus) -> str:
    """What revising the pending report does: another round, or (in the last) a final rewrite."""
    most = status.review_rounds_max
    if most and status.review_rounds < most:
        return "a revision is rewritten with your feedback and shown to you again"
    rounds = f"{most} review round{'s' * (most != 1)}" if most else "the review rounds"
    return f"a revision now is final: you are not asked again ({rounds} in all)"


def show_pending(status: ResearchStatus, workflow_id: str = "") -> None:
    """The plan under review, numbered, or the draft report with the critic's verdict on it."""
    if status.pending_review is ReviewTarget.REPORT:
        for line in report_under_review(workflow_id, status):
            say(line)
        say(
            f"report to review ({progress.review_round(status)}"
            + (
                f"; quality {status.critique.quality:.2f}, hallucination risk "
                f"{status.critique.hallucination_risk:.2f}"
                if status.critique
                else ""
            )
            + "):"
        )
        say(f"  {revise_means(status)}")
        return
    plan = status.plan
    if plan is None:
        return
    say(
        f"\nplan to review (iteration {status.plan_iterations}, review round {status.review_rounds}): {plan.title}"
    )
    for i, step in enumerate(plan.steps, start=1):
        about = f" — {step.description}" if step.description else ""
        say(f"  {i}. [{step.status.value}] {step.title}{about}")


async def ask(
    handle: Handle, status: ResearchStatus, result_task: asyncio.Future[ResearchResult]
) -> bool:
    """Prompt until the workflow accepts a review. False at end of input (the research waits)."""
    show_pending(status, handle.id)
    while True:
        options = (
            "approve [a], revise with feedback [f], cancel [c]> "
            if status.pending_review is ReviewTarget.REPORT
            else "approve [a], revise with feedback [f], write the steps yourself [e], cancel [c]> "
        )
        choice = await _line(options, result_task)
        if choice is None:
            say(
                f"\nno review read; the research keeps waiting. Review with: {review_command(handle.id)}"
            )
            return False
        choice = choice.strip().lower() or "a"
        if choice.startswith("a"):
            payload: dict[str, Any] = {"decision": "approve"}
        elif choice.startswith("c"):
            payload = {"decision": "cancel"}
        elif choice.startswith("f"):
            feedback = await _line("feedback> ", result_task)
            if feedback is None:
                continue
            payload = {"decision": "revise", "feedback": feedback}
        elif choice.startswith("e") and status.pending_review is ReviewTarget.PLAN:
            steps = await _edit_steps(status, result_task)
            if steps is None:
                continue
            payload = {"decision": "approve", "steps": steps}
        else:
            continue
        try:
            say(f"  {await research_client.review(handle, payload)}")
            return True
        except ClientError as refused:
            if refused.kind not in (Kind.INVALID, Kind.CONFLICT):
                raise
            say(f"error: {refused}")


async def _line(prompt: str, result_task: asyncio.Future[ResearchResult]) -> str | None:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = progress.read_line()
    either: set[asyncio.Future[Any]] = {line, result_task}
    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    return line.result() if line.done() else None


async def _edit_steps(
    status: ResearchStatus, result_task: asyncio.Future[ResearchResult]
) -> list[dict[str, str]] | None:
    """$EDITOR on the pending steps (one a line, `Title — description`), else line by line."""
    pending = [s for s in (status.plan.steps if status.plan else []) if s.status.value == "pending"]
    editor = os.environ.get("EDITOR")
    if editor:
        with tempfile.NamedTemporaryFile("w+", suffix=".md", delete=False, encoding="utf-8") as f:
            f.write("# One step a line: Title — description. Lines starting with # are ignored.\n")
            f.writelines(
                f"- {s.title}{' — ' + s.description if s.description else ''}\n" for s in pending
            )
        try:
            await asyncio.to_thread(subprocess.run, [*shlex.split(editor), f.name], check=False)
            return parse_steps(Path(f.name).read_text(encoding="utf-8"))
        finally:
            os.unlink(f.name)
    say("type the steps, one a line (Title — description); an empty line ends them")
    steps: list[dict[str, str]] = []
    while (line := await _line("step> ", result_task)) not in (None, ""):
        steps.extend(parse_steps(line))
    return steps or None
