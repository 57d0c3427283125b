"""Finding a person's research: `find`, the one answer to "which research is ID, and may I see it?"
for the CLI, the MCP server and the web app alike.

Temporal first (a running research, or a closed one it still keeps: its memo names the owner
without a worker), then the library (which keeps a finished research after Temporal forgot it;
its `owner` column). Another user's research is unknown, in the same words as an id that does not
exist, and costs the same reads (one of each), so neither the answer nor its time says that it
exists. When Temporal cannot be asked, the library still answers for what it has; when neither
has the research, the failure that stopped the search is the answer (Temporal unreachable is not
"no such research").
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio.client import WorkflowExecutionStatus, WorkflowHandle

from starter.client import library
from starter.client.errors import ClientError, Kind
from starter.client.session import Session, local_owner
from starter.client.temporal import not_found, temporal_errors
from workflows.models import ResearchResult

#: A research as Temporal holds it: its workflow, and what it ends with.
Handle = WorkflowHandle[Any, ResearchResult]


@dataclass
class Found:
    """A research its owner may see. `handle` is None when only the library knows it (Temporal
    forgot it, or cannot be reached just now); then `stored` is set, as people may see it."""

    id: str
    owner: str
    handle: Handle | None
    status: WorkflowExecutionStatus | None
    stored: library.StoredResearch | None = None
    #: The question it was started with (its memo), for a page to name a research whose busy
    #: worker has not answered its status yet.
    question: str | None = None

    @property
    def running(self) -> bool:
        return self.status is WorkflowExecutionStatus.RUNNING

    @property
    def state(self) -> str:
        """`running`, `completed`, `failed`, ... as Temporal says; the outcome for a stored one."""
        if self.status is not None:
            return self.status.name.lower()
        return self.stored.result.outcome.value if self.stored else "unknown"


async def find(
    session: Session,
    research_id: str,
    owner: str | None = None,
    *,
    call_s: float | None = None,
    rpc_timeout: timedelta | None = None,
) -> Found:
    """OWNER's (default: the session's user's) research RESEARCH_ID; `ClientError` NOT_FOUND for
    one that does not exist and for another user's alike. CALL_S bounds the Temporal side (then
    the library is asked, as when Temporal is away)."""
    who = owner or session.user
    try:
        handle, described = await asyncio.wait_for(
            _described(session, research_id, rpc_timeout), call_s
        )
    except (ClientError, TimeoutError) as err:  # unknown to Temporal, or Temporal away
        failure = err if isinstance(err, ClientError) else _late(session)
        return await _from_library(session, research_id, who, failure)
    memo_owner = await described.memo_value("owner", local_owner(session.cfg))
    if str(memo_owner) != who:  # the same library read an unknown id costs
        await _from_library(session, research_id, "\x00", not_found(research_id))
        raise not_found(research_id)
    question = await described.memo_value("question", None)
    return Found(
        id=research_id,
        owner=who,
        handle=handle,
        status=described.status,
        question=str(question) if question else None,
    )


async def find_running(session: Session, research_id: str, owner: str | None = None) -> Found:
    """`find` for what only Temporal can do (status, events, steering, following): a research
    only the library keeps has no handle, and is unknown here in the words of any other."""
    found = await find(session, research_id, owner)
    if found.handle is None:
        raise not_found(research_id)
    return found


async def _described(
    session: Session, research_id: str, rpc_timeout: timedelta | None
) -> tuple[Handle, Any]:
    client = await session.connect()
    handle = client.get_workflow_handle(research_id, result_type=ResearchResult)
    with temporal_errors(research_id, session.cfg.temporal.target):
        return handle, await handle.describe(rpc_timeout=rpc_timeout)


def _late(session: Session) -> ClientError:
    return ClientError(
        f"Temporal at {session.cfg.temporal.target} did not answer in time", Kind.UNREACHABLE
    )


async def _from_library(
    session: Session, research_id: str, owner: str, failure: ClientError
) -> Found:
    """The research from the library; else NOT_FOUND when Temporal did not know it either, or
    the failure that kept Temporal from saying (FAILURE)."""
    missing = failure.kind is Kind.NOT_FOUND
    try:
        stored = await library.load(session, research_id)
    except ClientError:
        if missing:
            raise  # the library's own failure: it could not say either
        raise failure from None
    if stored is not None and library.stored_owner(stored, session) == owner:
        return Found(id=research_id, owner=owner, handle=None, status=None, stored=stored)
    if missing or stored is not None:
        raise not_found(research_id) from None
    raise failure from None
