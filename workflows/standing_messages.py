"""A standing research's messages: what changed since its previous run (`Changes`, carried in a
result and a notice; the comparison itself is workflows/standing/changes.py), the previous run as
the library gives it, and what a notice is and what its delivery takes and gives, between the
research, its `NotifyWorkflow` and the notification activities (their rows are in
workflows/roles.py). Shapes only, so the rows, the result and the library can name them without
importing the stages that fill them.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum

from pydantic import BaseModel, Field

from workflows.record import Claim, Evidence, Verdict


class SourceRef(BaseModel):
    url: str
    title: str = ""


class PreviousSource(SourceRef):
    """A source of the run before, as its claims cite it (id) and as it was read (digest)."""

    id: int = 0
    digest: str = ""


class UpdatedSource(SourceRef):
    """A source both runs read whose text changed, with what reads differently in it."""

    what: list[str] = Field(default_factory=list)


class ChangedClaim(BaseModel):
    """A claim both runs make, whose verdict moved (e.g. supported -> unsupported)."""

    text: str
    before: Verdict
    after: Verdict


class ChangedFinding(BaseModel):
    """A finding both runs make on the same ground whose figures differ: what it says now and
    what it said before."""

    text: str
    before: str


class PreviousRunInput(BaseModel):
    standing_id: str
    #: This run's workflow id: never its own previous run.
    research_id: str


class PreviousRun(BaseModel):
    """What a comparison needs of the run before: its id, when it finished, its sources, claims
    and the evidence paragraphs they rest on (empty from readers before it)."""

    research_id: str
    finished_at: datetime
    sources: list[PreviousSource] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)


class PreviousRunOutput(BaseModel):
    #: None for the first run of a standing research.
    previous: PreviousRun | None = None


class Changes(BaseModel):
    """INTERFACE.md "What changed": the run this one is compared with, and the differences."""

    since_research_id: str
    since: datetime
    new_sources: list[SourceRef] = Field(default_factory=list)
    gone_sources: list[SourceRef] = Field(default_factory=list)
    updated_sources: list[UpdatedSource] = Field(default_factory=list)
    new_claims: list[str] = Field(default_factory=list)
    dropped_claims: list[str] = Field(default_factory=list)
    changed_claims: list[ChangedClaim] = Field(default_factory=list)
    changed_findings: list[ChangedFinding] = Field(default_factory=list)
    #: Findings of the run before not made again although their sources did not change, and
    #: findings made now only, from sources that did not change: the model chose differently,
    #: nothing changed. Listed, never counted as a change.
    not_repeated: list[str] = Field(default_factory=list)
    newly_picked: list[str] = Field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(
            self.new_sources
            or self.gone_sources
            or self.updated_sources
            or self.new_claims
            or self.dropped_claims
            or self.changed_claims
            or self.changed_findings
        )


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
