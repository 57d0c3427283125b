"""`python -m starter`: argument parsing, dispatch, and the one place errors become exit codes.

Exit codes: 0 research completed (or the command did what it said), 1 research cancelled or
failed / Temporal trouble, 2 bad input (unknown id, duplicate id, refused answer, unreachable
Temporal, an unknown stored research), 3 a question waits for an answer and there is no terminal,
130 interrupted (the research keeps running).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from temporalio.service import RPCError, RPCStatusCode

from config import settings
from starter import commands, extract, index, library, progress, prompts, reviews
from starter.progress import say
from starter.terminal import CleanStream
from starter.temporal import CliError, one_line
from workflows.models import Depth, QueryMode

PROG = "python -m starter"

class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not usage + message
        say(f"error: {message} (see `{self.prog} --help`)")
        sys.exit(2)


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description="Start, follow and inspect deep research on Temporal.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("research", help="start a research (attached: live progress, then the report)")
    p.add_argument("question")
    p.add_argument("--depth", choices=[d.value for d in Depth], default=Depth.AUTO.value)
    p.add_argument("--mode", choices=[m.value for m in QueryMode], default=QueryMode.DEEP.value)
    p.add_argument("--max-clarifications", type=int, default=2, metavar="N")
    p.add_argument("--no-reply-shortcut", action="store_true",
                   help="let the LLM judge every reply (the limit is what stops the loop)")
    p.add_argument("--clarification-timeout", type=float, metavar="SECONDS",
                   help="how long a question waits for an answer (default 24 h)")
    p.add_argument("--time-budget", type=float, metavar="SECONDS",
                   help="research time before synthesis (default: the mode's budget)")
    p.add_argument("--id", help="workflow id (default research-<short uuid>)")
    p.add_argument("--detach", action="store_true", help="print the workflow id and exit")
    p.add_argument("--follow-up", metavar="ID",
                   help="a follow-up to research ID: its question, clarifications and report are the conversation")
    p.add_argument("--no-verify", action="store_true",
                   help="skip claim verification and the critic (faster; claims stay unverified)")
    p.add_argument("--review-plan", action="store_true",
                   help="wait for your approval (or revision) of each plan before any step runs")
    p.add_argument("--review-report", choices=["auto", "always", "never"], default="auto",
                   help="wait for your review of the report: when the critic asks (auto), always, or never")
    p.add_argument("--review-timeout", type=float, metavar="SECONDS",
                   help="how long a review waits for you before the plan runs as proposed (default 1 h)")
    p.add_argument("--max-tokens", type=int, metavar="N",
                   help="token budget for the whole research, report and verification included")
    p.add_argument("--max-cost", type=float, metavar="USD",
                   help="cost budget in USD (prices: LLM_PRICES or the built-in table)")
    p.add_argument("--language", default="auto", metavar="CODE",
                   help="the report's language: auto (the question's, default) or a code such as en, de, vi")
    _output_flags(p)
    p.set_defaults(handler=commands.research)

    p = sub.add_parser("answer", help="answer the pending clarification question")
    p.add_argument("id")
    p.add_argument("text")
    p.set_defaults(handler=commands.answer)

    p = sub.add_parser("review", help="answer the pending plan or report review")
    p.add_argument("id")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--approve", action="store_true", help="run the plan / accept the report as it is")
    how.add_argument("--feedback", metavar="TEXT", help="re-plan (or rewrite the report) with this feedback")
    how.add_argument("--steps", metavar="FILE",
                     help="replace the steps not yet done: a JSON list, or one step a line (Title — description)")
    how.add_argument("--cancel", action="store_true", help="cancel the research (it keeps what it had)")
    p.set_defaults(handler=reviews.review)

    p = sub.add_parser("status", help="where a research is now")
    p.add_argument("id")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=commands.status)

    p = sub.add_parser("watch", help="print a research's events as they happen, until it ends")
    p.add_argument("id")
    p.add_argument("--since", type=int, default=0, metavar="N", help="only the events after event N (to resume)")
    p.add_argument("--json", action="store_true", help="one JSON event object per line")
    p.set_defaults(handler=commands.watch)

    p = sub.add_parser("result", help="wait for a research and print its report")
    p.add_argument("id")
    _output_flags(p)
    p.set_defaults(handler=commands.result)

    p = sub.add_parser("list", help="recent research with their stage")
    p.add_argument("--json", action="store_true")
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(handler=commands.list_research)

    p = sub.add_parser("cancel", help="cancel a research (it still returns what it had)")
    p.add_argument("id")
    p.set_defaults(handler=commands.cancel)

    p = sub.add_parser("prompts", help="manage the role prompts in Langfuse")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    push = actions.add_parser("push", help="create or update the prompts in Langfuse from the repository's files")
    push.set_defaults(handler=prompts.push)

    p = sub.add_parser("extract", help="fetch and extract pages (or local files) as a research would read them")
    p.add_argument("inputs", nargs="+", metavar="URL_OR_FILE")
    p.add_argument("--json", action="store_true", help="one JSON object per input per line")
    p.set_defaults(handler=extract.extract)

    p = sub.add_parser("index", help="build or refresh the local search index of a folder of documents now")
    p.add_argument("dir", nargs="?", metavar="DIR", help="the folder (default: RESEARCH_CORPUS_DIR)")
    p.set_defaults(handler=index.index)

    p = sub.add_parser("history", help="finished research from the library, newest first")
    p.add_argument("--json", action="store_true")
    p.add_argument("--filter", metavar="TEXT", help="only research whose question contains TEXT")
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(handler=library.history)

    p = sub.add_parser("show", help="a stored research's report (works after Temporal forgot it)")
    p.add_argument("id")
    _output_flags(p)
    p.set_defaults(handler=library.show)

    p = sub.add_parser("export", help="a standalone report file with its sources (md or html)")
    p.add_argument("id")
    p.add_argument("--format", choices=["md", "html"], required=True)
    p.add_argument("--out", metavar="FILE", help="where to write it (default ID.md / ID.html)")
    p.set_defaults(handler=library.export)

    p = sub.add_parser("mcp", help="serve the research tools over the Model Context Protocol (stdio)")
    p.set_defaults(handler=_serve_mcp)

    return parser


async def _serve_mcp(args: argparse.Namespace, session: commands.Session) -> int:
    """Imported on use: the MCP SDK is not loaded for the other commands."""
    from starter import mcp_server

    return await mcp_server.serve(args, session)


def _output_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--out", metavar="FILE", help="also write the report (or JSON) to FILE")


def run(argv: list[str] | None = None) -> int:
    if not isinstance(sys.stdout, CleanStream):
        sys.stdout, sys.stderr = CleanStream(sys.stdout), CleanStream(sys.stderr)  # type: ignore[assignment]
    args = build_parser().parse_args(argv)
    session: commands.Session | None = None
    try:
        session = commands.Session(settings())
        code = asyncio.run(args.handler(args, session))
    except KeyboardInterrupt:
        code = 130
        wid = session.workflow_id if session else None
        again = (session.reattach if session else None) or (progress.result_command(wid) if wid else None)
        say(f"\ninterrupted: research {wid} keeps running; reattach with `{again}`" if wid else "\ninterrupted")
    except CliError as err:
        say(f"error: {err}")
        code = err.code
    except RPCError as err:
        code = 2 if err.status == RPCStatusCode.NOT_FOUND and getattr(args, "id", None) else 1
        say(f"error: no research with id {args.id}" if code == 2
            else f"error: Temporal: {one_line(err.message)}")
    except Exception as err:  # noqa: BLE001 - the promise is: never a traceback
        say(f"error: {type(err).__name__}: {one_line(str(err))}")
        code = 1
    return code
