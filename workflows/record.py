"""The research record: what a research decides and finds, as its status and result show it.

Stages, plans and their steps, reflections, sources, evidence, claims, the critic's verdict,
reviews and refinements: the pieces of `ResearchStatus` and `ResearchResult` (workflows/models.py,
which re-exports them all), and of the workflow's own state. What the research spent against its
budgets is apart (workflows/spending.py). Pure: no I/O.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from pydantic import BaseModel, Field

from workflows.request import Entered

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
#: Longest answer a person may give: a clarification answer, a review's feedback.
ANSWER_MAX_CHARS = 5000


class Stage(str, Enum):
    """Where a research is in the orchestrator's state machine (see workflows/accounting/stages.py)."""

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


class Waiting(NamedTuple):
    """What a research waiting in a stage waits for."""

    #: The notices' `waiting_for` (webhooks, email: a key receivers match on).
    key: str
    #: The words people read ("waits for a plan review").
    words: str


#: The stages that wait for a person: the one table the listing (`list --pending`), the notices
#: (`research.waiting`) and the pages read. A new waiting stage is its `Stage` value, its row
#: here, and the stage that enters it (docs/architecture.md).
WAITING: dict[Stage, Waiting] = {
    Stage.AWAITING_ANSWER: Waiting("clarification", "an answer"),
    Stage.AWAITING_PLAN_REVIEW: Waiting("plan_review", "a plan review"),
    Stage.AWAITING_REPORT_REVIEW: Waiting("report_review", "a report review"),
}


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

    title: Entered = Field(max_length=200)
    description: Entered = Field(default="", max_length=1000)


class ReviewAnswer(BaseModel):
    """A person's answer to a pending review: the `plan_review` / `report_review` signal's one
    JSON object, e.g. `{"decision": "approve"}`. `decision` must be exactly one of the three
    values: anything else is refused, never taken as approval."""

    model_config = {"extra": "forbid"}

    decision: ReviewDecision
    feedback: Entered = Field(default="", max_length=ANSWER_MAX_CHARS)
    #: Plan reviews only: these replace the steps not yet done.
    steps: list[ProposedStep] | None = None
    #: The round the reviewer saw: the plan iteration for a plan review, the review round for a
    #: report review. When given, an answer meant for an earlier round is refused (a person and an
    #: agent reviewing together cannot approve a plan one of them never saw).
    round: int | None = Field(default=None, ge=1)


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


def _empty(value: object) -> bool:
    return value in ("", None, False, [])


class PaperRead(str, Enum):
    """How much of a paper the research read: its open-access full text, or its abstract only."""

    FULL_TEXT = "full_text"
    ABSTRACT = "abstract"


class Paper(BaseModel):
    """A scholarly work as the indexes describe it (OpenAlex, arXiv, Crossref, ...): what a
    reference manager needs to cite it and what the research needs to read it. Every field may be
    empty: indexes disagree on what they know, and merging keeps the richest (workflows/kit/papers.py)."""

    #: Bare and lower-case (`10.1234/abc`), never a resolver URL.
    doi: str = Field(default="", exclude_if=_empty)
    #: Without its version (`2101.00001`, `hep-th/9901001`).
    arxiv_id: str = Field(default="", exclude_if=_empty)
    authors: list[str] = Field(default_factory=list, exclude_if=_empty)
    year: int | None = Field(default=None, exclude_if=_empty)
    venue: str = Field(default="", exclude_if=_empty)
    retracted: bool = Field(default=False, exclude_if=_empty)
    #: An open-access full text (HTML or PDF) the crawler may read; "" when none is known.
    full_text_url: str = Field(default="", exclude_if=_empty)
    #: The abstract (plain text, trimmed to PAGE_TEXT_LIMIT), read when no full text can be.
    abstract: str = Field(default="", exclude_if=_empty)
    #: `article`, `preprint`, `book`, `chapter`, `proceedings` ... (for the reference exports).
    kind: str = Field(default="", exclude_if=_empty)
    #: The indexes that found it (`openalex`, `arxiv`, `crossref`, ...).
    found_in: list[str] = Field(default_factory=list, exclude_if=_empty)


class Source(BaseModel):
    """A document the research read or found; report citations `[n]` refer to `id`.

    A paper (a hit of a scholarly index) also carries its metadata, flat as the result shows it
    (`../shared/INTERFACE.md`, "A paper as a source"); a web page or a document leaves them empty,
    and empty fields are left out of the payload (histories recorded before them replay as they were)."""

    id: int
    url: str
    title: str
    provider: str = ""
    #: The fingerprint of its whole text as read (activities/fingerprint.py; "" when not read,
    #: e.g. a search snippet, and in research recorded before it).
    digest: str = ""
    doi: str = Field(default="", exclude_if=_empty)
    arxiv_id: str = Field(default="", exclude_if=_empty)
    authors: list[str] = Field(default_factory=list, exclude_if=_empty)
    year: int | None = Field(default=None, exclude_if=_empty)
    venue: str = Field(default="", exclude_if=_empty)
    #: `full_text` or `abstract` for a paper (PaperRead); "" for anything else.
    read: str = Field(default="", exclude_if=_empty)
    retracted: bool = Field(default=False, exclude_if=_empty)
    #: `article`, `preprint`, ... for a paper (Paper.kind).
    kind: str = Field(default="", exclude_if=_empty)

    @property
    def is_paper(self) -> bool:
        return bool(self.doi or self.arxiv_id or self.read)


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
    """A paragraph of a source that backs a step's observation (see workflows/kit/evidence.py)."""

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


class Calibration(BaseModel):
    """How a model's judge did on canaries made from the evidence at hand (a sentence quoted word
    for word, and the same sentence with a number, a name or a negation changed), before any of its
    verdicts counted. A judge that calls a changed sentence supported is not trusted: the
    deterministic verdicts stand (workflows/kit/judging.py)."""

    trusted: bool
    canaries: int = 0
    passed: int = 0
    #: One line per canary the judge got wrong ("called a changed number supported: ...").
    failures: list[str] = Field(default_factory=list)


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
    #: Cited sentences about another subject than their section asks: counted here,
    #: not among the supported, however well their words match their sources.
    off_subject: int = 0
    #: Each as "SECTION: SUBJECT" ("How long is a Martian year: Venus"), for the critic and the note.
    off_subject_sections: list[str] = Field(default_factory=list)
    #: Who decided the verdicts: "judge" (a model that passed its calibration) or "lexical" (the
    #: deterministic verifier: no model, or one that failed calibration). Empty in results
    #: recorded before calibration existed.
    checked_by: CheckedBy = CheckedBy.NOBODY
    calibration: Calibration | None = None


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


class Passage(BaseModel):
    """Trimmed text of one source, the unit the researcher and synthesizer read."""

    source_id: int
    title: str
    url: str
    text: str
