"""`python -m starter mcp`: the research assistant as Model Context Protocol tools, over stdio.

An agent or editor (any MCP client) starts a research, follows it, answers its clarification
question or its review, and reads the report, with the same rules as the CLI, because the tools
are the starter's own commands underneath: the request is built and validated by
`starter.client.requests` (the `research` tool's arguments are its OPTIONS marked `mcp`), answers go
through the validating `answer_clarification` and `review` updates, progress is the research's
event stream, reports come from Temporal or the research library.

- Tools: `research` (the fields of the web API's `POST /api/research`), `research_status`,
  `answer_clarification`, `review`; `list_research` (the person's research, running and stored,
  as the CLI's `list` and the web app list them), `get_report`, `search_library`,
  `rename_research` (starter/mcp/library.py); `check_claims` (starter/mcp/check.py);
  `get_report`'s `format` (bib, ris, csl, html) gives a text export instead of the report (the
  CLI's `export --format`). A tool that cannot do what was asked returns an MCP tool
  error (`isError`) whose text is one line saying why, e.g. `answer refused: no clarification
  question is pending`; an id or other input shown back in it is cut to a hundred characters, and
  an id longer than ID_MAX_CHARS is refused.
- Research started here belongs to RESEARCH_USER, as from the CLI, and only RESEARCH_USER's is
  read or steered: another user's is unknown, like an id that does not exist (the client's
  `find`). Questions, answers and reviews are sent, and
  reports returned, without control characters or bidi overrides.
- Resources: `research://ID/report`, the stored report (markdown) of every research in the
  library; the newest 50 are listed.
- `wait: true` follows the research's events and sends each as an MCP progress notification
  (`progress` = the event's seq, `message` = its text) until the report is ready, a person is
  needed (the question or the review is returned, with the tool that answers it), or MAX_WAIT_S
  pass (then the id, to wait again with `research_status` or `get_report`).

Nothing is printed on stdout but the protocol: the starter's progress lines go to stderr."""

from __future__ import annotations

import argparse
import asyncio
import difflib
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import Resource
from pydantic import ValidationError

from starter.client import library, research_client
from starter.client.events import EventStream
from starter.client.finding import find_running
from starter.client.requests import OPTIONS, QUESTION, choices, default, research_id
from starter.client.session import Session
from starter.client.temporal import deliver, one_line, shown
from starter.mcp import check as mcp_check
from starter.mcp import library as mcp_library
from starter.mcp import revisions as mcp_revisions
from starter.mcp import standing as mcp_standing
from starter.mcp.errors import one_line_errors
from starter.mcp.shapes import report_shape, status_shape
from workflows.models import ResearchRequest, ResearchResult

#: The longest one tool call waits for a research before it returns the id to wait again with.
MAX_WAIT_S = 900.0
#: Stored reports listed as resources (all of them can be read by URI).
LISTED_REPORTS = 50

INSTRUCTIONS = """\
Deep research with cited, verified reports. Call `research` with a question (wait=true to get the
report in the same call). If it returns status `awaiting_answer`, ask the user the question and call
`answer_clarification`; if `awaiting_review`, show the plan (or the draft report and the critique)
and call `review`. Pass attended=true to `research` only when the user is there to review a report.
Reports of finished research are resources research://ID/report; `search_library` finds them."""


class ResearchServer(MCPServer):
    """MCPServer whose resource list is the research library's newest reports (read through the
    `research://{id}/report` template; a library of thousands is not listed whole)."""

    def __init__(self, session: Session) -> None:
        super().__init__("deep-research", instructions=INSTRUCTIONS, log_level="WARNING")
        self.session = session

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Arguments the schema refuses are one line too (the SDK's text is pydantic's, multi-line).
        An argument the tool does not take is refused by name, as the HTTP API refuses it (422),
        never dropped: `{"dept": "extended"}` would otherwise run at the default depth."""
        unknown = _unknown_arguments(self._tool_input_schema(name), arguments)
        if unknown:
            raise ToolError(unknown)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as err:
            if not isinstance(err.__cause__, ValidationError):
                raise
            first = err.__cause__.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "arguments"
            raise ToolError(f"invalid {shown(where)}: {one_line(first['msg'])}") from err.__cause__

    async def list_resources(self) -> list[Resource]:
        try:
            entries = await library.entries(self.session, limit=LISTED_REPORTS, about=False)
        except Exception:  # noqa: BLE001 - an unreadable library lists nothing; reading says why
            entries = []
        return [
            *await super().list_resources(),
            *(
                Resource(
                    uri=f"research://{e.workflow_id}/report",
                    name=e.workflow_id,
                    title=one_line(e.query, 120),
                    description=f"{e.outcome}, {e.sources} sources, finished {e.finished_at:%Y-%m-%d %H:%M}",
                    mime_type="text/markdown",
                )
                for e in entries
            ),
        ]


def _unknown_arguments(schema: dict[str, Any] | None, arguments: dict[str, Any]) -> str | None:
    """One line naming the first argument the tool's schema does not list (and the one meant)."""
    known = list((schema or {}).get("properties", {}))
    extra = [a for a in arguments or {} if a not in known]
    if schema is None or not extra:
        return None
    close = difflib.get_close_matches(extra[0], known, n=1)
    hint = f" (did you mean {shown(close[0])}?)" if close else f" (it takes {', '.join(known)})"
    return f"invalid {shown(extra[0])}: unknown argument{hint}"


def build_server(session: Session) -> ResearchServer:
    server = ResearchServer(session)
    server.tool()(research_tool(session))
    _add_following_tools(server, session)
    mcp_library.add_library_tools(server, session, one_line_errors)
    mcp_standing.add_standing_tools(server, session, one_line_errors)
    mcp_check.add_check_tool(server, session, one_line_errors)
    mcp_revisions.add_revision_tool(server, session, one_line_errors)
    return server


def research_tool(session: Session) -> Callable[..., Awaitable[dict[str, Any]]]:
    """The `research` tool. Its arguments are the question, the request options whose row in
    `starter.client.requests.OPTIONS` says `mcp`, typed and defaulted by the model, and `wait`."""

    async def research(
        ctx: Context, wait: bool = False, attended: bool = False, **values: Any
    ) -> dict[str, Any]:
        """Start a deep research on QUESTION. Returns its id; with wait=true, waits for the cited
        report (with its sources), or returns the clarification question or the review it needs.
        attended=true: the user is here to answer a review, so the report waits for one when the
        critic asks for a person (review_report auto); false, it stands as written."""
        async with one_line_errors():
            started = await research_client.start_research(session, values, attended=attended)
            if not wait:
                return {
                    "id": started.id,
                    "status": "started",
                    "next": "research_status(id) to follow it, get_report(id) when it is done",
                }
            handle = research_client.handle(await session.connect(), started.id)
            return await _wait(handle, session, ctx)

    research.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            _keyword(QUESTION, str),
            _keyword("ctx", Context),
            *(
                _keyword(o.field, _argument_type(o.field), default(o.field))
                for o in OPTIONS
                if o.mcp
            ),
            _keyword("wait", bool, False),
            _keyword("attended", bool, False),
        ],
        return_annotation=dict[str, Any],
    )
    return research


def _keyword(name: str, annotation: Any, value: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=value
    )


def _argument_type(field: str) -> Any:
    """The model's type, an enum as the literal values it takes (so the schema lists them)."""
    names = choices(field)
    return Literal[tuple(names)] if names else ResearchRequest.model_fields[field].annotation


def _add_following_tools(server: ResearchServer, session: Session) -> None:
    @server.tool()
    async def research_status(id: str, since: int = 0) -> dict[str, Any]:
        """Where a research is: its stage, what it waits for, its plan, and its events after SINCE."""
        async with one_line_errors():
            handle = _handle(await find_running(session, research_id(id)))
            status = await research_client.status(handle, session.cfg)
            events = await research_client.events(handle, since, session.cfg)
            return {
                **status_shape(id, status),
                "events": [e.model_dump(mode="json") for e in events],
            }

    @server.tool()
    async def answer_clarification(
        id: str, answer: str, ctx: Context, wait: bool = False
    ) -> dict[str, Any]:
        """Answer the clarification question research ID is waiting for; wait=true then waits as
        `research` does."""
        return await _answer(
            session, id, "answer", lambda handle: research_client.answer(handle, answer), ctx, wait
        )

    @server.tool()
    async def review(
        id: str,
        decision: Literal["approve", "revise", "cancel"],
        ctx: Context,
        feedback: str = "",
        steps: list[dict[str, str]] | None = None,
        wait: bool = False,
    ) -> dict[str, Any]:
        """Answer the plan or report review research ID is waiting for: approve, revise (with
        feedback), or cancel; for a plan, STEPS ([{title, description}]) replace the steps not yet done."""
        payload: dict[str, Any] = {"decision": decision, "feedback": feedback}
        if steps is not None:
            payload["steps"] = steps
        return await _answer(
            session, id, "review", lambda handle: research_client.review(handle, payload), ctx, wait
        )


async def _answer(
    session: Session,
    workflow_id: str,
    what: str,
    send: Callable[[research_client.Handle], Awaitable[str]],
    ctx: Context,
    wait: bool,
) -> dict[str, Any]:
    """Send an answer or a review through its validating update; wait=true then follows the
    research from the last event before it was sent."""
    seen: list[int] = []

    async def marked(handle: research_client.Handle) -> str:
        seen.append((await research_client.status(handle, session.cfg)).last_event_seq)
        return await send(handle)

    async with one_line_errors():
        workflow_id = research_id(workflow_id)
        handle = _handle(await find_running(session, workflow_id))
        accepted = await deliver(handle, what, marked)
        if not wait:
            return {"id": workflow_id, "status": accepted}
        return await _wait(handle, session, ctx, seen[0])


def _handle(found: research_client.Found) -> research_client.Handle:
    assert found.handle is not None  # find_running found it in Temporal
    return found.handle


async def _wait(
    handle: research_client.Handle, session: Session, ctx: Context, since: int = 0
) -> dict[str, Any]:
    """Follow the research's events (each a progress notification) until it ends, a person is
    needed, or MAX_WAIT_S pass."""
    stream = EventStream(handle, since, cfg=session.cfg)
    result_task = asyncio.ensure_future(research_client.result(handle, cfg=session.cfg))
    deadline = asyncio.get_running_loop().time() + MAX_WAIT_S
    try:
        while not result_task.done():
            for event in await stream.poll():
                await ctx.report_progress(event.seq, None, event.text)
            if stream.pending is not None:
                status = await research_client.status(handle, session.cfg)
                if status.pending_question or status.pending_review:
                    return status_shape(handle.id, status)
            if asyncio.get_running_loop().time() > deadline:
                return {
                    **status_shape(handle.id, await research_client.status(handle, session.cfg)),
                    "next": f"still running after {MAX_WAIT_S:.0f}s: research_status(id) or get_report(id)",
                }
            await stream.pause(result_task)
        result: ResearchResult = await result_task
    finally:
        if not result_task.done():
            result_task.cancel()
    for event in await stream.poll():
        await ctx.report_progress(event.seq, None, event.text)
    return report_shape(handle.id, result)


async def serve(args: argparse.Namespace, session: Session) -> int:
    """`python -m starter mcp`: serve until the client closes stdin."""
    await build_server(session).run_stdio_async()
    return 0
