"""`python -m starter mcp`: the research assistant as Model Context Protocol tools, over stdio.

An agent or editor (any MCP client) starts a research, follows it, answers its clarification
question or its review, and reads the report, with the same rules as the CLI, because the tools
are the starter's own commands underneath: the request is built and validated by
`starter.client.requests` (the `research` tool's arguments are its OPTIONS marked `mcp`), answers go
through the validating `answer_clarification` and `review` updates, progress is the research's
event stream, reports come from Temporal or the research library.

- Tools: `research` (the fields of the web API's `POST /api/research`), `research_status`,
  `answer_clarification`, `review`, `get_report`, `search_library`, `rename_research`,
  `check_claims` (starter/mcp/check.py); `get_report`'s `format` (bib, ris, csl, html) gives a
  text export instead of the report (the CLI's `export --format`). A tool that cannot do what was asked returns an MCP tool
  error (`isError`) whose text is one line saying why, e.g. `answer refused: no clarification
  question is pending`; an id or other input shown back in it is cut to a hundred characters, and
  an id longer than ID_MAX_CHARS is refused.
- Research started here belongs to RESEARCH_USER, as from the CLI, and only RESEARCH_USER's is
  read or steered: another user's is unknown, like an id that does not exist (the research
  client's `check_owner` and `stored_owner`). Questions, answers and reviews are sent, and
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
from datetime import date
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp_types import Resource
from pydantic import ValidationError
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle
from temporalio.service import RPCError

from starter.client import library, research_client
from starter.client.errors import ClientError, Kind
from starter.client.events import EventStream
from starter.client.requests import (
    OPTIONS,
    QUESTION,
    build_request,
    choices,
    default,
    research_id,
)
from starter.client.session import Session
from starter.client.temporal import (
    deliver,
    is_not_found,
    one_line,
    research_failed,
    shown,
)
from starter.client.terminal import clean
from starter.client.titles import titled
from starter.exports import FORMATS, export
from starter.exports.markup import to_markdown
from starter.exports.public import public_for
from starter.mcp import check as mcp_check  # issue 36
from starter.mcp import library as mcp_library  # issue 31
from starter.mcp import revisions as mcp_revisions  # issue 48
from starter.mcp import standing as mcp_standing  # issue 32
from starter.mcp.errors import one_line_errors
from storage import store
from storage.public_names import PublicNames
from workflows.models import ResearchRequest, ResearchResult, ResearchStatus

#: The longest one tool call waits for a research before it returns the id to wait again with.
MAX_WAIT_S = 900.0
#: Stored reports listed as resources (all of them can be read by URI).
LISTED_REPORTS = 50
#: `get_report`'s formats: the text ones (a Word or PDF file is no tool result).
TEXT_FORMATS = tuple(name for name, f in FORMATS.items() if not f.binary)

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
        url = self.session.cfg.research_db_url
        try:
            entries = await asyncio.to_thread(
                lambda: store.list_research(url, limit=LISTED_REPORTS, owner=self.session.user)
            )
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
    _add_library_tools(server, session)
    mcp_library.add_library_tools(server, session, one_line_errors)
    mcp_standing.add_standing_tools(server, session, one_line_errors)
    mcp_check.add_check_tool(server, session, one_line_errors)
    mcp_revisions.add_revision_tool(server, session, one_line_errors)  # issue 48
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
            owner = session.user
            request = await research_client.ready(build_request(values), session, owner=owner)
            run = research_client.StartResearch(request=request, owner=owner, attended=attended)
            handle = await research_client.start(await session.connect(), session.cfg, run)
            if not wait:
                return {
                    "id": handle.id,
                    "status": "started",
                    "next": "research_status(id) to follow it, get_report(id) when it is done",
                }
            return await _wait(handle, ctx)

    research.__signature__ = inspect.Signature(
        [  # type: ignore[attr-defined]
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
            handle = (await session.connect()).get_workflow_handle(research_id(id))
            await research_client.check_owner(handle, session.cfg)
            status = await research_client.status(handle)
            events = PublicNames.of(session.cfg).dumped(await research_client.events(handle, since))
            return {**_status(id, status), "events": events}

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
    send: Callable[[WorkflowHandle], Awaitable[str]],
    ctx: Context,
    wait: bool,
) -> dict[str, Any]:
    """Send an answer or a review through its validating update; wait=true then follows the
    research from the last event before it was sent."""
    seen: list[int] = []

    async def marked(handle: WorkflowHandle) -> str:
        seen.append((await research_client.status(handle)).last_event_seq)
        return await send(handle)

    async with one_line_errors():
        workflow_id = research_id(workflow_id)
        handle = research_client.handle(await session.connect(), workflow_id)
        await research_client.check_owner(handle, session.cfg)
        accepted = await deliver(handle, what, marked)
        return (
            await _wait(handle, ctx, seen[0]) if wait else {"id": workflow_id, "status": accepted}
        )


def _add_library_tools(server: ResearchServer, session: Session) -> None:
    reader = session.user  # another user's research is unknown here
    names = PublicNames.of(session.cfg)  # local sources by name, never the server's path

    @server.tool()
    async def get_report(id: str, format: str = "md") -> dict[str, Any]:  # noqa: A002 - the CLI's name
        """The report of a finished research, with its sources: from the research library (kept
        after Temporal forgot the workflow), else from Temporal. `format` bib, ris or csl gives
        its references as that file's text (BibTeX, RIS, CSL-JSON), html the standalone page:
        `{id, format, content_type, name, text}`."""
        async with one_line_errors():
            wanted = research_id(id)
            if format not in TEXT_FORMATS:
                raise ToolError(
                    f"unknown format {shown(format)}: choose one of {', '.join(TEXT_FORMATS)}"
                )
            stored = await asyncio.to_thread(
                library.read_library,
                lambda: store.load_research(session.cfg.research_db_url, wanted),
            )
            if stored is not None:
                if research_client.stored_owner(stored, session.cfg) != reader:
                    raise ToolError(f"no research with id {shown(wanted)}")
                result = titled(stored.result, stored.title)
                if format != "md":
                    return await _file(wanted, result, format, stored.finished_at.date())
                return names.data(_report(wanted, result))
            handle = research_client.handle(await session.connect(), wanted)
            await research_client.check_owner(handle, session.cfg)
            if format != "md":
                return await _file(wanted, await _finished(handle), format, None)
            return _report(wanted, await _finished(handle))

    async def _file(
        workflow_id: str, result: ResearchResult, fmt: str, accessed: date | None
    ) -> dict[str, Any]:
        """RESULT as a FMT file's text, local sources named as anyone but the server sees them."""
        body, content_type, name = await asyncio.to_thread(
            export, public_for(result, session.cfg), fmt, accessed
        )
        return {
            "id": workflow_id,
            "format": fmt,
            "content_type": content_type,
            "name": name,
            "text": body.decode("utf-8"),
        }

    @server.tool()
    async def search_library(text: str = "", limit: int = 10) -> list[dict[str, Any]]:
        """Finished research in the library that TEXT finds (all when empty) in its question,
        title, clarifications or report, newest first; each report is research://ID/report."""
        async with one_line_errors():
            entries = await asyncio.to_thread(
                library.read_library,
                lambda: store.list_research(
                    session.cfg.research_db_url,
                    contains=text.strip() or None,
                    limit=max(1, min(limit, 100)),
                    owner=reader,
                    about=True,  # the report's text too, as the web library's search
                ),
            )
            return [
                {**e.model_dump(mode="json"), "report": f"research://{e.workflow_id}/report"}
                for e in entries
            ]

    @server.resource(
        "research://{id}/report",
        mime_type="text/markdown",
        description="The stored report of a finished research, with its sources",
    )
    async def stored_report(id: str) -> str:
        try:
            wanted = research_id(id)
            stored = await asyncio.to_thread(
                store.load_research, session.cfg.research_db_url, wanted
            )
        except Exception as err:  # noqa: BLE001 - one line for the client, whatever the library says
            raise ResourceError(one_line(getattr(err, "message", None) or str(err))) from None
        if stored is None or research_client.stored_owner(stored, session.cfg) != reader:
            raise ResourceNotFoundError(f"no stored research with id {shown(wanted)}")
        return names.text(clean(to_markdown(titled(stored.result, stored.title))))


async def _finished(handle: WorkflowHandle) -> ResearchResult:
    """The result of a research Temporal still knows and that has ended."""
    try:
        described = await handle.describe()
    except RPCError as err:
        if is_not_found(err):
            raise ClientError(
                f"no research with id {shown(handle.id)} in the library or in Temporal",
                Kind.NOT_FOUND,
            ) from err
        raise
    if described.status is WorkflowExecutionStatus.RUNNING:
        status = await research_client.status(handle)
        raise ClientError(
            f"research {shown(handle.id)} is still running ({status.stage.value}); "
            "wait with research_status, or research's wait",
            Kind.CONFLICT,
        )
    return await _result(handle)


async def _wait(handle: WorkflowHandle, ctx: Context, since: int = 0) -> dict[str, Any]:
    """Follow the research's events (each a progress notification) until it ends, a person is
    needed, or MAX_WAIT_S pass."""
    stream = EventStream(handle, since)
    result_task = asyncio.ensure_future(handle.result())
    deadline = asyncio.get_running_loop().time() + MAX_WAIT_S
    try:
        while not result_task.done():
            for event in await stream.poll():
                await ctx.report_progress(event.seq, None, event.text)
            if stream.pending is not None:
                status = await research_client.status(handle)
                if status.pending_question or status.pending_review:
                    return _status(handle.id, status)
            if asyncio.get_running_loop().time() > deadline:
                return {
                    **_status(handle.id, await research_client.status(handle)),
                    "next": f"still running after {MAX_WAIT_S:.0f}s: research_status(id) or get_report(id)",
                }
            await stream.pause(result_task)
        result = await _result(handle, result_task)
    finally:
        if not result_task.done():
            result_task.cancel()
    for event in await stream.poll():
        await ctx.report_progress(event.seq, None, event.text)
    return _report(handle.id, result)


async def _result(handle: WorkflowHandle, waiting: asyncio.Future | None = None) -> ResearchResult:
    try:
        return PublicNames.of_settings().model(await (waiting or handle.result()))  # by name
    except WorkflowFailureError as err:
        raise research_failed(handle.id, err) from err


def _status(workflow_id: str, status: ResearchStatus) -> dict[str, Any]:
    """What a client needs to decide its next call: the stage, and what the research waits for."""
    answer: dict[str, Any] = {
        "id": workflow_id,
        "status": status.stage.value,
        "question": status.query,
        "sources": status.sources_count,
        "last_event_seq": status.last_event_seq,
    }
    if status.plan is not None:
        answer["plan"] = {
            "title": status.plan.title,
            "iteration": status.plan_iterations,
            "steps": [
                {"title": s.title, "description": s.description, "status": s.status.value}
                for s in status.plan.steps
            ],
        }
    if status.pending_question:
        answer.update(
            status="awaiting_answer",
            clarification_question=status.pending_question,
            next=f"ask the user, then answer_clarification(id={workflow_id!r}, answer=...)",
        )
    elif status.pending_review:
        answer.update(
            status="awaiting_review",
            review=status.pending_review.value,
            next=f"review(id={workflow_id!r}, decision='approve'|'revise'|'cancel', feedback=...)",
        )
        if status.critique is not None:
            answer["critique"] = status.critique.model_dump(mode="json")
        if status.draft_report_markdown:  # what the user is asked to approve: show it to them
            answer["draft_report_markdown"] = clean(status.draft_report_markdown)
    return answer


def _report(workflow_id: str, result: ResearchResult) -> dict[str, Any]:
    return {
        "id": workflow_id,
        "status": result.outcome.value,
        "question": result.query,
        "report_markdown": clean(result.report_markdown),
        # a paper's metadata too (doi, authors, year, read, retracted ...): empty fields left out
        "sources": [
            s.model_dump(mode="json", exclude={"provider", "digest"}) for s in result.sources
        ],
        "verification": result.verification.model_dump(mode="json")
        if result.verification
        else None,
        "notes": result.notes,
        "resource": f"research://{workflow_id}/report",
    }


async def serve(args: argparse.Namespace, session: Session) -> int:
    """`python -m starter mcp`: serve until the client closes stdin."""
    await build_server(session).run_stdio_async()
    return 0
