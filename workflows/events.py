"""The research's event stream: everything a person following it would want to see, in order.

Each event has a gapless `seq` from 1, the workflow time it happened (`at`), a `kind`, a one-line
`text` a terminal can print as it is, and a small `data` object for programs. The log is plain
workflow state (a field of `ResearchState`): emitting an event issues no command, so histories
recorded before events existed replay unchanged (and rebuild their events on replay), a crashed
worker's successor has the same events, and the `events` query reads them without touching the
history. It keeps the last EVENTS_KEPT; older ones are dropped and the query's answer shows where
it starts (see `EventLog.after`).

Emitting is one line wherever something happens:

    emit(state.events, "budget", "token budget spent: 41,200 of 40,000", {"exhausted": "tokens", ...})

`kind` is an `EventKind` value (or its string); `data` must be JSON-serialisable and small (ids,
counts, titles: never page texts), since the query returns up to EVENTS_KEPT of them at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field
from temporalio import workflow

#: The events a research keeps. 500 covers an extended research with every review and
#: refinement many times over (`make bench`: a medium research emits about 30 events, an extended
#: one about 45); a client that floods the workflow with bad signals cannot grow its state
#: without bound.
EVENTS_KEPT = 500
#: Longest `text` of one event: one terminal line, give or take.
TEXT_LIMIT = 300


class EventKind(str, Enum):
    STAGE = "stage"
    PLAN = "plan"
    STEP_STARTED = "step_started"
    STEP_DONE = "step_done"
    SOURCE = "source"
    REFLECTION = "reflection"
    LOOP_BACK = "loop_back"
    QUESTION = "question"
    ANSWER = "answer"
    REVIEW_REQUESTED = "review_requested"
    REVIEW = "review"
    REFINEMENT = "refinement"
    BUDGET = "budget"
    VERIFICATION = "verification"
    SIGNAL_IGNORED = "signal_ignored"
    DONE = "done"


class Event(BaseModel):
    seq: int
    at: datetime
    kind: EventKind
    text: str
    data: dict[str, Any] = Field(default_factory=dict)


@dataclass
class EventLog:
    """The kept events, oldest first, and how many older ones were dropped: the first kept
    event's seq is `dropped + 1`, the last one's `dropped + len(items)`."""

    items: list[Event] = field(default_factory=list)
    dropped: int = 0

    @property
    def last_seq(self) -> int:
        return self.dropped + len(self.items)

    def append(
        self, kind: EventKind | str, text: str, data: dict[str, Any] | None, at: datetime
    ) -> Event:
        text = " ".join(text.split())
        event = Event(
            seq=self.last_seq + 1,
            at=at,
            kind=EventKind(kind),
            text=text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…",
            data=data or {},
        )
        self.items.append(event)
        if len(self.items) > EVENTS_KEPT:
            gone = len(self.items) - EVENTS_KEPT
            del self.items[:gone]
            self.dropped += gone
        return event

    def after(self, since: int) -> list[Event]:
        """The kept events with `seq > since`, oldest first.

        The answer is gapless, so it says itself from which seq it could answer: when its first
        event's seq is above `since + 1`, the events in between were dropped (more than
        EVENTS_KEPT happened since). A `since` at or past the last event gives an empty list.
        """
        return self.items[max(0, since - self.dropped) :]


def emit(
    log: EventLog, kind: EventKind | str, text: str, data: dict[str, Any] | None = None
) -> Event:
    """Append an event to `log` at the workflow's current time. Only from workflow code (handlers too)."""
    return log.append(kind, text, data, workflow.now())
