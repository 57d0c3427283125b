"""`research "QUESTION" --follow-up ID`: a new research that remembers an earlier one.

The earlier research becomes the conversation the orchestrator routes over (seed 000 reads the
last ROUTING_HISTORY messages): its question, each clarification question and answer, and its
report as the assistant's last word. So "tell me more about the second point" or "what are its
limits?" resolve against that report instead of being asked back.

The earlier research is read by the research client (`research_client.earlier_research`, through
`find`: Temporal, else the research library, which keeps it after Temporal has forgotten the
workflow); only the user's own research can be followed up (another user's is unknown, like an
id that does not exist). `later_turns` goes the other way: the follow-ups asked after a research,
for the web app's conversation view.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starter.client import library
from starter.client.errors import ClientError
from starter.client.mine import memo_of, visibility_query
from starter.client.session import Session
from starter.client.temporal import temporal_errors
from workflows.models import ROUTING_HISTORY, Message, ResearchResult, Speaker

#: The earlier report is the history's longest message; past this it is cut (the numbered items
#: and sections a follow-up refers to come first in a report).
REPORT_CHARS = 6000
#: Turns of a conversation found after a research, at most; running research looked at to find
#: its running follow-ups, and how long that may take (the rest is shown without them).
MAX_TURNS, SCAN_RUNNING, RUNNING_S = 8, 200, 3.0


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


@dataclass(frozen=True)
class Turn:
    """One research of a conversation: its id, what it asked (or its owner's title), and its
    state (`running`, or the finished research's outcome)."""

    id: str
    question: str
    state: str


async def later_turns(
    session: Session,
    research_id: str,
    owner: str,
    *,
    most: int = MAX_TURNS,
    running_s: float = RUNNING_S,
) -> list[Turn]:
    """OWNER's follow-ups asked after RESEARCH_ID, and theirs in turn, in the order asked: the
    finished ones from the library, the running ones from Temporal (the `follows` memo), MOST at
    most. Temporal away (or slower than RUNNING_S): the library's alone."""
    try:
        running = await asyncio.wait_for(_running_follow_ups(session, owner), running_s)
    except (ClientError, TimeoutError):
        running = {}
    turns: dict[str, Turn] = {}
    frontier = [research_id]
    while frontier and len(turns) < most:
        follows = frontier.pop(0)
        stored = await library.follow_ups(session, follows, owner, most)
        found = [Turn(e.workflow_id, e.title or e.query, e.outcome) for e in stored]
        for turn in found + running.get(follows, []):
            if turn.id not in turns and turn.id != research_id:
                turns[turn.id] = turn
                frontier.append(turn.id)
    return list(turns.values())[:most]


async def _running_follow_ups(session: Session, owner: str) -> dict[str, list[Turn]]:
    """OWNER's running follow-ups, by the research each follows (the `follows` memo)."""
    client = await session.connect()
    found: dict[str, list[Turn]] = {}
    with temporal_errors(address=session.cfg.temporal.target):
        async for wf in client.list_workflows(visibility_query(True, None), limit=SCAN_RUNNING):
            memo = await memo_of(wf, session.cfg)
            if memo["follows"] and memo["owner"] == owner:
                question = str(memo["question"] or wf.id)
                turn = Turn(wf.id, question, "running")
                found.setdefault(str(memo["follows"]), []).insert(0, turn)
    return found
