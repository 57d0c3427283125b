"""Everything a research keeps, in parts, and the two views of it the outside world reads.

The workflow's memory is `ResearchState`: the request, where the research is (its stage and
their history, its language, its clock across runs), its event log, and one part per concern
(workflows/accounting/parts.py: the conversation, the inquiry, the material gathered, a person's
oversight, the write-up, the ledger). Stage functions read and change it; the `status` query and
the result are views of it, filled from the parts by field name (`status()`, `result()`), so a
new piece of state the views show is one field in one part. Pure bookkeeping: no activity calls.

A research continued as new hands its whole state to the next run as JSON; states handed over
before the state was in parts are flat objects, and decode into the parts unchanged
(`ResearchState._in_parts`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, Field, model_validator

from workflows.accounting.parts import (
    Conversation,
    Inquiry,
    Ledger,
    Material,
    Oversight,
    Part,
    Writeup,
)
from workflows.activity_models import AboutQuestion
from workflows.events import EventLog
from workflows.kit import followup
from workflows.models import (
    STEP_LIMITS,
    Claim,
    Depth,
    QueryMode,
    ResearchRequest,
    ResearchResult,
    ResearchStatus,
    ReviewTarget,
    Stage,
)
from workflows.standing_messages import Changes

View = TypeVar("View", bound=BaseModel)


class ResearchState(BaseModel):
    request: ResearchRequest = Field(default_factory=lambda: ResearchRequest(query=""))
    stage: Stage = Stage.ROUTING
    stage_history: list[Stage] = Field(default_factory=lambda: [Stage.ROUTING])
    #: The report's language code, decided when the research starts (language.py).
    language: str = "en"
    #: When the research began (the first run), its research time in earlier runs, and how many
    #: times it continued as new (research.py).
    started_at: datetime | None = None
    research_elapsed_s: float = 0.0
    runs: int = 0
    #: What changed since the previous run of its standing research (workflows/standing/changes.py).
    changes: Changes | None = None
    #: What happened, in order, for the `events` query (workflows/events.py).
    events: EventLog = Field(default_factory=EventLog)
    conversation: Conversation = Field(default_factory=Conversation)
    inquiry: Inquiry = Field(default_factory=Inquiry)
    material: Material = Field(default_factory=Material)
    oversight: Oversight = Field(default_factory=Oversight)
    writeup: Writeup = Field(default_factory=Writeup)
    ledger: Ledger = Field(default_factory=Ledger)

    @model_validator(mode="before")
    @classmethod
    def _in_parts(cls, data: Any) -> Any:
        """A state from before the parts (a flat object of ~45 fields, as recorded histories of a
        research continued as new carry it): each field moves into the part that now holds it.
        Fields that no longer exist anywhere are dropped, as pydantic drops unknown fields."""
        if not isinstance(data, dict):
            return data
        part_of = {name: part for part, model in cls.parts().items() for name in model.model_fields}
        flat = [key for key in data if key in part_of]
        if not flat:
            return data
        data = dict(data)
        for key in flat:
            part = part_of[key]
            data[part] = {**data.get(part, {}), key: data.pop(key)}
        return data

    @classmethod
    def parts(cls) -> dict[str, type[Part]]:
        """The parts' field names and classes, in order."""
        return {
            name: kind
            for name, info in cls.model_fields.items()
            if isinstance(kind := info.annotation, type) and issubclass(kind, Part)
        }

    # --- what the research is about -----------------------------------------------------------

    @property
    def question(self) -> str:
        return self.request.query.strip()

    def about(self) -> dict[str, Any]:
        """The `AboutQuestion` fields of every role input: the question as asked, what a
        follow-up refers to, and the user's clarifications."""
        return {
            "query": self.question,
            "follows_up": followup.context(self.question, self.request.history),
            "clarifications": [c.answer for c in self.conversation.clarifications if c.answer],
            "language": self.language,
        }

    def topic_text(self) -> str:
        """The question with what it follows up and its clarifications, in one line (for focus)."""
        return AboutQuestion(**self.about()).topic_text()

    def meant(self) -> str:
        """The question as the person meant it, after their clarification answers (clarified.py)."""
        return AboutQuestion(**self.about()).meant()

    def step_limits(self) -> tuple[int, int]:
        """The plan's minimum and maximum step counts: web mode is one step, else the depth's."""
        if self.request.mode is QueryMode.WEB:
            return 1, 1
        depth = self.inquiry.depth
        return STEP_LIMITS[depth if depth is not Depth.AUTO else Depth.MEDIUM]

    # --- the two views --------------------------------------------------------------------------

    def status(self) -> ResearchStatus:
        events = self.events
        return self.view(
            ResearchStatus,
            query=self.question,
            clarification_count=len(self.conversation.clarifications),
            sources_count=len(self.material.sources),
            critique=self.writeup.critique
            if self.oversight.pending_review is ReviewTarget.REPORT
            else None,
            draft_report_markdown=self.writeup.draft
            if self.oversight.pending_review is ReviewTarget.REPORT
            else None,
            first_event_seq=events.dropped + 1 if events.items else 0,
            last_event_seq=events.last_seq,
        )

    def result(
        self, report: str, claims: list[Claim], started: datetime, now: datetime
    ) -> ResearchResult:
        self.ledger.stats.duration_s = round((now - started).total_seconds(), 3)
        return self.view(
            ResearchResult,
            query=self.question,
            outcome=self.stage,
            report_markdown=report,
            claims=claims,
            searched=self.request.sources,
        )

    def view(self, model: type[View], **given: Any) -> View:
        """`model` filled with the values `given` (what is computed) and every other field by its
        name from where the research keeps it: the parts first, then this aggregate, then the
        request (so `depth` and `language` are the ones decided, not the ones asked for)."""
        values = dict(given)
        for name in (n for n in model.model_fields if n not in given):
            holder = next((h for h in self._holders() if name in type(h).model_fields), None)
            if holder is None:
                raise TypeError(
                    f"{model.__name__}.{name} is neither given nor kept in the research's state"
                )
            values[name] = getattr(holder, name)
        return model(**values)

    def _holders(self) -> Iterator[BaseModel]:
        yield from (getattr(self, name) for name in self.parts())
        yield self
        yield self.request
