"""Everything a research keeps, in one place, and the two views of it the outside world reads.

The workflow's memory is this object: stage functions read and change it, the `status` query and
the result are projections of it (`status()`, `result()`), so a new piece of state is one field
here plus one line in whichever projection shows it. Pure bookkeeping: no activity calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from workflows import budget as budgets
from workflows import events as stream
from workflows import followup
from workflows.activity_models import AboutQuestion
from workflows.events import EventLog, EventKind, emit
from workflows.models import (
    STEP_LIMITS,
    Budget,
    BudgetKind,
    Claim,
    Clarification,
    Complexity,
    Critique,
    Depth,
    Evidence,
    LoopBack,
    Message,
    Passage,
    Plan,
    QueryMode,
    Reflection,
    ResearchRequest,
    ResearchResult,
    ResearchStatus,
    Refinement,
    Review,
    ReviewAnswer,
    ReviewTarget,
    Source,
    Stage,
    Stats,
    StepStatus,
    VerificationSummary,
)
from workflows.routing import Route

IGNORED_SIGNALS_KEPT = 20


@dataclass
class ResearchState:
    request: ResearchRequest = field(default_factory=lambda: ResearchRequest(query=""))
    stage: Stage = Stage.ROUTING
    stage_history: list[Stage] = field(default_factory=lambda: [Stage.ROUTING])
    # --- the conversation (seed 000) ---
    messages: list[Message] = field(default_factory=list)
    last_agent: str | None = None
    clarifications: list[Clarification] = field(default_factory=list)
    pending_question: str | None = None
    answer: str | None = None
    #: The last IGNORED_SIGNALS_KEPT refused signals, and how many there were in all: a client
    #: sending bad signals in a loop must not grow the workflow's state without bound.
    ignored_signals: list[str] = field(default_factory=list)
    ignored_signals_count: int = 0
    routes: list[Route] = field(default_factory=list)
    # --- the research (seed 002) ---
    depth: Depth = Depth.AUTO
    complexity: Complexity | None = None
    background: list[Passage] = field(default_factory=list)
    #: The background search's queries, as the coordinator wrote them with its classification.
    background_queries: list[str] = field(default_factory=list)
    plan: Plan | None = None
    plan_iterations: int = 0
    current_step_index: int = 0
    reflections: list[Reflection] = field(default_factory=list)
    loop_backs: list[LoopBack] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    read_urls: set[str] = field(default_factory=set)
    #: Pages that could not be read: never fetched again, never a source.
    unreadable_urls: set[str] = field(default_factory=set)
    evidence: list[Evidence] = field(default_factory=list)
    # --- a person's reviews (reviews.py) ---
    pending_review: ReviewTarget | None = None
    review_answer: ReviewAnswer | None = None
    review_rounds: int = 0
    reviews: list[Review] = field(default_factory=list)
    refinements: list[Refinement] = field(default_factory=list)
    #: Plans made at a reviewer's request: they do not count against the reflector's re-plans.
    reviewer_plans: int = 0
    #: The plan iteration a person approved (its pending steps then run, whatever the reflector says).
    approved_plan: int = 0
    #: When the current wait for a person began, and how long earlier waits took: the time
    #: budget counts research time only.
    waiting_since: datetime | None = None
    paused_s: float = 0.0
    # --- the report ---
    verification: VerificationSummary | None = None
    critique: Critique | None = None
    notes: list[str] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    engine: str = ""
    # --- budgets and language (budget.py, language.py) ---
    budget: Budget = field(default_factory=Budget)
    spending: budgets.Spending = field(default_factory=budgets.Spending)
    #: The report's language code, decided when the research starts.
    language: str = "en"
    # --- a long research continued as new (research.py) ---
    #: When the research began (the first run), its research time in earlier runs, and how many
    #: times it continued as new.
    started_at: datetime | None = None
    research_elapsed_s: float = 0.0
    runs: int = 0
    #: What happened, in order, for the `events` query (workflows/events.py).
    events: EventLog = field(default_factory=EventLog)

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
            "clarifications": [c.answer for c in self.clarifications if c.answer],
            "language": self.language,
        }

    def topic_text(self) -> str:
        """The question with what it follows up and its clarifications, in one line (for focus)."""
        return AboutQuestion(**self.about()).topic_text()

    def meant(self) -> str:
        """The question as the person meant it, after their clarification answers (clarified.py)."""
        return AboutQuestion(**self.about()).meant()

    # --- the plan -------------------------------------------------------------------------------

    def step_limits(self) -> tuple[int, int]:
        """The plan's minimum and maximum step counts: web mode is one step, else the depth's."""
        if self.request.mode is QueryMode.WEB:
            return 1, 1
        return STEP_LIMITS[self.depth if self.depth is not Depth.AUTO else Depth.MEDIUM]

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
        return sum(1 for s in self.plan.steps if s.status is StepStatus.COMPLETED) if self.plan else 0

    def skip_pending(self, why: str) -> None:
        for step in self.plan.steps if self.plan else []:
            if step.status in (StepStatus.PENDING, StepStatus.IN_PROGRESS):
                step.status = StepStatus.SKIPPED
                step.description = f"{step.description} (skipped: {why})".strip()

    # --- budgets ---------------------------------------------------------------------------------

    def report_reserve(self, sectioned: bool = False) -> tuple[int, float]:
        """What writing and checking the report will likely take, sized from what was gathered.
        The research keeps the reserve of a report written in one call (the cheapest form); a
        budget with room for more gets a report in sections (reporting.py)."""
        steps = budgets.completed(self.plan.steps) if self.plan else []
        observations = sum(len(s.observation or "") for s in steps) + sum(len(p.text) for p in self.background)
        evidence = sum(len(e.text) for e in self.evidence)
        return budgets.reserve(
            self.spending,
            sectioned=sectioned,
            sections=max(len(steps), 1),
            observations_chars=observations + 200 * len(self.sources),
            evidence_chars=evidence,
            verify=self.request.verify,
            words=self.report_words(),
        )

    def report_words(self) -> int:
        return budgets.report_words(self.depth, self.steps_done(), len(self.plan.steps) if self.plan else 0)

    def over_budget(self, tokens: int, cost: float) -> BudgetKind | None:
        """The budget that `tokens` / `cost` more, on top of what is spent and in flight, would
        break; a cost budget cannot be kept once a model without a price has served a call."""
        if self.spending.unpriced and self.budget.max_cost_usd is not None:
            return BudgetKind.COST
        return budgets.exceeded(
            self.budget, self.budget.spent_tokens + self.spending.in_flight_tokens + tokens,
            (self.budget.spent_cost_usd or 0.0) + self.spending.in_flight_cost + cost,
        )

    def stop_for_budget(self, kind: BudgetKind) -> None:
        """Record which budget stopped the research, after how many steps; skip the rest."""
        if self.budget.exhausted is not None:
            return
        self.budget.exhausted = kind
        planned = len(self.plan.steps) if self.plan else 0
        self.spending.stopped_after = (self.steps_done(), planned)
        why = (budgets.partial_line(self.budget, self.spending) or "").removeprefix("> Partial report: ")
        self.notes.append(f"{why[:1].upper()}{why[1:].rstrip('.')}; the report covers what was found by then.")
        self.skip_pending(f"the {kind.value} budget ran out")
        stream.budget_spent(self)  # the event stream says so too

    # --- sources --------------------------------------------------------------------------------

    def add_source(self, url: str, title: str, provider: str) -> int:
        """The source's id, numbered in the order sources were first met; one id per URL."""
        for source in self.sources:
            if source.url == url:
                return source.id
        source = Source(id=len(self.sources) + 1, url=url, title=title or url, provider=provider)
        self.sources.append(source)
        emit(self, EventKind.SOURCE, f"source [{source.id}]: {source.title}", source.model_dump())
        return source.id

    def evidence_pool(self) -> list[Evidence]:
        """The evidence a claim may rest on: the pool gathered by the steps, and for a direct
        answer (no plan) the search snippets that were its sources."""
        direct = [Evidence(source_id=p.source_id, position=0, text=p.text) for p in self.background if p.source_id]
        return [*self.evidence, *direct]

    def ignore_signal(self, why: str) -> None:
        self.ignored_signals.append(why)
        del self.ignored_signals[:-IGNORED_SIGNALS_KEPT]
        self.ignored_signals_count += 1
        emit(self, EventKind.SIGNAL_IGNORED, why, {"count": self.ignored_signals_count})

    # --- the two projections --------------------------------------------------------------------

    def status(self) -> ResearchStatus:
        return ResearchStatus(
            query=self.question,
            stage=self.stage,
            stage_history=self.stage_history,
            pending_question=self.pending_question,
            clarification_count=len(self.clarifications),
            plan=self.plan,
            current_step_index=self.current_step_index,
            plan_iterations=self.plan_iterations,
            reflections=self.reflections,
            sources_count=len(self.sources),
            depth=self.depth,
            mode=self.request.mode,
            loop_backs=self.loop_backs,
            ignored_signals=self.ignored_signals,
            ignored_signals_count=self.ignored_signals_count,
            notes=self.notes,
            pending_review=self.pending_review,
            review_rounds=self.review_rounds,
            critique=self.critique if self.pending_review is ReviewTarget.REPORT else None,
            first_event_seq=self.events.dropped + 1 if self.events.items else 0,
            last_event_seq=self.events.last_seq,
        )

    def result(self, report: str, claims: list[Claim], started: datetime, now: datetime) -> ResearchResult:
        self.stats.duration_s = round((now - started).total_seconds(), 3)
        return ResearchResult(
            query=self.question,
            outcome=self.stage,
            report_markdown=report,
            sources=self.sources,
            claims=claims,
            clarifications=self.clarifications,
            plan=self.plan,
            plan_iterations=self.plan_iterations,
            reflections=self.reflections,
            stage_history=self.stage_history,
            stats=self.stats,
            depth=self.depth,
            mode=self.request.mode,
            engine=self.engine,
            loop_backs=self.loop_backs,
            evidence=self.evidence,
            verification=self.verification,
            critique=self.critique,
            follow_up_of=self.request.follow_up_of,
            reviews=self.reviews,
            refinements=self.refinements,
            notes=self.notes,
            budget=self.budget,
            language=self.language,
        )

    def details(self) -> str:
        """What the Temporal Web UI shows under "Current details"."""
        lines = [f"**Stage:** {self.stage.value}"]
        if self.pending_question:
            lines.append(f"**Waiting for an answer:** {self.pending_question}")
            lines.append('Answer with signal `clarification_answer` and a JSON string, e.g. `"the 2024 paper"`.')
        if self.pending_review:
            target = self.pending_review.value
            lines.append(f"**Waiting for a review of the {target}** (round {self.review_rounds}).")
            lines.append(f"Send signal `{target}_review` with a JSON object: `{{\"decision\": \"approve\"}}`, "
                         f"`{{\"decision\": \"revise\", \"feedback\": \"...\"}}` or `{{\"decision\": \"cancel\"}}`.")
        if self.plan:
            lines.append(f"**Plan** (iteration {self.plan_iterations}): {self.steps_done()}/{len(self.plan.steps)} steps done")
            for i, step in enumerate(self.plan.steps):
                about = f": {step.description}" if self.pending_review and step.description else ""
                lines.append(f"{i + 1}. [{step.status.value}] {step.title}{about}")
        lines.append(f"**Sources:** {len(self.sources)}")
        if self.reflections:
            last = self.reflections[-1]
            lines.append(f"**Last reflection:** {last.decision.value}: {last.reasoning[:200]}")
        return "\n\n".join(lines)
