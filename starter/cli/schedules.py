"""`deep-research schedule ...`: standing research from the command line (starter/client/standing.py
does the work). Owner: RESEARCH_USER, as for every research started from this machine."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from starter.cli.exits import EXIT_OK
from starter.cli.hints import program
from starter.cli.progress import say
from starter.client import standing
from starter.client.requests import FLAGS, NAMES
from starter.client.session import Session


def _owner(session: Session) -> str:
    return session.user


async def add(args: argparse.Namespace, session: Session) -> int:
    values = {name: value for name, value in vars(args).items() if name in NAMES}
    standing_id = await standing.create_standing(
        session,
        values,
        names=FLAGS,
        every=args.every,
        cron=args.cron,
        notify=args.notify or [],
        max_runs=args.max_runs,
    )
    if args.json:
        print(json.dumps({"id": standing_id}))
    else:
        print(standing_id)
    say(
        f"standing research {standing_id} created; run it now with "
        f"`{program()} schedule run {standing_id}`"
    )
    return EXIT_OK


async def list_(args: argparse.Namespace, session: Session) -> int:
    client = await session.connect()
    views = await standing.list_standing(client, session.cfg, _owner(session))
    if args.json:
        print(json.dumps([v.model_dump(mode="json") for v in views]))
        return EXIT_OK
    if not views:
        say(f"no standing research (create one with `{program()} schedule add ...`)")
        return EXIT_OK
    rows = [
        (
            v.id,
            f"every {v.every}" if v.every else f"cron {v.cron}",
            "paused" if v.paused else "active",
            _when(v.next_run_at),
            v.last_research_id or "-",
            v.question,
        )
        for v in views
    ]
    header = ("ID", "SCHEDULE", "STATE", "NEXT RUN", "LAST RUN", "QUESTION")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    for row in (header, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths, strict=True)), row[5])
    return EXIT_OK


async def show(args: argparse.Namespace, session: Session) -> int:
    detail = await standing.show(session, args.id)
    if args.json:
        print(json.dumps(detail.model_dump(mode="json")))
        return EXIT_OK
    when = f"every {detail.every}" if detail.every else f"cron {detail.cron}"
    print(f"{detail.id}: {detail.question}")
    print(
        f"  {when}, {'paused' if detail.paused else 'active'}, next run {_when(detail.next_run_at)}"
    )
    for receiver in detail.receivers:
        print(f"  notifies {receiver.url}  signed with {receiver.secret or '(unsigned)'}")
    for run in detail.runs:
        flag = {True: "changed", False: "no changes", None: ""}[run.changed]
        print(f"  {run.research_id}  {run.status:<10} {_when(run.started_at)}  {flag}")
    return EXIT_OK


async def run(args: argparse.Namespace, session: Session) -> int:
    client = await session.connect()
    research_id = await standing.run_now(client, session.cfg, args.id, _owner(session))
    print(research_id)
    say(f"started {research_id}; follow it with `{program()} result {research_id}`")
    return EXIT_OK


async def pause(args: argparse.Namespace, session: Session) -> int:
    await _change(args, session, standing.pause)
    say(f"{args.id} paused (resume it with `{program()} schedule resume {args.id}`)")
    return EXIT_OK


async def resume(args: argparse.Namespace, session: Session) -> int:
    view = await _change(args, session, standing.resume)
    say(f"{args.id} resumed; next run {_when(view.next_run_at)}")
    return EXIT_OK


async def delete(args: argparse.Namespace, session: Session) -> int:
    """At a terminal, asks first (as the web app's Delete does); `--yes`, or a script whose input
    is no terminal, deletes at once."""
    if not getattr(args, "yes", False) and sys.stdin.isatty():
        client = await session.connect()
        view = await standing.view(await standing.owned(client, session.cfg, args.id, session.user))
        asked = f"Delete the standing research {args.id} ({view.question!r})? Its runs stay. [y/N] "
        if input(asked).strip().lower() not in ("y", "yes"):
            say(f"{args.id} kept")
            return EXIT_OK
    await _change(args, session, standing.delete)
    say(f"{args.id} deleted; its runs stay in the library (`{program()} history`)")
    return EXIT_OK


async def _change(args: argparse.Namespace, session: Session, change: Any) -> Any:
    """CHANGE(client, settings, id, owner): the session's user's standing research ARGS.id."""
    return await change(await session.connect(), session.cfg, args.id, _owner(session))


def _when(moment: datetime | None) -> str:
    """A moment as a person reads it: to the minute, in UTC (no microseconds)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else "-"
