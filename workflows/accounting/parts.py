"""The parts of a research's state (`ResearchState`, workflows/accounting/state.py), each what one concern writes.

- `Conversation`: the conversation before the research (conversation.py, the signal handlers).
- `Inquiry`: the depth, the plan and how far it got (planning.py, researching.py, reflection.py).
- `Material`: what was gathered: sources, pages read, the background search, evidence.
- `Oversight`: a person's reviews and the refining loop's passes (reviews.py, refining.py).
- `Writeup`: the report's checks, the engine that wrote it, and the notes for its reader.
- `Ledger`: the budgets, the bookkeeping that admits calls against them, and the figures
  the result shows (calls.py, budget.py).

A part's field keeps the name the `status` query and the result give it: those two views are
filled from the parts by name (`ResearchState.status` / `result`). Pure bookkeeping: no
activity calls; the methods that also announce something take the event log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel, Field, field_serializer

from workflows.events import EventKind, EventLog, emit
from workflows.kit.papers import merged, same_work
from workflows.kit.routing import Route
from workflows.models import (
    Budget,
    Clarification,
    Complexity,
    Critique,
    Depth,
    Evidence,
    LoopBack,
    Message,
    Paper,
    PaperRead,
    Passage,
    Plan,
    Refinement,
    Reflection,
    Review,
    ReviewAnswer,
    ReviewTarget,
    Source,
    Stats,
    StepStatus,
    VerificationSummary,
)

IGNORED_SIGNALS_KEPT = 20


class Part(BaseModel):
    """One part of the research's state (the aggregate finds its parts by this base)."""


class Conversation(Part):
    messages: list[Message] = Field(default_factory=list)
    last_agent: str | None = None
    clarifications: list[Clarification] = Field(default_factory=list)
    pending_question: str | None = None
    answer: str | None = None
    #: The last IGNORED_SIGNALS_KEPT refused signals, and how many there were in all: a client
    #: sending bad signals in a loop must not grow the workflow's state without bound.
    ignored_signals: list[str] = Field(default_factory=list)
    ignored_signals_count: int = 0
    routes: list[Route] = Field(default_factory=list)

    def ignore_signal(self, why: str, log: EventLog) -> None:
        self.ignored_signals.append(why)
        del self.ignored_signals[:-IGNORED_SIGNALS_KEPT]
        self.ignored_signals_count += 1
        emit(log, EventKind.SIGNAL_IGNORED, why, {"count": self.ignored_signals_count})


class Inquiry(Part):
    depth: Depth = Depth.AUTO
    complexity: Complexity | None = None
    #: The background search's queries, as the coordinator wrote them with its classification.
    background_queries: list[str] = Field(default_factory=list)
    plan: Plan | None = None
    plan_iterations: int = 0
    current_step_index: int = 0
    reflections: list[Reflection] = Field(default_factory=list)
    loop_backs: list[LoopBack] = Field(default_factory=list)

    def next_step(self) -> int | None:
        """Routing priority after a step (seed 003): in-progress, then pending, then done."""
        if self.plan is None:
            return None
        for wanted in (StepStatus.IN_PROGRESS, StepStatus.PENDING):
            for i, step in enumerate(self.plan.steps):
                if step.status is wanted:
                    return i
        return None

    def steps_done(self) -> int:
        return (
            sum(1 for s in self.plan.steps if s.status is StepStatus.COMPLETED) if self.plan else 0
        )

    def steps_planned(self) -> int:
        return len(self.plan.steps) if self.plan else 0

    def skip_pending(self, why: str) -> None:
        for step in self.plan.steps if self.plan else []:
            if step.status in (StepStatus.PENDING, StepStatus.IN_PROGRESS):
                step.status = StepStatus.SKIPPED
                step.description = f"{step.description} (skipped: {why})".strip()


#: What is kept of each source's text for checking the report (a page read is at most
#: PAGE_TEXT_LIMIT characters per step; a source read by several steps keeps up to this much).
READ_TEXT_LIMIT = 12000


class Material(Part):
    sources: list[Source] = Field(default_factory=list)
    read_urls: set[str] = Field(default_factory=set)
    #: Pages that could not be read: never fetched again, never a source.
    unreadable_urls: set[str] = Field(default_factory=set)
    #: The scholarly indexes a `papers` research searches, as its worker said (None: not asked).
    paper_indexes: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)

    @field_serializer("read_urls", "unreadable_urls")
    def _in_order(self, urls: set[str]) -> list[str]:
        """Sets in a stable order: a state handed to the next run serialises the same in every
        process (a set's order depends on the process's string hashing)."""
        return sorted(urls)

    #: The background search's snippets (for a direct answer, its sources).
    background: list[Passage] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    #: What was read of each source (its passages, at most READ_TEXT_LIMIT characters per source):
    #: a cited sentence is checked against this, not only the paragraphs kept for an observation,
    #: so a faithful paraphrase of a paragraph the research read is judged against that paragraph.
    read: dict[int, str] = Field(default_factory=dict)

    def keep_read(self, passages: list[Passage]) -> None:
        """Add what a step read to `read`, each paragraph once, bounded per source."""
        for passage in passages:
            had = self.read.get(passage.source_id, "")
            known = set(re.split(r"\n\s*\n", had))
            fresh = [p for p in re.split(r"\n\s*\n", passage.text) if p.strip() and p not in known]
            text = "\n\n".join([had, *fresh]).strip()
            if text:
                self.read[passage.source_id] = text[:READ_TEXT_LIMIT]

    def read_evidence(self, source_ids: list[int]) -> list[Evidence]:
        """What was read of the cited sources as evidence paragraphs, then the pool's own
        paragraphs for them (a direct answer's snippets, an observation's excerpts)."""
        found = [
            Evidence(source_id=n, position=i, text=block)
            for n in source_ids
            for i, block in enumerate(re.split(r"\n\s*\n", self.read.get(n, "")))
            if block.strip()
        ]
        known = {(e.source_id, e.text) for e in found}
        return found + [
            e
            for e in self.evidence_pool()
            if e.source_id in source_ids and (e.source_id, e.text) not in known
        ]

    def add_source(
        self,
        url: str,
        title: str,
        provider: str,
        log: EventLog,
        digest: str = "",
        paper: Paper | None = None,
        read: str = "",
    ) -> int:
        """The source's id, numbered in the order sources were first met; one id per URL. Its
        fingerprint is kept from the read that gave one (a standing research compares it).

        A PAPER (a scholarly index's hit; READ: how much of it was read) is one source per work:
        met again under another URL, from another index or as its preprint, it is the source
        already listed, which keeps the richest metadata of both (workflows/kit/papers.py) and
        `full_text` over `abstract`."""
        for source in self.sources:
            if source.url == url or (
                paper is not None and source.is_paper and same_work(paper_of(source), paper)
            ):
                source.digest = source.digest or digest
                if paper is not None:
                    _enrich(source, paper, read)
                return source.id
        source = Source(
            id=len(self.sources) + 1, url=url, title=title or url, provider=provider, digest=digest
        )
        if paper is not None:
            _enrich(source, paper, read)
        self.sources.append(source)
        emit(log, EventKind.SOURCE, f"source [{source.id}]: {source.title}", source.model_dump())
        return source.id

    def evidence_pool(self) -> list[Evidence]:
        """The evidence a claim may rest on: the pool gathered by the steps, and for a direct
        answer (no plan) the search snippets that were its sources."""
        direct = [
            Evidence(source_id=p.source_id, position=0, text=p.text)
            for p in self.background
            if p.source_id
        ]
        return [*self.evidence, *direct]


def paper_of(source: Source) -> Paper:
    """What a source records of its paper, as a Paper to compare and merge."""
    return Paper(
        doi=source.doi,
        arxiv_id=source.arxiv_id,
        authors=source.authors,
        year=source.year,
        venue=source.venue,
        retracted=source.retracted,
        kind=source.kind,
    )


def _enrich(source: Source, paper: Paper, read: str) -> None:
    """SOURCE with the richest of what it knew and PAPER says; a work any index calls retracted
    stays retracted, and a full text read once stays read."""
    both = merged(paper_of(source), paper) if source.is_paper else paper
    source.doi, source.arxiv_id, source.authors = both.doi, both.arxiv_id, list(both.authors)
    source.year, source.venue, source.kind = both.year, both.venue, both.kind
    source.retracted = both.retracted or paper.retracted or source.retracted
    full = PaperRead.FULL_TEXT.value
    source.read = full if full in (source.read, read) else PaperRead.ABSTRACT.value


class Oversight(Part):
    pending_review: ReviewTarget | None = None
    review_answer: ReviewAnswer | None = None
    review_rounds: int = 0
    #: The rounds the review now pending allows in all (`reviews.MAX_REVIEW_ROUNDS`).
    review_rounds_max: int = 0
    reviews: list[Review] = Field(default_factory=list)
    refinements: list[Refinement] = Field(default_factory=list)
    #: Plans made at a reviewer's request: they do not count against the reflector's re-plans.
    reviewer_plans: int = 0
    #: The plan iteration a person approved (its pending steps then run, whatever the reflector says).
    approved_plan: int = 0
    #: The approved steps an ADJUST re-plan kept, by title: they still run (loop/approved.py).
    approved_steps: list[str] = Field(default_factory=list)
    #: When the current wait for a person began, and how long earlier waits took: the time
    #: budget counts research time only.
    waiting_since: datetime | None = None
    paused_s: float = 0.0


class Writeup(Part):
    verification: VerificationSummary | None = None
    critique: Critique | None = None
    #: The engine that wrote the report.
    engine: str = ""
    #: The report a person is asked to approve, while the report review waits.
    draft: str | None = None
    #: Things the reader should know: an unanswered question, a spent budget, a fallback taken.
    notes: list[str] = Field(default_factory=list)


@dataclass
class Spending:
    """The budget's running bookkeeping (the `Budget` the result shows is derived from it)."""

    in_flight_tokens: int = 0
    in_flight_cost: float = 0.0
    #: The largest ratio seen between a call's prompt as the endpoint counted it and as estimated
    #: (input / CHARS_PER_TOKEN + PROMPT_OVERHEAD); None before any call. Estimates are scaled by it.
    ratio_seen: float | None = None
    #: The same, per role (a role's prompt text is its own size): admission estimates by it.
    ratio_by_role: dict[str, float] = field(default_factory=dict)
    #: Per role: the largest completion seen, and the model's prices (USD per 1M).
    completion_seen: dict[str, int] = field(default_factory=dict)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: The model without a known price, when one served a call under a cost budget.
    unpriced: str | None = None
    #: Steps done and planned when the budget stopped the research (for the partial label).
    stopped_after: tuple[int, int] | None = None
    #: Researches under a budget since patch REPORT_AS_AFFORDED (workflows/patches.py): prompts
    #: estimated from what the model is shown, a step admitted beside the report over what it adds.
    afforded_report: bool = False


class Ledger(Part):
    budget: Budget = Field(default_factory=Budget)
    spending: Spending = Field(default_factory=Spending)
    stats: Stats = Field(default_factory=Stats)
