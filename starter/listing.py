"""`list`: recent research from Temporal's visibility, and (`--pending`) what waits for a person.

The stage is the workflow's memo (`stages.enter` writes it at every transition), so listing
needs no query and no worker: a research waiting a week for an answer is found by its memo
alone. Visibility cannot search a memo, so `--pending` reads the running research (at most
PENDING_SCAN, newest first) and keeps those whose stage waits for a person.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
from datetime import datetime
from typing import Any

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from starter.hints import program
from starter.progress import say
from starter.session import Session
from starter.temporal import WORKFLOW_TYPE
from workflows.models import Stage

#: The running research `--pending` looks through, newest first.
PENDING_SCAN = 1000
#: What a research in each waiting stage waits for, as the table says it.
WAITS_FOR = {
    Stage.AWAITING_ANSWER.value: "an answer",
    Stage.AWAITING_PLAN_REVIEW.value: "a plan review",
    Stage.AWAITING_REPORT_REVIEW.value: "a report review",
}
HEADER = ("ID", "STATUS", "STAGE", "STARTED", "SUMMARY")
PENDING_HEADER = ("ID", "WAITS FOR", "STARTED", "SUMMARY")


async def list_research(args: argparse.Namespace, session: Session) -> int:
    client = await session.connect()
    pending = getattr(args, "pending", False)
    query = f"WorkflowType='{WORKFLOW_TYPE}'" + (
        " AND ExecutionStatus='Running'" if pending else ""
    )
    rows = await _rows(client, query, PENDING_SCAN if pending else args.limit)
    if pending:
        rows = [
            {**row, "waits_for": WAITS_FOR[row["stage"]]}
            for row in rows
            if row["stage"] in WAITS_FOR
        ]
        rows = rows[: args.limit]
    summaries = await asyncio.gather(*(_summary(client, row["id"], row["run_id"]) for row in rows))
    for row, summary in zip(rows, summaries, strict=False):
        row["summary"] = summary
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


async def _rows(client: Client, query: str, limit: int) -> list[dict[str, Any]]:
    rows = []
    async for wf in client.list_workflows(query, limit=limit):
        rows.append(
            {
                "id": wf.id,
                "run_id": wf.run_id,
                "status": wf.status.name.lower() if wf.status else "unknown",
                "stage": await _memo_stage(wf),
                "start_time": wf.start_time.isoformat(),
                "close_time": wf.close_time.isoformat() if wf.close_time else None,
            }
        )
    return rows


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


async def _memo_stage(wf: Any) -> str | None:
    try:
        value = await wf.memo_value("stage", None)
    except Exception:  # an undecodable memo must not break the listing
        return None
    return str(value.value if isinstance(value, Stage) else value) if value is not None else None


async def _summary(client: Client, workflow_id: str, run_id: str) -> str | None:
    try:
        desc = await client.get_workflow_handle(workflow_id, run_id=run_id).describe()
        return await desc.static_summary()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
