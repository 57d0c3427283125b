"""What a notice is and what its delivery takes and gives: the messages between the research,
its `NotifyWorkflow` and the notification activities (their rows are in workflows/roles.py). In a
module of their own so the rows can name them without importing the workflow that uses them.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum

from pydantic import BaseModel, Field

from workflows.standing.changes import Changes


class NoticeKind(str, Enum):
    COMPLETED = "research.completed"
    CANCELLED = "research.cancelled"
    FAILED = "research.failed"
    WAITING = "research.waiting"
    CHANGED = "standing.changed"


class Notice(BaseModel):
    """One event for the receivers: what happened to which research, when. Small by design: the
    receiver follows `url` (built by the activity from RESEARCH_PUBLIC_URL) for the rest."""

    event: NoticeKind
    research_id: str
    owner: str
    question: str
    at: datetime
    standing_id: str | None = None
    #: `clarification`, `plan_review` or `report_review` for research.waiting.
    waiting_for: str | None = None
    #: The pending question or a short line of what is asked.
    pending: str | None = None
    outcome: str | None = None
    error: str | None = None
    changes: Changes | None = None
    #: The standing research's own webhook URLs (its request's `notify`).
    notify: list[str] = Field(default_factory=list)


class DeliverInput(BaseModel):
    notice: Notice
    #: An opaque target key from `notification_targets`.
    target: str
    #: Sent as X-Research-Delivery: the same on every attempt.
    delivery_id: str


class DeliverOutput(BaseModel):
    target: str
    detail: str = ""


class OwnerRunningInput(BaseModel):
    """Asked by a standing research's scheduled run (workflows/standing/admission.py)."""

    owner: str
    #: The run that asks (not counted: it is the one asking).
    research_id: str


class OwnerRunningOutput(BaseModel):
    #: The owner's research running now, the asking run left out.
    running: int = Field(ge=0)
    #: RESEARCH_RUNNING_PER_USER as the workers have it.
    most: int = Field(ge=1)
