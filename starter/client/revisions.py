"""Revising one section of a finished report, for every front end (CLI `revise`, the API's and the
page's `sections/{n}/revise`, MCP `revise_section`): the checks, the start of the
`ReviseSectionWorkflow`, and the wait for its new version.

Checked here, in one line each, before anything starts: the research is the person's own and
stored in the library (another user's, or an unknown id, is "no research": NOT_FOUND), it has
finished (one still running is INVALID: its report is not written yet), the section exists
(numbered as workflows/kit/sections.py numbers them) and the feedback is 1 to 2,000
characters. One revision per research at a time (its workflow id is `revise/ID`, which no research
id can take): a second is CONFLICT until the first is done. The workflow is given the version it
revises straight from the library, so the rewrite reads what the person sees.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError

from starter.client import library
from starter.client.errors import ClientError, Kind
from starter.client.finding import find
from starter.client.session import Session
from starter.client.temporal import root_message, shown, temporal_errors
from workflows.kit.sections import sections
from workflows.models import ResearchResult
from workflows.revising.workflow import ReviseSectionWorkflow
from workflows.revising_messages import (
    FEEDBACK_MAX_CHARS,
    MAX_VERSIONS,
    ReportVersion,
    ReviseSectionInput,
    RevisionOutcome,
)

#: How long a front end waits for the new version (a model may take a minute or two to write).
WAIT_S = 300.0
#: A revision that no worker finishes in this long is given up by Temporal.
RUN_TIMEOUT = timedelta(minutes=30)
#: Why a revision's workflow ended, by its error's type, as the front ends show it.
KINDS = {"RevisionRefused": Kind.INVALID, "ReportChanged": Kind.CONFLICT}


def revision_id(research_id: str) -> str:
    """The revision workflow's id: one at a time per research, never a research id ('/')."""
    return f"revise/{research_id}"


async def revise(
    session: Session,
    research_id: str,
    section: object,
    feedback: object,
    owner: str | None = None,
    wait_s: float = WAIT_S,
    rpc_timeout: timedelta | None = None,
) -> RevisionOutcome:
    """Rewrite SECTION of OWNER's (default: the session's user's) research with FEEDBACK; the
    new version once it is stored. `ClientError` in one line for anything refused."""
    who = owner or session.user
    number = _section_number(section)
    text = _feedback(feedback)
    stored = await _stored(session, research_id, who, rpc_timeout)
    _check_section(stored, research_id, number)
    handle = await _started(session, stored, who, number, text, rpc_timeout)
    try:
        return await asyncio.wait_for(handle.result(), wait_s)
    except TimeoutError:
        raise ClientError(
            f"section {number} of {shown(research_id)} is still being revised after "
            f"{wait_s:.0f}s (is a worker running?): it shows in the report once it is done",
            Kind.NO_ANSWER,
        ) from None
    except WorkflowFailureError as err:
        raise ClientError(root_message(err), _kind(err)) from None


def _check_section(stored: library.StoredResearch, research_id: str, number: int) -> None:
    """The report may have another version, and has a section NUMBER; why not, in one line."""
    if stored.version >= MAX_VERSIONS:
        raise ClientError(
            f"the report of {shown(research_id)} has {stored.version} versions, the most one "
            "report keeps: start a follow-up research instead",
            Kind.LIMITED,
        )
    found = sections(stored.result.report_markdown)
    if not found:
        raise ClientError(
            f"the report of {shown(research_id)} has no sections to revise (no `## ` headings)",
            Kind.INVALID,
        )
    if number > len(found):
        raise ClientError(
            f"the report of {shown(research_id)} has no section {number}: it has "
            + ("1 section" if len(found) == 1 else f"{len(found)} sections (1 to {len(found)})"),
            Kind.INVALID,
        )


async def _started(
    session: Session,
    stored: library.StoredResearch,
    owner: str,
    number: int,
    text: str,
    rpc_timeout: timedelta | None,
) -> WorkflowHandle[ReviseSectionWorkflow, RevisionOutcome]:
    """The revision's workflow, started on the version the person sees (one at a time)."""
    client = await session.connect()
    try:
        return await client.start_workflow(
            ReviseSectionWorkflow.run,
            ReviseSectionInput(
                research_id=stored.workflow_id,
                run_id=stored.run_id,
                owner=owner,
                section=number,
                feedback=text,
                base_version=stored.version,
                result=stored.result,
            ),
            id=revision_id(stored.workflow_id),
            task_queue=session.cfg.temporal.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            execution_timeout=RUN_TIMEOUT,
            static_summary=f"revise section {number} of {stored.workflow_id}",
            rpc_timeout=rpc_timeout,
        )
    except WorkflowAlreadyStartedError:
        raise ClientError(
            f"a section of {shown(stored.workflow_id)} is being revised already: "
            "try again when that revision is done",
            Kind.CONFLICT,
        ) from None


def _kind(err: WorkflowFailureError) -> Kind:
    deepest: BaseException = err
    while deepest.__cause__ is not None:
        deepest = deepest.__cause__
    if isinstance(deepest, ApplicationError):
        return KINDS.get(deepest.type or "", Kind.FAILED)
    return Kind.FAILED


def _section_number(section: object) -> int:
    if isinstance(section, bool) or not isinstance(section, int) or section < 1:
        raise ClientError(
            f"invalid section {section!r}: a section's number, from 1 (the report's `## ` "
            "headings in order)",
            Kind.INVALID,
        )
    return section


def _feedback(feedback: object) -> str:
    text = " ".join(feedback.split()) if isinstance(feedback, str) else ""
    if not text:
        raise ClientError("the feedback is empty: say what the section should change", Kind.INVALID)
    if len(text) > FEEDBACK_MAX_CHARS:
        raise ClientError(
            f"the feedback is {len(text)} characters: at most {FEEDBACK_MAX_CHARS}", Kind.INVALID
        )
    return text


async def _stored(
    session: Session, research_id: str, owner: str, rpc_timeout: timedelta | None
) -> library.StoredResearch:
    """OWNER's stored research (its latest version), as the workflow revises it: as stored, its
    sources' real locations kept (the revision reads them); why not, in one line."""
    found = await find(session, research_id, owner, rpc_timeout=rpc_timeout)
    if found.running:
        raise ClientError(
            f"research {shown(research_id)} is still running: a section can be revised once "
            "its report is finished",
            Kind.INVALID,
        )
    url = session.cfg.library.db_url
    with temporal_errors(research_id):
        stored = await library.read(lambda: library.store.load_research(url, research_id))
    if stored is None:
        raise ClientError(f"no research with id {shown(research_id)}", Kind.NOT_FOUND)
    return stored


async def latest_result(
    session: Session, research_id: str, result: ResearchResult
) -> ResearchResult:
    """What `result ID` prints: the library's latest version when a section was revised since
    Temporal's result (else RESULT, as the workflow returned it)."""
    try:
        stored = await library.load(session, research_id)
    except ClientError:
        return result
    if stored is None or stored.version == 1:
        return result
    return stored.result


def revised_sections(versions: list[ReportVersion], shown_version: int) -> dict[int, int]:
    """Section number -> the version whose revision wrote it, as of SHOWN_VERSION (a section
    revised twice: the later one). Sections not in it are as the research wrote them."""
    found: dict[int, int] = {}
    for v in versions:
        if v.section is not None and v.version <= shown_version:
            found[v.section] = v.version
    return found
