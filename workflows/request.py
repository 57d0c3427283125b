"""What a person asks for: the research request and its choices (depth, mode, budgets, reviews).

Re-exported by `workflows.models`, the vocabulary every package imports. Pure: no I/O.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from workflows.text import has_lone_surrogate, without_controls

#: Length bounds of the question.
QUERY_MIN_CHARS = 3
QUERY_MAX_CHARS = 5000
#: Upper bounds of the request's durations: finite, and long enough for any real use (a person
#: may answer a question within a month; a research may run for a day). Larger values are
#: refused at the CLI and when the workflow starts, never left to fail later.
MAX_CLARIFICATION_TIMEOUT_S = 30 * 24 * 3600.0
MAX_TIME_BUDGET_S = 24 * 3600.0
#: Upper bounds of the token and cost budgets: generous, but finite.
MAX_TOKEN_BUDGET = 100_000_000
MAX_COST_BUDGET_USD = 10_000.0


def _entered(text: str) -> str:
    """Text a person (or any client) typed: control characters and bidi overrides removed, so it
    cannot drive a terminal or reorder a report's line; a lone surrogate, which no UTF-8 payload
    can carry on to an activity, refused at once rather than failing every later step."""
    if has_lone_surrogate(text):
        raise ValueError("contains an undecodable character (a lone surrogate)")
    return without_controls(text)


#: A string as a person entered it (questions, answers, feedback, reviewer steps).
Entered = Annotated[str, AfterValidator(_entered)]


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
#: Report length targets in words, by depth: a light report answers, a medium one explains each
#: facet, an extended one goes into depth on each.
TARGET_WORDS: dict[Depth, int] = {
    Depth.LIGHT: 500,
    Depth.MEDIUM: 1200,
    Depth.EXTENDED: 2500,
    Depth.AUTO: 1200,
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
    content: Entered


class Sources(str, Enum):
    """Where a research searches: `configured` is what SEARCH_PROVIDER, SEARCH_STRATEGY and
    SEARCH_FALLBACK_PROVIDERS say (the behaviour before this choice existed); `web` the configured
    web providers only (never `local`); `documents` the local corpus and the person's uploaded
    documents only; `both` the two, merged."""

    CONFIGURED = "configured"
    WEB = "web"
    DOCUMENTS = "documents"
    BOTH = "both"
    #: The scholarly indexes of SCHOLARLY_PROVIDERS (OpenAlex, arXiv, Crossref, ...) only.
    PAPERS = "papers"

    @property
    def documents(self) -> bool:
        """The person's uploaded documents are searched (so the search needs their owner)."""
        return self in (Sources.DOCUMENTS, Sources.BOTH)

    @property
    def web(self) -> bool:
        """Only the configured web providers can answer (so some must be configured)."""
        return self in (Sources.WEB, Sources.BOTH)

    @property
    def papers(self) -> bool:
        """The scholarly indexes are searched, each on its own rate-limited task queue."""
        return self is Sources.PAPERS


class ReportReview(str, Enum):
    """When a person reviews the report: `auto` only when the critic asks for one."""

    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


class ResearchRequest(BaseModel):
    """What the user asked for. Never carries secrets: keys live in the worker's environment."""

    query: Entered
    depth: Depth = Depth.AUTO
    mode: QueryMode = QueryMode.DEEP
    max_clarifications: int = Field(default=2, ge=0, le=10)
    reply_shortcut: bool = True
    clarification_timeout_s: float = Field(
        default=24 * 3600.0, gt=0, le=MAX_CLARIFICATION_TIMEOUT_S, allow_inf_nan=False
    )
    #: None means the mode's default budget (MODE_BUDGET_S).
    time_budget_s: float | None = Field(
        default=None, gt=0, le=MAX_TIME_BUDGET_S, allow_inf_nan=False
    )
    #: Earlier conversation (a follow-up's history); the orchestrator routes over it.
    history: list[Message] = Field(default_factory=list)
    #: The workflow id of the research this one follows up (`research --follow-up ID`).
    follow_up_of: str | None = None
    #: Verify each cited claim against its evidence and have the critic score the report.
    #: Off trades trust for speed: claims stay `unverified`.
    verify: bool = True
    #: After each plan is made, wait for a person to approve, revise or edit it (see reviews.py).
    review_plan: bool = False
    #: Review each automatic re-plan (the reflector's ADJUST) too. Off: one review of the plan,
    #: so a person who approved (or wrote) the steps is not asked again for every adjustment.
    review_replans: bool = False
    #: Wait for a person before the report is final (see refining.py).
    review_report: ReportReview = ReportReview.AUTO
    #: Someone is there to answer a review: an attached terminal, the web app, an MCP host that
    #: said so. Set by the client, never by a person's flag. `auto` report reviews ask only then:
    #: a detached or scripted start never waits an hour for nobody.
    attended: bool = False
    #: How long a review waits for a person; then the plan is taken as proposed.
    review_timeout_s: float = Field(
        default=3600.0, gt=0, le=MAX_CLARIFICATION_TIMEOUT_S, allow_inf_nan=False
    )
    #: Token budget for the whole research, report and verification included (None: no limit).
    max_tokens: int | None = Field(default=None, gt=0, le=MAX_TOKEN_BUDGET)
    #: Cost budget in USD, priced from LLM_PRICES or the built-in table (None: no limit).
    max_cost_usd: float | None = Field(
        default=None, gt=0, le=MAX_COST_BUDGET_USD, allow_inf_nan=False
    )
    #: Continue as new after this many waves of steps in one run (None: only when Temporal
    #: suggests it). An operator's cap on one run's history; the tests force it with it.
    steps_per_run: int | None = Field(default=None, ge=1, le=100)
    #: Who the research belongs to: set by the client from who asked (the web app's signed-in user,
    #: RESEARCH_USER for the CLI and MCP), never taken from a request body.
    owner: Entered = Field(default="local", min_length=1, max_length=200)
    #: The report's language: "auto" (the question's) or an ISO 639 code such as "de", "vi" or "pt-BR".
    language: str = Field(default="auto", pattern=r"^(auto|[a-z]{2,3}(-[A-Za-z]{2,4})?)$")
    #: The standing research this research is a run of (set by its schedule, never by a person's
    #: flag): its report then says what changed since the previous run (workflows/standing/changes.py).
    standing_id: str | None = Field(default=None, max_length=200)
    #: Where the research searches (`Sources`); `configured` searches as before this field existed,
    #: and its searches' inputs are the same bytes as then (`SearchInput`).
    sources: Sources = Sources.CONFIGURED
    #: Webhook URLs of this research's own (a standing research's `notify`), besides
    #: RESEARCH_WEBHOOKS. Addresses only: the signing secret stays in the worker's settings.
    notify: list[str] = Field(default_factory=list, max_length=5)
