"""`history`, `show`, `export`, `library rename`: the research library from the terminal, no
Temporal needed.

The library is the database every finished research is written to (storage/), so
these commands work after the Temporal server has forgotten the workflow, and on a machine that
only has the database. They read RESEARCH_USER's research only (another user's is unknown, like
an id that does not exist). `export` writes any of the formats of `starter.exports` (the web app's
downloads: a report, or its references for a reference manager); report files are written without control characters or bidi overrides. A research its
owner renamed (`library rename`, or the web app's library) is listed, shown and exported under
its new title.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TypeVar

from starter.cli.exits import EXIT_OK
from starter.cli.hints import show_command
from starter.cli.progress import say
from starter.client import library
from starter.client.errors import ClientError, Kind
from starter.client.library import stored_research, where
from starter.client.session import Session
from starter.client.temporal import shown
from starter.client.terminal import clean
from starter.exports import FORMATS
from starter.exports import export as export_report
from starter.exports.markup import to_markdown

T = TypeVar("T")
#: `--out -`: standard output.
STDOUT = "-"


async def search(args: argparse.Namespace, session: Session) -> int:
    """`library search TEXT`: `history --filter TEXT` by the name the web library gives it."""
    return await history(argparse.Namespace(**vars(args), filter=args.text), session)


async def history(args: argparse.Namespace, session: Session) -> int:
    url = session.cfg.library.db_url
    # RESEARCH_USER's research only; the question, title, clarification answers and report, as
    # the web library finds
    entries = await library.entries(session, contains=args.filter, limit=args.limit)
    if args.json:
        print(json.dumps([e.model_dump(mode="json") for e in entries], indent=2))
        return EXIT_OK
    if not entries:
        say(
            f"no research stored yet in {where(url)}"
            if not args.filter
            else f"no stored research matches {args.filter!r}"
        )
        return EXIT_OK
    for e in entries:
        checked = (
            f"supported {e.supported}/{e.claims}"
            if e.supported is not None
            else f"{e.claims} claims"
        )
        query = " ".join((e.title or e.query).split())
        print(
            f"{e.finished_at:%Y-%m-%d %H:%M}  {e.workflow_id}  {e.outcome:9}  {e.sources:2} sources  "
            f"{checked:15}  {query[:69] + '…' if len(query) > 70 else query}"
        )
    return EXIT_OK


async def show(args: argparse.Namespace, session: Session) -> int:
    stored = await stored_research(session, args.id, getattr(args, "version", None))
    if len(stored.versions) > 1:  # a report whose sections were revised: which version this is
        latest = stored.versions[-1].version
        say(
            f"version {stored.version} of {latest} of this report"
            + (
                f" (the latest: `{show_command(args.id)}`)"
                if stored.version < latest
                else f" (the one before: `{show_command(args.id, latest - 1)}`)"
            )
        )
    # the report with every source read, cited or not, listed and marked (exports/markup.py)
    text = stored.model_dump_json(indent=2) if args.json else to_markdown(stored.result).rstrip()
    print(text)
    if args.out:
        write_file(Path(args.out), text + ("\n" if args.json else ""))
    return EXIT_OK


async def export(args: argparse.Namespace, session: Session) -> int:
    """The report in ARGS.format, written to --out, else to the file name the export suggests
    (from the title) here; `--out -` writes it to stdout, but never a binary format to a terminal."""
    to_stdout = args.out == STDOUT
    if to_stdout and FORMATS[args.format].binary and sys.stdout.isatty():
        raise ClientError(
            f"{args.format} is binary: not written to a terminal (give --out FILE, "
            "or redirect stdout to a file)",
            Kind.INVALID,
        )
    stored = await stored_research(session, args.id)
    # a reference file dates its web pages by the day the research finished reading them
    accessed = stored.finished_at.date()
    body, _, suggested = await asyncio.to_thread(
        export_report, stored.result, args.format, accessed
    )
    if to_stdout:
        sys.stdout.flush()
        sys.stdout.buffer.write(body)
        sys.stdout.buffer.flush()
        return EXIT_OK
    out = Path(args.out or suggested)
    write_file(out, body)
    print(out)
    return EXIT_OK


async def rename(args: argparse.Namespace, session: Session) -> int:
    """`library rename ID TITLE`: RESEARCH_USER's stored research gets a title of its own (every
    run of it); an empty or too long title, or an unknown id (another user's too), is one line,
    exit 2, like `show`."""
    url = session.cfg.library.db_url
    entry = await library.rename(session, session.user, args.id, args.title)
    if entry is None:
        raise ClientError(
            f"no stored research with id {shown(args.id)} in {where(url)}", Kind.NOT_FOUND
        )
    if args.json:
        print(entry.model_dump_json(indent=2))
    else:
        print(f"renamed {entry.workflow_id}: {entry.title}")
    return EXIT_OK


# --- standalone reports ---------------------------------------------------------------------------


def write_file(path: Path, content: str | bytes) -> None:
    """Write a report (or a result) to PATH; text without control characters or bidi overrides
    (`terminal.clean`: a report quotes the web). Unwritable: one line, exit 2."""
    try:
        if isinstance(content, str):
            path.write_text(clean(content), encoding="utf-8")
        else:
            path.write_bytes(content)
    except OSError as err:
        raise ClientError(f"cannot write {path}: {err.strerror or err}", Kind.INVALID) from None
    say(f"wrote {path}")
