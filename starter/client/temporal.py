"""The starter's side of the Temporal conversation: connect, query, answer, explain failures.

Every Temporal problem the user can cause or meet is turned into a `ClientError` here, with a
one-line message and its kind, so no front end shows a traceback.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from temporalio import exceptions as tex
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.service import RPCError, RPCStatusCode

from settings import HOME, ConfigError, Settings, connect_temporal
from starter.client.errors import ClientError, Kind
from starter.client.terminal import clean, escape
from workflows.events import Event
from workflows.models import ResearchResult, ResearchStatus
from workflows.research import DeepResearchWorkflow

#: The workflow's type as Temporal's visibility names it (in list filters): the one string left,
#: derived from the class. Everything else is called by method reference (names written once, in
#: workflows/research.py, as samples-python's hello_query does).
WORKFLOW_TYPE = DeepResearchWorkflow.__name__

#: A research as the client holds it: its workflow, and what it ends with.
ResearchHandle = WorkflowHandle[DeepResearchWorkflow, ResearchResult]

CONNECT_TIMEOUT = timedelta(seconds=3)
#: How long one `status` query may take before we conclude no worker is answering.
QUERY_TIMEOUT = timedelta(seconds=5)
#: A worker long-polls its task queue again at least every 70 s: one seen by Temporal within this
#: long is alive, however busy (a query waits behind its running workflow task).
POLLER_FRESH = timedelta(seconds=90)
#: A query not answered: its deadline passed, or (RESOURCE_EXHAUSTED) Temporal's buffer of queries
#: waiting for the research's running workflow task is full: both mean "ask its pollers why".
UNANSWERED = (
    RPCStatusCode.DEADLINE_EXCEEDED,
    RPCStatusCode.CANCELLED,
    RPCStatusCode.RESOURCE_EXHAUSTED,
)
#: How long a client waits before it asks a busy research again (the web app's Retry-After).
BUSY_RETRY_S = 5.0
#: How long an answer may wait for a worker to accept it.
UPDATE_WAIT_S = 20.0
#: An id (or any input) shown back in a message is cut to this many characters.
SHOWN_CHARS = 100


#: What the workflow's validators say when there is nothing to answer or review: the research is
#: not waiting for it (CONFLICT), which is not bad input.
NOTHING_PENDING = ("no clarification question is pending", "no review is pending")
#: What Temporal (and the library, whose classified failures are ApplicationErrors) raises: the
#: exceptions no front end sees, each becoming a `ClientError` here.
TEMPORAL_FAILURES = (tex.TemporalError,)


def refused(what: str, reason: str) -> ClientError:
    """The workflow's validator refused an answer or a review, with its reason."""
    kind = Kind.CONFLICT if reason in NOTHING_PENDING else Kind.INVALID
    return ClientError(f"{what} refused: {reason}", kind)


def translated(
    err: BaseException, research_id: str | None = None, address: str | None = None
) -> ClientError:
    """ERR, a failure of Temporal's or the library's, as the one line a person reads and its kind:
    what every front end catches instead of the SDK's exceptions."""
    if isinstance(err, ClientError):
        return err
    if isinstance(err, WorkflowFailureError):
        return research_failed(research_id or "", err)
    if isinstance(err, RPCError):
        return _rpc_failure(err, research_id, address)
    if isinstance(err, WorkflowQueryFailedError):
        return ClientError(f"the research could not answer: {one_line(str(err))}", Kind.NO_ANSWER)
    if isinstance(err, tex.ApplicationError):  # the library's classified failures (storage/)
        return ClientError(err.message or "the research library is unavailable", Kind.UNREACHABLE)
    return ClientError(f"Temporal: {one_line(str(err) or type(err).__name__)}", Kind.UNREACHABLE)


def _rpc_failure(err: RPCError, research_id: str | None, address: str | None) -> ClientError:
    if err.status == RPCStatusCode.NOT_FOUND:
        return (
            not_found(research_id)
            if research_id
            else ClientError(f"Temporal: {one_line(err.message or 'not found')}", Kind.NOT_FOUND)
        )
    where = f" at {address}" if address else ""
    if err.status in UNANSWERED:
        return ClientError(
            f"Temporal{where} did not answer within {QUERY_TIMEOUT.seconds}s", Kind.NO_ANSWER
        )
    if err.status == RPCStatusCode.UNAVAILABLE:
        return ClientError(f"cannot reach Temporal{where}", Kind.UNREACHABLE)
    said = err.message or err.status.name.lower()
    return ClientError(f"Temporal refused the request: {one_line(said)}", Kind.UNREACHABLE)


@contextmanager
def temporal_errors(research_id: str | None = None, address: str | None = None) -> Iterator[None]:
    """Inside: every Temporal or library failure leaves as a `ClientError` (`translated`)."""
    try:
        yield
    except TEMPORAL_FAILURES as err:
        raise translated(err, research_id, address) from err


async def connect(cfg: Settings) -> Client:
    try:
        return await connect_temporal(cfg.temporal, connect_timeout=CONNECT_TIMEOUT)
    except ConfigError as err:  # a Temporal profile that does not load: the setting to fix
        raise ClientError(str(err), Kind.UNREACHABLE) from None
    except Exception as err:  # RuntimeError on refusal, ValueError on a malformed address
        raise ClientError(
            f"cannot reach Temporal at {cfg.temporal.target} (start one with `make dev`)",
            Kind.UNREACHABLE,
        ) from err


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, RPCError) and err.status == RPCStatusCode.NOT_FOUND


def unanswered(err: BaseException) -> bool:
    """A query no worker answered in time (busy or gone; ask its pollers why), not one that was
    refused: the SDK's own deadline (TimeoutError) or one of UNANSWERED (as the SDK raised it, or
    the `ClientError` it became)."""
    if isinstance(err, ClientError) and err.__cause__ is not None:
        err = err.__cause__
    return isinstance(err, TimeoutError) or (isinstance(err, RPCError) and err.status in UNANSWERED)


def not_taken(what: str) -> ClientError:
    """An answer or a review no worker took in time: it may not have arrived, so say so."""
    return ClientError(
        f"no worker took the {what} within {UPDATE_WAIT_S:.0f}s: is a worker running? "
        f"(the {what} was not confirmed)",
        Kind.NO_ANSWER,
    )


def research_failed(research_id: str, err: BaseException) -> ClientError:
    """A research that ended in failure, with its root cause in one line."""
    return ClientError(f"research {shown(research_id)} failed: {root_message(err)}", Kind.FAILED)


def not_found(workflow_id: str) -> ClientError:
    return ClientError(f"no research with id {shown(workflow_id)}", Kind.NOT_FOUND)


async def require_running(handle: ResearchHandle, what: str) -> None:
    """Fail with exit 2 unless the workflow exists and is still running."""
    with temporal_errors(handle.id):
        desc = await handle.describe()
    if desc.status != WorkflowExecutionStatus.RUNNING:
        state = desc.status.name.lower() if desc.status else "closed"
        raise ClientError(
            f"research {shown(handle.id)} is already {state}: nothing to {what}", Kind.CONFLICT
        )


async def deliver(
    handle: ResearchHandle, what: str, send: Callable[[ResearchHandle], Awaitable[str]]
) -> str:
    """Hand a research an answer or a review (SEND, through its validating update) and return what
    the workflow said; a `ClientError` when the research is not running or refuses it
    (`WHAT refused: why`)."""
    await require_running(handle, what)
    return await send(handle)


async def query_status(handle: ResearchHandle) -> ResearchStatus:
    """The `status` query; `ClientError` when the workflow is unknown or no worker answers."""
    return cast(ResearchStatus, await _query(handle, "status", DeepResearchWorkflow.status))


async def query_events(handle: ResearchHandle, since: int) -> list[Event]:
    """The `events` query; `ClientError` when the research is unknown or no worker answers."""
    return cast(list[Event], await _query(handle, "events", DeepResearchWorkflow.events, since))


async def _query(handle: ResearchHandle, what: str, query: Any, *args: Any) -> Any:
    """One query, its failures in one line: unknown research, no worker answering in time (or
    Ctrl-C while waiting), a query the workflow refused."""
    try:
        # Bounded as a whole: the SDK retries a full query buffer (RESOURCE_EXHAUSTED) for seconds.
        async with asyncio.timeout(QUERY_TIMEOUT.total_seconds() + 1):
            return await handle.query(query, *args, rpc_timeout=QUERY_TIMEOUT)
    except TimeoutError as err:
        if _interrupted():
            raise asyncio.CancelledError() from err
        raise await slow_or_stopped(handle) from err
    except RPCError as err:
        if is_not_found(err):
            raise not_found(handle.id) from err
        if err.status in UNANSWERED:
            if _interrupted():
                raise asyncio.CancelledError() from err
            raise await slow_or_stopped(handle) from err
        raise translated(err, handle.id) from err
    except WorkflowQueryFailedError as err:
        raise ClientError(f"{what} query failed: {one_line(str(err))}", Kind.NO_ANSWER) from err


async def slow_or_stopped(handle: ResearchHandle) -> ClientError:
    """Why a research did not answer a query in time, told by its task queue's pollers rather
    than by the one query: a worker that polls is busy (the research is still working, ask again:
    `retry_after_s`); none polling, the worker is gone and one must be started."""
    polls = await worker_polls(handle)
    if polls:
        return ClientError(
            f"{research_named(handle.id)} is still working: its worker is busy and did not "
            f"answer within {QUERY_TIMEOUT.seconds}s",
            Kind.NO_ANSWER,
            retry_after_s=BUSY_RETRY_S,
        )
    worker = f"{shlex.quote(sys.executable)} {shlex.quote(str(HOME / 'worker.py'))}"
    why = "no worker polls its task queue" if polls is False else "is a worker running?"
    return ClientError(
        f"{research_named(handle.id)} did not answer within {QUERY_TIMEOUT.seconds}s: {why} "
        f"(start one with `make dev`, or `{worker}`)",
        Kind.NO_ANSWER,
    )


async def worker_polls(handle: ResearchHandle) -> bool | None:
    """Whether a worker polls the research's task queue now (Temporal's DescribeTaskQueue: a
    poller seen within POLLER_FRESH); None when Temporal cannot tell us."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    client: Client = handle._client  # the handle's own client: the SDK offers no public accessor
    try:
        described = await handle.describe(rpc_timeout=QUERY_TIMEOUT)
        queue = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=described.task_queue),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            ),
            timeout=QUERY_TIMEOUT,
        )
    except RPCError:
        return None
    now = datetime.now(UTC)
    return any(
        now - poller.last_access_time.ToDatetime(tzinfo=UTC) < POLLER_FRESH
        for poller in queue.pollers
    )


async def send_answer(handle: ResearchHandle, text: str) -> str:
    """Answer the pending question through the validated update; the signal if there is none.

    A refusal is a `ClientError` with the validator's reason (`refused`).
    Control characters and bidi overrides are removed first (`terminal.clean`).
    """
    text = clean(text).strip()
    try:
        async with asyncio.timeout(UPDATE_WAIT_S):
            reply = await handle.execute_update(DeepResearchWorkflow.answer_clarification, text)
        return reply or "answer accepted"
    except WorkflowUpdateFailedError as err:
        reason = root_message(err)
        if "expected but not found" not in reason:  # a refusal, not a missing handler
            raise refused("answer", reason) from err
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError) as err:
        if _interrupted():
            raise asyncio.CancelledError() from err
        raise not_taken("answer") from err
    except RPCError as err:
        if is_not_found(err):
            raise not_found(handle.id) from err
        # The server refused updates altogether (disabled, too old): the signal still works.
    with temporal_errors(handle.id):
        await handle.signal(DeepResearchWorkflow.clarification_answer, text)
    return "answer sent (signal)"


def _interrupted() -> bool:
    """True when this task is being cancelled (Ctrl-C), so a "timeout" is really an interrupt."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def root_message(err: BaseException) -> str:
    """The innermost failure's message: what actually went wrong, on one line."""
    deepest: BaseException = err
    while deepest.__cause__ is not None:
        deepest = deepest.__cause__
    if isinstance(deepest, tex.CancelledError):
        return "the research was cancelled before it produced a result"
    if isinstance(deepest, tex.TerminatedError):
        return f"the research was terminated ({deepest.message or 'no reason given'})"
    if isinstance(deepest, tex.TimeoutError):
        return "the research timed out"
    message = deepest.message if isinstance(deepest, tex.FailureError) else str(deepest)
    return one_line(message or type(deepest).__name__)


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """An id or other input shown back in a message: control characters escaped, at most LIMIT
    characters (a 100 KB id is not echoed whole)."""
    return one_line(escape(text), limit)


def research_named(research_id: str) -> str:
    """ "research-8cbb23c1" as it stands, "research my-question" for an id of one's own: never
    "research research-8cbb23c1"."""
    name = shown(research_id)
    return name if name.startswith("research-") else f"research {name}"


def result_handle(client: Client, workflow_id: str) -> WorkflowHandle[object, ResearchResult]:
    return client.get_workflow_handle(workflow_id, result_type=ResearchResult)
