"""`list`: the person's research, running and stored, and (`--pending`) what waits for a person.

The list is the client's one list of a person's research (`starter.client.mine.my_research`, as
the web app and the MCP server show it): Temporal's, with the stage its memo keeps (so listing
needs no query and no worker: a research waiting a week for an answer is found by its memo alone),
merged with the library's, which keeps finished research after Temporal forgot it. Visibility
cannot search a memo, so `--pending` reads the running research (at most PENDING_SCAN, newest
first) and keeps those whose stage waits for a person.
"""

from __future__ import annotations

import argparse
import json
import shlex
from datetime import datetime
from typing import Any

from starter.cli.hints import program
from starter.cli.progress import say
from starter.client import mine
from starter.client.session import Session
from workflows.models import Stage
from workflows.record import WAITING

#: The running research `--pending` looks through, newest first.
PENDING_SCAN = 1000
#: What a research in each waiting stage waits for, as the table says it (workflows/record.WAITING).
WAITS_FOR = {stage.value: waiting.words for stage, waiting in WAITING.items()}
HEADER = ("ID", "STATUS", "STAGE", "STARTED", "SUMMARY")
PENDING_HEADER = ("ID", "WAITS FOR", "STARTED", "SUMMARY")


async def list_research(args: argparse.Namespace, session: Session) -> int:
    pending = getattr(args, "pending", False)
    listed = await mine.my_research(  # RESEARCH_USER's, as every command reads
        session, limit=PENDING_SCAN if pending else args.limit, running_only=pending
    )
    if pending:
        listed = [item for item in listed if item.stage in WAITS_FOR][: args.limit]
    rows = [_row(item) for item in listed]
    for row, item, summary in zip(rows, listed, await mine.summaries(session, listed), strict=True):
        # one only the library keeps has no line in Temporal's Web UI: its title or question
        row["summary"] = summary or item.title or item.question
        if pending:
            row["waits_for"] = WAITS_FOR[str(item.stage)]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        say("nothing waits for a person" if pending else "no research yet")
    elif pending:
        _table(
            PENDING_HEADER,
            [(r["id"], r["waits_for"], _started(r), r["summary"] or "") for r in rows],
        )
        _how_to_answer(rows)
    else:
        _table(
            HEADER,
            [
                (r["id"], r["status"], r["stage"] or "-", _started(r), r["summary"] or "")
                for r in rows
            ],
        )
    return 0


def _row(item: mine.ListedResearch) -> dict[str, Any]:
    """The client's list row, as `list --json` has always printed it."""
    return {
        "id": item.id,
        "run_id": item.run_id,
        "status": item.status,
        "stage": item.stage,
        "start_time": item.started_at.isoformat(),
        "close_time": item.closed_at.isoformat() if item.closed_at else None,
    }


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """Columns as wide as their widest cell (the last one, the summary, left ragged)."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        print(
            "  ".join(f"{cell:<{width}}" for cell, width in zip(row, widths, strict=False))
            + f"  {row[-1]}"
        )


def _how_to_answer(rows: list[dict[str, Any]]) -> None:
    """The commands that answer what the listed research wait for, once per kind."""
    kinds = {row["waits_for"] for row in rows}
    say()
    if WAITS_FOR[Stage.AWAITING_ANSWER.value] in kinds:
        say(f'answer with:  {program()} answer ID "<your answer>"')
    if kinds - {WAITS_FOR[Stage.AWAITING_ANSWER.value]}:
        say(
            f"review with:  {program()} review ID --approve   (or --feedback TEXT, --steps FILE, --cancel)"
        )
    first = shlex.quote(rows[0]["id"])
    say(
        f"see what one waits for (the question, the plan or the draft report):  {program()} status {first}"
    )


def _started(row: dict[str, Any]) -> str:
    return datetime.fromisoformat(row["start_time"]).astimezone().strftime("%Y-%m-%d %H:%M")
