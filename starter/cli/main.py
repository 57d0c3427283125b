"""`python -m starter`: argument parsing, dispatch, and the one place errors become exit codes.

The commands and their arguments are one table, `COMMANDS`; the `research` command's request
options are `starter.client.requests.OPTIONS`, with types, choices and defaults from the request model.

Exit codes: 0 research completed (or the command did what it said), 1 research cancelled or
failed / Temporal trouble, 2 bad input (unknown, empty or malformed id, duplicate id, refused
answer, unreachable Temporal, an unknown stored research), 3 a question waits for an answer and
there is no terminal, 130 interrupted (the research keeps running).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Coroutine
from importlib import metadata
from typing import Any

from settings import settings
from starter.cli import (
    check,
    commands,
    extract,
    index,
    library,
    listing,
    progress,
    prompts,
    reviews,
    revise,
    schedules,
)
from starter.cli.exits import error_line, exit_code
from starter.cli.hints import SCRIPT
from starter.cli.parsing import Command, Parser, add_commands, arg, request_arg
from starter.cli.progress import say
from starter.client import requests
from starter.client.errors import ClientError
from starter.client.session import Session
from starter.client.temporal import one_line
from starter.client.terminal import CleanStream
from starter.exports import FORMATS
from telemetry import traces

#: The distribution whose version `--version` prints (pyproject.toml).
DISTRIBUTION = "deep-research"


async def _serve_mcp(args: argparse.Namespace, session: Session) -> int:
    """Imported on use: the MCP SDK is not loaded for the other commands."""
    from starter.mcp import server as mcp_server

    return await mcp_server.serve(args, session)


def _serve_web(args: argparse.Namespace, session: Session) -> int:
    """Imported on use: the web app's libraries are not loaded for the other commands. Plain, not
    async: uvicorn runs its own event loop."""
    from starter.web.serve import serve

    return serve(args.host, args.port, session.cfg)


ID = arg("id", help="the research id (as `research` printed it, or `list` shows it)")
JSON = arg("--json", action="store_true", help="print JSON instead of text")
STANDING = arg("id", help="the standing research's id (as `schedule add` printed it)")
LIMIT = arg(
    "--limit", type=int, default=20, metavar="N", help="show at most N research (default 20)"
)
OUTPUT = (
    arg("--json", action="store_true", help="print the result as one JSON object"),
    arg("--out", metavar="FILE", help="also write the report (or JSON) to FILE"),
)

COMMANDS: tuple[Command, ...] = (
    Command(
        "research",
        "start a research (attached: live progress, then the report)",
        commands.research,
        (
            arg("question", help="what to research, in quotes"),
            *(request_arg(option) for option in requests.OPTIONS),
            arg("--id", help="workflow id (default research-<short uuid>)"),
            arg("--detach", action="store_true", help="print the workflow id and exit"),
            *OUTPUT,
        ),
    ),
    Command(
        "answer",
        "answer the pending clarification question",
        commands.answer,
        (ID, arg("text", help="your answer, in quotes")),
    ),
    Command(
        "review",
        "answer the pending plan or report review",
        reviews.review,
        (ID,),
        one_of=(
            arg("--approve", action="store_true", help="run the plan / accept the report as it is"),
            arg(
                "--feedback",
                metavar="TEXT",
                help="re-plan (or rewrite the report) with this feedback",
            ),
            arg("--steps", metavar="FILE", help=reviews.STEPS_HELP),
            arg("--cancel", action="store_true", help="cancel the research (it keeps what it had)"),
        ),
    ),
    Command("status", "where a research is now", commands.status, (ID, JSON)),
    Command(
        "watch",
        "print a research's events as they happen, until it ends",
        commands.watch,
        (
            ID,
            arg(
                "--since",
                type=int,
                default=0,
                metavar="N",
                help="only the events after event N (to resume)",
            ),
            arg("--json", action="store_true", help="one JSON event object per line"),
        ),
    ),
    Command("result", "wait for a research and print its report", commands.result, (ID, *OUTPUT)),
    Command(
        "list",
        "recent research with their stage",
        listing.list_research,
        (
            JSON,
            LIMIT,
            arg(
                "--pending",
                action="store_true",
                help="only research waiting for a person (an answer or a review)",
            ),
        ),
    ),
    Command("cancel", "cancel a research (it still returns what it had)", commands.cancel, (ID,)),
    Command(
        "prompts",
        "manage the role prompts in Langfuse",
        actions=(
            Command(
                "push",
                "create or update the prompts in Langfuse from the repository's files",
                prompts.push,
            ),
        ),
    ),
    Command(
        "extract",
        "fetch and extract pages (or local files) as a research would read them",
        extract.extract,
        (
            arg(
                "inputs",
                nargs="+",
                metavar="URL_OR_FILE",
                help="http(s) URLs or local files (HTML, PDF, Word, Markdown, text)",
            ),
            arg("--json", action="store_true", help="one JSON object per input per line"),
        ),
    ),
    Command(
        "check",
        "check a text's citations [n] against its sources (no Temporal needed)",
        check.check,
        (
            arg("file", metavar="FILE", help="the text (Markdown; - reads standard input)"),
            arg(
                "--source",
                action="append",
                default=[],
                metavar="N=PATH_OR_URL",
                help="source [N] (repeatable; default: the text's own `[n] Title - URL` lines)",
            ),
            arg("--json", action="store_true", help="print the result as one JSON object"),
        ),
    ),
    Command(
        "index",
        "build or refresh the local search index of a folder of documents now",
        index.index,
        (arg("dir", nargs="?", metavar="DIR", help="the folder (default: RESEARCH_CORPUS_DIR)"),),
    ),
    Command(
        "history",
        "finished research from the library, newest first",
        library.history,
        (
            JSON,
            arg(
                "--filter",
                metavar="TEXT",
                help="only research that TEXT finds, as the web library's search does: in its "
                "question, title, clarifications or report",
            ),
            LIMIT,
        ),
    ),
    Command(
        "show",
        "a stored research's report (works after Temporal forgot it)",
        library.show,
        (
            ID,
            *OUTPUT,
            arg(
                "--version",
                type=int,
                metavar="N",
                help="an earlier version of a report whose sections were revised "
                "(1: as the research wrote it; default the latest)",
            ),
        ),
    ),
    Command(
        "revise",
        "rewrite one section of a finished report with your feedback (the rest stays as it is)",
        revise.revise,
        (
            ID,
            arg("--section", type=int, required=True, metavar="N", help=revise.SECTION_HELP),
            arg("feedback", help="what the section should change, in quotes"),
            arg("--json", action="store_true", help="print what the revision did as JSON"),
        ),
    ),
    Command(
        "export",
        "a report file with its sources (Markdown, HTML, Word or PDF), or its references "
        "(BibTeX, RIS, CSL-JSON)",
        library.export,
        (
            ID,
            arg("--format", choices=list(FORMATS), required=True, help="the file's format"),
            arg(
                "--out",
                metavar="FILE",
                help="where to write it (default: a file named after the title, here; "
                "- for stdout, not docx or pdf on a terminal)",
            ),
        ),
    ),
    Command(
        "library",
        "the research library: search it, rename a stored research",
        actions=(
            Command(
                "search",
                "stored research that TEXT finds in its question, title, clarifications or "
                "report (what the web library's search finds)",
                library.search,
                (arg("text", help="what to look for, in quotes"), JSON, LIMIT),
            ),
            Command(
                "rename",
                "give a stored research a title of your own (listed, shown and exported under it)",
                library.rename,
                (ID, arg("title", help="the new title, in quotes (1 to 200 characters)"), JSON),
            ),
        ),
    ),
    Command(
        "schedule",
        "standing research: a question researched again on a schedule",
        actions=(
            Command(
                "add",
                "research QUESTION on a schedule; each run says what changed since the last",
                schedules.add,
                (
                    arg("question", help="what to research, in quotes"),
                    *(request_arg(option) for option in requests.OPTIONS),
                    arg("--notify", action="append", metavar="URL", help="a webhook of its own"),
                    arg("--max-runs", type=int, metavar="N", help="stop after N scheduled runs"),
                    JSON,
                ),
                one_of=(
                    arg("--every", metavar="DURATION", help="e.g. 12h, 1d, 7d"),
                    arg("--cron", metavar="EXPR", help="e.g. '0 8 * * 1' (UTC)"),
                ),
            ),
            Command("list", "your standing research", schedules.list_, (JSON,)),
            Command("show", "a standing research with its runs", schedules.show, (STANDING, JSON)),
            Command("run", "run it now (prints the run's research id)", schedules.run, (STANDING,)),
            Command("pause", "pause its schedule", schedules.pause, (STANDING,)),
            Command("resume", "resume its schedule", schedules.resume, (STANDING,)),
            Command(
                "delete",
                "stop it for good (its runs stay); asks first at a terminal",
                schedules.delete,
                (
                    STANDING,
                    arg("--yes", action="store_true", help="delete without asking first"),
                ),
            ),
        ),
    ),
    Command("mcp", "serve the research tools over the Model Context Protocol (stdio)", _serve_mcp),
    Command(
        "serve",
        "serve the web app and its HTTP API",
        _serve_web,
        (
            arg(
                "--host",
                default="127.0.0.1",
                help="address to listen on (default 127.0.0.1; any other needs RESEARCH_API_TOKENS)",
            ),
            arg("--port", type=int, default=8000, help="port to listen on (default 8000)"),
        ),
    ),
)


def build_parser() -> Parser:
    parser = Parser(prog=SCRIPT, description="Start, follow and inspect deep research on Temporal.")
    parser.add_argument(
        "--version",
        action="version",
        version=f"{DISTRIBUTION} {version()}",
        help="print the installed version and exit",
    )
    add_commands(parser, COMMANDS, dest="command", metavar="COMMAND")
    return parser


def version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed: run `make setup`)"


def run(argv: list[str] | None = None) -> int:
    if not isinstance(sys.stdout, CleanStream):
        sys.stdout, sys.stderr = CleanStream(sys.stdout), CleanStream(sys.stderr)
    args = build_parser().parse_args(argv)
    session: Session | None = None
    try:
        _check_ids(args)
        session = Session(settings())
        _traced(args.command)
        outcome: Coroutine[Any, Any, int] | int = args.handler(args, session)
        code = asyncio.run(outcome) if not isinstance(outcome, int) else outcome
    except BrokenPipeError:  # `... | head` stopped reading: leave quietly, as `cat` does
        code = quiet_broken_pipe()
    except KeyboardInterrupt:
        code = 130
        wid = session.workflow_id if session else None
        again = (session.reattach if session else None) or (
            progress.result_command(wid) if wid else None
        )
        starting = session.starting if session and not wid else None
        say(
            f"\ninterrupted: research {wid} keeps running; reattach with `{again}`"
            if wid
            else f"\ninterrupted while research {starting} was starting: it may have started; "
            f"see `{progress.result_command(starting)}`"
            if starting
            else "\ninterrupted"
        )
    except ClientError as err:
        say(f"error: {error_line(err)}")
        code = exit_code(err)
    except Exception as err:  # noqa: BLE001 - the promise is: never a traceback
        say(f"error: {type(err).__name__}: {one_line(str(err))}")
        code = 1
    finally:
        traces.flush()  # the start's span leaves before `python -m starter` exits (os._exit)
    return code


def _traced(command: str) -> None:
    """Traces on when OTEL_EXPORTER_OTLP_ENDPOINT is set, as the web app and the worker have them
    (telemetry/traces.py): a research started here is one trace, from this start (its
    `StartWorkflow` span) through the workflow to its activities. `serve` names itself."""
    if command != "serve":
        traces.configure("deep-research-mcp" if command == "mcp" else "deep-research-cli")


def quiet_broken_pipe() -> int:
    """128 + SIGPIPE, the status a shell shows for `cat` in the same place; what is still buffered
    for the closed pipe goes to /dev/null, so the final flush cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 128 + signal.SIGPIPE


def _check_ids(args: argparse.Namespace) -> None:
    """A research id given (`ID`, `research --id`) is one (`requests.research_id`): empty or
    malformed is bad input, exit 2, before anything connects. (`--follow-up` is the request's.)"""
    if getattr(args, "id", None) is not None:
        args.id = requests.research_id(
            args.id, "--id" if args.command == "research" else "the research id"
        )
