"""The research vocabulary shared by the workflow, the activities and the starter.

Everything that crosses a Temporal boundary (workflow input and result, activity inputs and
outputs, the `status` query) is one of these pydantic models, so the pydantic data converter can
check shapes on both sides. The module is pure: no I/O, safe to import inside the workflow sandbox.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, Field

# --- limits that shape history size -------------------------------------------------------------

#: Longest page text (characters) an activity may return into history. A page is trimmed to its
#: passages most relevant to the step, so a medium research (6 steps x 3 pages) stays far below
#: Temporal's 2 MB history warning even though every page text is recorded twice (read, observe).
PAGE_TEXT_LIMIT = 4000
#: Longest search snippet kept per hit.
SNIPPET_LIMIT = 300
#: Longest observation a step may record.
OBSERVATION_LIMIT = 3000
#: The orchestrator sees the last N messages of the conversation (seed 000).
ROUTING_HISTORY = 10
QUERY_MIN_CHARS = 3
QUERY_MAX_CHARS = 5000
ANSWER_MAX_CHARS = 5000
#: Upper bounds of the request's durations: finite, and long enough for any real use (a person
#: may answer a question within a month; a research may run for a day). Larger values are
#: refused at the CLI and when the workflow starts, never left to fail later.
MAX_CLARIFICATION_TIMEOUT_S = 30 * 24 * 3600.0
MAX_TIME_BUDGET_S = 24 * 3600.0
#: Upper bounds of the token and cost budgets: generous, but finite.
MAX_TOKEN_BUDGET = 100_000_000
MAX_COST_BUDGET_USD = 10_000.0


class Stage(str, Enum):
    """Where a research is in the orchestrator's state machine (see workflows/stages.py)."""

    ROUTING = "routing"
    CLARIFYING = "clarifying"
    AWAITING_ANSWER = "awaiting_answer"
    AWAITING_PLAN_REVIEW = "awaiting_plan_review"
    COORDINATING = "coordinating"
    BACKGROUND = "background"
    PLANNING = "planning"
    RESEARCHING = "researching"
    REFLECTING = "reflecting"
    SYNTHESIZING = "synthesizing"
    VERIFYING = "verifying"
    REFINING = "refining"
    AWAITING_REPORT_REVIEW = "awaiting_report_review"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"


class Depth(str, Enum):
    AUTO = "auto"
    LIGHT = "light"
    MEDIUM = "medium"
    EXTENDED = "extended"


#: Plan size per depth (seed 002): the reflector may not COMPLETE before `min` steps are done and
#: the planner never plans more than `max`.
STEP_LIMITS: dict[Depth, tuple[int, int]] = {
    Depth.LIGHT: (1, 3),
    Depth.MEDIUM: (3, 6),
    Depth.EXTENDED: (5, 10),
}


class QueryMode(str, Enum):
    """deep: the whole pipeline; web: a one-step light plan; simple: a direct answer."""

    DEEP = "deep"
    WEB = "web"
    SIMPLE = "simple"


#: Time budget per mode in seconds (seed 002). When it runs out, a durable timer sends the research
#: to synthesis with what it has. Simple mode has none. Overridable per request.
MODE_BUDGET_S: dict[QueryMode, float | None] = {
    QueryMode.DEEP: 300.0,
    QueryMode.WEB: 15.0,
    QueryMode.SIMPLE: None,
}


class Speaker(str, Enum):
    USER = "user"
    ASSISTANT = "assistant"


class Message(BaseModel):
    role: Speaker
    content: str


class RoutingDecision(str, Enum):
    CLARIFICATION = "CLARIFICATION"
    RESEARCH = "RESEARCH"


class ReflectionDecision(str, Enum):
    CONTINUE = "CONTINUE"
    ADJUST = "ADJUST"
    COMPLETE = "COMPLETE"


class Complexity(str, Enum):
    SIMPLE = "simple"
    MODERATE = "moderate"
    COMPLEX = "complex"


class StepStatus(str, Enum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    SKIPPED = "skipped"


class Verdict(str, Enum):
    SUPPORTED = "supported"
    PARTIAL = "partial"
    UNSUPPORTED = "unsupported"
    UNVERIFIED = "unverified"


# --- the request ----------------------------------------------------------------------------------


class ReportReview(str, Enum):
    """When a person reviews the report: `auto` only when the critic asks for one."""

    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


class ResearchRequest(BaseModel):
    """What the user asked for. Never carries secrets: keys live in the worker's environment."""

    query: str
    depth: Depth = Depth.AUTO
    mode: QueryMode = QueryMode.DEEP
    max_clarifications: int = Field(default=2, ge=0, le=10)
    reply_shortcut: bool = True
    clarification_timeout_s: float = Field(default=24 * 3600.0, gt=0, le=MAX_CLARIFICATION_TIMEOUT_S, allow_inf_nan=False)
    #: None means the mode's default budget (MODE_BUDGET_S).
    time_budget_s: float | None = Field(default=None, gt=0, le=MAX_TIME_BUDGET_S, allow_inf_nan=False)
    #: Earlier conversation (a follow-up's history); the orchestrator routes over it.
    history: list[Message] = Field(default_factory=list)
    #: The workflow id of the research this one follows up (`research --follow-up ID`).
    follow_up_of: str | None = None
    #: Verify each cited claim against its evidence and have the critic score the report.
    #: Off trades trust for speed: claims stay `unverified`.
    verify: bool = True
    #: After each plan is made, wait for a person to approve, revise or edit it (see reviews.py).
    review_plan: bool = False
    #: Wait for a person before the report is final (see refining.py).
    review_report: ReportReview = ReportReview.AUTO
    #: How long a review waits for a person; then the plan is taken as proposed.
    review_timeout_s: float = Field(default=3600.0, gt=0, le=MAX_CLARIFICATION_TIMEOUT_S, allow_inf_nan=False)
    #: Token budget for the whole research, report and verification included (None: no limit).
    max_tokens: int | None = Field(default=None, gt=0, le=MAX_TOKEN_BUDGET)
    #: Cost budget in USD, priced from LLM_PRICES or the built-in table (None: no limit).
    max_cost_usd: float | None = Field(default=None, gt=0, le=MAX_COST_BUDGET_USD, allow_inf_nan=False)
    #: Continue as new after this many waves of steps in one run (None: only when Temporal
    #: suggests it). An operator's cap on one run's history; the tests force it with it.
    steps_per_run: int | None = Field(default=None, ge=1, le=100)
    #: The report's language: "auto" (the question's) or a code such as "de" or "vi".
    language: str = Field(default="auto", pattern=r"^(auto|[a-z]{2,3}(-[A-Za-z]{2,4})?)$")


class RoutingLayer(str, Enum):
    """Which of the orchestrator's three routing layers decided (seed 000), or the fallback."""

    LIMIT = "limit"
    REPLY = "reply"
    LLM = "llm"
    FALLBACK = "fallback"


class ReviewDecision(str, Enum):
    APPROVE = "approve"
    REVISE = "revise"
    CANCEL = "cancel"


class ReviewTarget(str, Enum):
    PLAN = "plan"
    REPORT = "report"


class ProposedStep(BaseModel):
    """A step a person writes in place of the planner's (`review --steps FILE`)."""

    title: str = Field(max_length=200)
    description: str = Field(default="", max_length=1000)


class ReviewAnswer(BaseModel):
    """A person's answer to a pending review: the `plan_review` / `report_review` signal's one
    JSON object, e.g. `{"decision": "approve"}`. `decision` must be exactly one of the three
    values: anything else is refused, never taken as approval."""

    model_config = {"extra": "forbid"}

    decision: ReviewDecision
    feedback: str = Field(default="", max_length=ANSWER_MAX_CHARS)
    #: Plan reviews only: these replace the steps not yet done.
    steps: list[ProposedStep] | None = None


class RefinementAction(str, Enum):
    """What one pass of the refining loop did about the critic's issues."""

    #: New steps on what is missing, researched through the wave loop, then the report again.
    RESEARCH = "research"
    #: The report written again with the issues (and the critic's suggestion) as feedback.
    REWRITE = "rewrite"


class Refinement(BaseModel):
    """One pass of the refining loop: the critic's issues it answered and what was done."""

    round: int
    issues: list[str]
    action: RefinementAction


class DecidedBy(str, Enum):
    """Who decided a review: a person, or the clock when nobody answered in time."""

    PERSON = "person"
    TIMEOUT = "timeout"


class Review(BaseModel):
    """A review as it happened: who decided (`person`, or `timeout`) what, in which round."""

    target: ReviewTarget
    round: int
    decision: ReviewDecision
    feedback: str = ""
    by: DecidedBy = DecidedBy.PERSON


# --- the research record --------------------------------------------------------------------------


class Source(BaseModel):
    """A document the research read or found; report citations `[n]` refer to `id`."""

    id: int
    url: str
    title: str
    provider: str = ""


class StepOrigin(str, Enum):
    """Who put a step in the plan."""

    PLANNER = "planner"
    #: A previous step asked for it (seed 003).
    LOOP_BACK = "loop_back"
    #: A person wrote it in a plan review.
    REVIEWER = "reviewer"


class PlanStep(BaseModel):
    title: str
    description: str = ""
    status: StepStatus = StepStatus.PENDING
    observation: str | None = None
    source_ids: list[int] = Field(default_factory=list)
    origin: StepOrigin = StepOrigin.PLANNER
    #: The search queries the planner wrote for the step (empty: they are written when it runs).
    queries: list[str] = Field(default_factory=list)
    #: The planner found it needs nothing from the steps before it: it may run beside them.
    independent: bool = False


class Plan(BaseModel):
    title: str
    thought: str = ""
    iteration: int = 1
    steps: list[PlanStep] = Field(default_factory=list)


class Reflection(BaseModel):
    decision: ReflectionDecision
    reasoning: str
    suggested_changes: list[str] = Field(default_factory=list)
    #: The steps (1-based) this reflection judged, when several were researched at once.
    steps: list[int] = Field(default_factory=list)


class Clarification(BaseModel):
    question: str
    answer: str | None = None


class Evidence(BaseModel):
    """A paragraph of a source that backs a step's observation (see workflows/evidence.py)."""

    source_id: int
    #: The paragraph's position in the passage read for the step.
    position: int
    text: str


class CheckedBy(str, Enum):
    """What decided a claim's verdict."""

    #: The cheap word-overlap check (inside the workflow, or the offline engine's judge).
    LEXICAL = "lexical"
    #: The LLM judge.
    JUDGE = "judge"
    #: Not checked.
    NOBODY = ""


class Claim(BaseModel):
    """A cited sentence of the report and what checking it against its evidence found."""

    text: str
    source_ids: list[int]
    verdict: Verdict = Verdict.UNVERIFIED
    #: Why the verdict was given (the judge's reason, or the lexical check's figures).
    reason: str = ""
    checked_by: CheckedBy = CheckedBy.NOBODY
    #: The sentence as first written, when it was rewritten after an `unsupported` verdict.
    original: str | None = None
    #: True when the sentence was taken out of the report (still unsupported after rewriting).
    removed: bool = False


class VerificationSummary(BaseModel):
    """How many of the report's claims their cited evidence supports (final verdicts)."""

    enabled: bool = True
    #: "lexical" (offline engine) or "lexical+judge".
    method: str = ""
    claims: int = 0
    supported: int = 0
    partial: int = 0
    unsupported: int = 0
    unverified: int = 0
    revised: int = 0
    removed: int = 0
    #: supported / claims, 0 when there are no claims.
    share_supported: float = 0.0


class IssueSeverity(str, Enum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class CritiqueIssue(BaseModel):
    severity: IssueSeverity
    text: str


#: At most this many issues are kept from one critique.
MAX_CRITIQUE_ISSUES = 20


class Critique(BaseModel):
    """The critic's verdict (seed 004): two scores, each 0.0-1.0 with its reason, and whether the
    report may go out as it is; if not, what is wrong and how to rewrite it, and whether only a
    person can decide."""

    quality: float = Field(ge=0.0, le=1.0)
    quality_reason: str
    hallucination_risk: float = Field(ge=0.0, le=1.0)
    hallucination_reason: str
    is_acceptable: bool = True
    issues: list[CritiqueIssue] = Field(default_factory=list)
    rewrite_suggestion: str = ""
    requires_human_input: bool = False


class LoopBack(BaseModel):
    """A step's request for more work and what the orchestrator did with it (seed 003)."""

    after_step: int
    agent: str
    query: str
    accepted: bool
    reason: str


class TokenCount(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Stats(BaseModel):
    """What the research cost. LLM figures are what the endpoint served: `llm_calls` counts every
    completion returned (a reply that failed validation and was asked again counts twice), and
    `llm_retries` counts the activity attempts after the first, whatever their outcome."""

    llm_calls: int = 0
    llm_calls_by_role: dict[str, int] = Field(default_factory=dict)
    llm_retries: int = 0
    llm_retries_by_role: dict[str, int] = Field(default_factory=dict)
    tokens_by_role: dict[str, TokenCount] = Field(default_factory=dict)
    searches: int = 0
    pages_fetched: int = 0
    duration_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: What the LLM calls cost in USD (prices: LLM_PRICES or the built-in table); None when a
    #: model in use has no known price. The offline engine costs 0.
    cost_usd: float | None = 0.0


class BudgetKind(str, Enum):
    TOKENS = "tokens"
    COST = "cost"
    TIME = "time"


class Budget(BaseModel):
    """The research's budgets and what was spent against them; `exhausted` names the budget
    that stopped the research early (its report is then partial and says so)."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    time_budget_s: float | None = None
    spent_tokens: int = 0
    spent_cost_usd: float | None = 0.0
    exhausted: BudgetKind | None = None


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
    #: The critic's verdict, while the report waits for a person's review.
    critique: Critique | None = None
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
    #: The refining loop's passes (at most 2, plus one a reviewer asks for).
    refinements: list[Refinement] = Field(default_factory=list)
    #: Things the reader should know: an unanswered question, a spent budget, a fallback taken.
    notes: list[str] = Field(default_factory=list)
    #: The budgets and what was spent; None when the research predates budgets.
    budget: Budget | None = None
    #: The report's language code (the question's, detected, unless the request named one).
    language: str = "en"


class Passage(BaseModel):
    """Trimmed text of one source, the unit the researcher and synthesizer read."""

    source_id: int
    title: str
    url: str
    text: str
