"""`research "QUESTION" --follow-up ID`: a new research that remembers an earlier one.

The earlier research becomes the conversation the orchestrator routes over (seed 000 reads the
last ROUTING_HISTORY messages): its question, each clarification question and answer, and its
report as the assistant's last word. So "tell me more about the second point" or "what are its
limits?" resolve against that report instead of being asked back.

The earlier research is read from the research library, which keeps it after Temporal has
forgotten the workflow; a research not in the library (saved elsewhere, or still in Temporal's
retention only) is read from Temporal.
"""

from __future__ import annotations

from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError

from activities.storage import store
from starter.session import Session
from starter.temporal import CliError, shown
from workflows.models import ROUTING_HISTORY, Message, ResearchResult, Speaker

#: The earlier report is the history's longest message; past this it is cut (the numbered items
#: and sections a follow-up refers to come first in a report).
REPORT_CHARS = 6000
EXIT_USAGE = 2


def conversation(earlier: ResearchResult) -> list[Message]:
    """The earlier research as a conversation, last ROUTING_HISTORY messages."""
    messages = [Message(role=Speaker.USER, content=earlier.query)]
    for item in earlier.clarifications:
        messages.append(Message(role=Speaker.ASSISTANT, content=item.question))
        if item.answer:
            messages.append(Message(role=Speaker.USER, content=item.answer))
    report = earlier.report_markdown.strip()
    if len(report) > REPORT_CHARS:
        report = report[:REPORT_CHARS].rsplit("\n", 1)[0] + "\n…"
    messages.append(Message(role=Speaker.ASSISTANT, content=report))
    return messages[-ROUTING_HISTORY:]


async def earlier_research(research_id: str, session: Session) -> ResearchResult:
    """The research to follow up: from the library, else from Temporal if it completed there."""
    stored = store.load_research(session.cfg.research_db_url, research_id)
    if stored is not None:
        return stored.result
    client = await session.connect()
    handle = client.get_workflow_handle(research_id)
    try:
        described = await handle.describe()
    except RPCError as err:
        raise CliError(
            f"no research with id {shown(research_id)} in the library or in Temporal", EXIT_USAGE
        ) from err
    if described.status is not WorkflowExecutionStatus.COMPLETED:
        state = described.status.name.lower() if described.status else "unknown"
        raise CliError(
            f"research {shown(research_id)} is {state}: only a finished research can be followed up",
            EXIT_USAGE,
        )
    return await handle.result(result_type=ResearchResult)
