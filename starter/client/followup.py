"""`research "QUESTION" --follow-up ID`: a new research that remembers an earlier one.

The earlier research becomes the conversation the orchestrator routes over (seed 000 reads the
last ROUTING_HISTORY messages): its question, each clarification question and answer, and its
report as the assistant's last word. So "tell me more about the second point" or "what are its
limits?" resolve against that report instead of being asked back.

The earlier research is read by the research client (`research_client.earlier_research`): from
the research library, which keeps it after Temporal has forgotten the workflow, else from Temporal;
only the user's own research can be followed up (another user's is unknown, like an id that does
not exist).
"""

from __future__ import annotations

from workflows.models import ROUTING_HISTORY, Message, ResearchResult, Speaker

#: The earlier report is the history's longest message; past this it is cut (the numbered items
#: and sections a follow-up refers to come first in a report).
REPORT_CHARS = 6000


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
