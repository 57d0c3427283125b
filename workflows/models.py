"""The research vocabulary shared by the workflow, the activities and the starter.

Everything that crosses a Temporal boundary (workflow input and result, activity inputs and
outputs, the `status` query) is one of these pydantic models, so the pydantic data converter can
check shapes on both sides. The module is pure: no I/O, safe to import inside the workflow sandbox.

Four parts: the request and its choices (`workflows/request.py`), the research record
(`workflows/record.py`), what it spent (`workflows/spending.py`), and here the two views of a
research the outside world reads, the `status` query's answer and the result. Every name of the
first three is re-exported here, so `from workflows.models import X` works for all of them.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from workflows.record import (  # noqa: F401 (re-exported)
    ANSWER_MAX_CHARS,
    MAX_CRITIQUE_ISSUES,
    OBSERVATION_LIMIT,
    PAGE_TEXT_LIMIT,
    ROUTING_HISTORY,
    SNIPPET_LIMIT,
    Calibration,
    CheckedBy,
    Claim,
    Clarification,
    Complexity,
    Critique,
    CritiqueIssue,
    DecidedBy,
    Evidence,
    IssueSeverity,
    LoopBack,
    Paper,
    PaperRead,
    Passage,
    Plan,
    PlanStep,
    ProposedStep,
    Refinement,
    RefinementAction,
    Reflection,
    ReflectionDecision,
    Review,
    ReviewAnswer,
    ReviewDecision,
    ReviewTarget,
    RoutingDecision,
    RoutingLayer,
    Source,
    Stage,
    StepOrigin,
    StepStatus,
    Verdict,
    VerificationSummary,
)
from workflows.request import (  # noqa: F401 (re-exported)
    MAX_CLARIFICATION_TIMEOUT_S,
    MAX_COST_BUDGET_USD,
    MAX_TIME_BUDGET_S,
    MAX_TOKEN_BUDGET,
    MODE_BUDGET_S,
    QUERY_MAX_CHARS,
    QUERY_MIN_CHARS,
    STEP_LIMITS,
    TARGET_WORDS,
    Depth,
    Message,
    QueryMode,
    ReportReview,
    ResearchRequest,
    Sources,
    Speaker,
)
from workflows.spending import Budget, BudgetKind, Stats, TokenCount  # noqa: F401 (re-exported)
from workflows.standing_messages import Changes


class ResearchStatus(BaseModel):
    """The answer to the `status` query: enough to draw a progress line or a dashboard."""

    query: str
    stage: Stage
    stage_history: list[Stage]
    pending_question: str | None
    clarification_count: int
    plan: Plan | None
    current_step_index: int
    plan_iterations: int
    reflections: list[Reflection]
    sources_count: int
    depth: Depth
    mode: QueryMode
    loop_backs: list[LoopBack] = Field(default_factory=list)
    #: The last refused signals (at most 20) and how many were refused in all.
    ignored_signals: list[str] = Field(default_factory=list)
    ignored_signals_count: int = 0
    notes: list[str] = Field(default_factory=list)
    #: "plan" or "report" while a person's review is awaited, else None.
    pending_review: ReviewTarget | None = None
    #: Review rounds so far for the plan (or report) now under review.
    review_rounds: int = 0
    #: The rounds that review allows in all: the answer to the last one is final (a revision
    #: then is not shown again). 0 when no review was asked for.
    review_rounds_max: int = 0
    #: The critic's verdict and the draft report, while the report waits for a person's review.
    critique: Critique | None = None
    draft_report_markdown: str | None = None
    #: Who the research belongs to (the web app's user, or RESEARCH_USER for the CLI and MCP).
    owner: str = "local"
    #: The research this one follows up, if any.
    follow_up_of: str | None = None
    #: The standing research this research is a run of, if any.
    standing_id: str | None = None
    #: The oldest event the `events` query still holds and the newest (0 when there are none).
    first_event_seq: int = 0
    last_event_seq: int = 0


class ResearchResult(BaseModel):
    query: str
    outcome: Stage  # completed, cancelled or failed
    report_markdown: str
    sources: list[Source]
    claims: list[Claim]
    clarifications: list[Clarification]
    plan: Plan | None
    plan_iterations: int
    reflections: list[Reflection]
    stage_history: list[Stage]
    stats: Stats
    depth: Depth
    mode: QueryMode
    engine: str
    loop_backs: list[LoopBack] = Field(default_factory=list)
    #: What each cited source says in support of the observations that cite it.
    evidence: list[Evidence] = Field(default_factory=list)
    #: Claim verification counts; None when the research predates verification.
    verification: VerificationSummary | None = None
    #: The critic's scores; None when verification was off or the critic was unavailable.
    critique: Critique | None = None
    follow_up_of: str | None = None
    #: Every review a person (or its timeout) gave, in order.
    reviews: list[Review] = Field(default_factory=list)
    #: The refining loop's passes (at most 2, plus one each time a reviewer asks for a revision).
    refinements: list[Refinement] = Field(default_factory=list)
    #: Things the reader should know: an unanswered question, a spent budget, a fallback taken.
    notes: list[str] = Field(default_factory=list)
    #: The budgets and what was spent; None when the research predates budgets.
    budget: Budget | None = None
    #: The report's language code (the question's, detected, unless the request named one).
    language: str = "en"
    #: Who the research belongs to; research stored before owners belongs to `local`.
    owner: str = "local"
    #: The standing research this research is a run of, and what changed since its previous run
    #: (None for the first run and for research that is no run of a standing research).
    standing_id: str | None = None
    changes: Changes | None = None
    #: Where it searched (the request's `sources`): research asked again searches the same.
    searched: Sources = Sources.CONFIGURED
