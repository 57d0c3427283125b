"""What crosses an activity boundary: one input and one output model per role, named
`<Role>Input` / `<Role>Output` after the activity (see workflows/roles.py, the table of roles);
those of a long report's pieces (outline, section, summary) are in workflows/report_models.py.

Pure pydantic, safe inside the workflow sandbox; the research vocabulary they are made of
(plans, steps, sources, claims) is in workflows/models.py.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum

from pydantic import BaseModel, Field

from workflows.models import (
    PAGE_TEXT_LIMIT,
    CheckedBy,
    Claim,
    Complexity,
    Critique,
    Depth,
    Evidence,
    Message,
    Paper,
    Passage,
    Plan,
    PlanStep,
    ReflectionDecision,
    ResearchResult,
    RoutingDecision,
    Source,
    Sources,
    VerificationSummary,
)
from workflows.text.clarified import meant_question

#: Non-retryable errors about one reply, not about the configuration: the role's fallback applies
#: instead of ending the research (a cut-off or filtered reply says nothing about the next call),
#: and a role the engine can answer by its own rules does so (activities/openai_engine/errors.py).
#: A reply that could not be read even repaired and asked again with the reason (the engine
#: gives up on it for good: activities/openai_engine/chat.py) is one too.
REPLY_PROBLEMS = frozenset(
    {"LLMReplyTruncated", "LLMContentFiltered", "LLMRefused", "InvalidLLMReply"}
)


class Usage(BaseModel):
    """What one LLM role call cost, over all its activity attempts."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Completions the endpoint returned, including unusable replies that were asked again.
    requests: int = 0
    #: The activity attempt that produced the result (1 = no retry).
    attempt: int = 1
    #: What those tokens cost in USD; None when the model has no known price (see `unpriced`).
    cost_usd: float | None = 0.0
    #: The model that served the call, when its price is unknown (named in the budget's note).
    unpriced: str | None = None
    #: The model's prices (USD per 1M tokens, input and output): the workflow prices its next
    #: calls of this role from them before they are made.
    price_in: float = 0.0
    price_out: float = 0.0
    #: The reply was nearly JSON and was read once repaired (a missing brace, single quotes...).
    repaired: int = Field(default=0, exclude_if=lambda v: not v)
    #: The model was asked again, shown why its reply could not be read, and answered.
    reasked: int = Field(default=0, exclude_if=lambda v: not v)
    #: Why the engine answered this call by its own rules, its model's reply being unusable (cut
    #: off twice, unreadable even asked again): the workflow counts the call as not answered by
    #: the model and notes why, as for a role that fell back (workflows/accounting/calls.py).
    fell_back: str | None = Field(default=None, exclude_if=lambda v: v is None)


class LLMOutput(BaseModel):
    """Every LLM role's reply carries what the call cost, so the workflow can account for it."""

    usage: Usage = Field(default_factory=Usage)


class AboutQuestion(BaseModel):
    """What a research is about, as typed fields rather than text packed into the question: the
    question as asked, what a follow-up refers to in the earlier research, and the user's answers
    to clarification questions. Every role that works on the research question inherits it."""

    query: str
    #: For a follow-up: the item or question of the earlier research it refers to.
    follows_up: str = ""
    #: The user's answers to clarification questions, in order.
    clarifications: list[str] = Field(default_factory=list)
    #: The language the reader gets text in (a code: "en", "de", ...; see workflows/text/language.py).
    language: str = "en"

    def meant(self) -> str:
        """The question as the person meant it: rewritten with the clarification answers
        ("Tell me more about it" + "asyncio task cancellation"; see workflows/text/clarified.py)."""
        return meant_question(self.query, self.clarifications)

    def topic_text(self, follow_up: bool = True) -> str:
        """The question with its context in one line (for search focus and the offline engine):
        as meant, then as asked when the answers changed it, what it follows up, the answers."""
        text = " ".join(self.meant().split())
        if text != " ".join(self.query.split()):
            text = f'{text} (asked as: "{self.query}")'
        if self.follows_up and follow_up:
            text = f"{text} (follow-up to: {self.follows_up})"
        if self.clarifications:
            text = f"{text} (clarified: {'; '.join(self.clarifications)})"
        return text

    def question_line(self) -> str:
        """The question line an LLM prompt shows: only what the person typed (the topic without
        the follow-up context, which quotes an earlier report: prompts show it apart, as data)."""
        return self.topic_text(follow_up=False)


class RouteInput(BaseModel):
    messages: list[Message]
    clarification_count: int
    max_clarifications: int
    #: How many routing decisions came before this one (seed 000's `iteration`, for tracing).
    iteration: int = 0


class RouteOutput(LLMOutput):
    decision: RoutingDecision
    reasoning: str


class ClarifyInput(BaseModel):
    messages: list[Message]
    #: The language to ask in (the question's, or the one the request named).
    language: str = "en"


class ClarifyOutput(LLMOutput):
    question: str
    #: Why the model's question was not asked, for the research's notes ("" when it was, or when
    #: no model wrote it). An empty question with a note: research the question as asked.
    note: str = ""


class CoordinateInput(AboutQuestion):
    messages: list[Message]


class CoordinateOutput(LLMOutput):
    complexity: Complexity
    is_simple: bool
    recommended_depth: Depth
    reasoning: str
    #: The background search's queries, written with the classification (one call, not two).
    queries: list[str] = Field(default_factory=list)


class WriteQueriesInput(AboutQuestion):
    """Ask for search queries: for the background investigation or for one plan step."""

    step: PlanStep | None = None
    max_queries: int = 2


class WriteQueriesOutput(LLMOutput):
    queries: list[str]


class PlanInput(AboutQuestion):
    background: str
    completed_steps: list[PlanStep]
    feedback: list[str] = Field(default_factory=list)
    min_steps: int
    max_steps: int
    iteration: int


class StepDraft(BaseModel):
    title: str
    description: str
    #: The step's search queries, written with the plan (no separate call per step).
    queries: list[str] = Field(default_factory=list)
    #: True when the step needs no findings of the steps before it: it may run at the same time.
    independent: bool = False


class PlanOutput(LLMOutput):
    title: str
    thought: str
    #: New steps only: the workflow keeps the completed ones itself.
    steps: list[StepDraft]


class ObserveInput(AboutQuestion):
    step: PlanStep
    passages: list[Passage]


class ObserveOutput(LLMOutput):
    observation: str
    source_ids: list[int]
    #: Loop-back request (seed 003): this step needs more work by `suggested_agent`.
    needs_more: bool = False
    suggested_agent: str | None = None
    suggested_query: str | None = None


class ReflectInput(AboutQuestion):
    plan: Plan
    completed_steps: int
    min_steps: int
    sources_count: int


class ReflectOutput(LLMOutput):
    decision: ReflectionDecision
    reasoning: str
    suggested_changes: list[str] = Field(default_factory=list)


class SynthesizeInput(AboutQuestion):
    plan: Plan | None
    sources: list[Source]
    #: For a direct answer (simple mode) there is no plan: the background passages stand in.
    passages: list[Passage] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    #: The evidence pool: what the cited sources say, the ground the report must stand on.
    evidence: list[Evidence] = Field(default_factory=list)
    #: What was read of those sources (workflows/accounting/parts.Material.read): not shown to the writer;
    #: the guard on what a model writes checks its sentences against it, so a faithful paraphrase
    #: of a paragraph that was read is not taken for an invention.
    read: list[Evidence] = Field(default_factory=list, json_schema_extra={"shown": False})
    #: A rewrite: the critic's (or a reviewer's) objections to the previous report, to answer.
    feedback: list[str] = Field(default_factory=list)
    #: The report's length target in words.
    target_words: int = 600


class SynthesizeOutput(LLMOutput):
    markdown: str
    claims: list[Claim] = Field(default_factory=list)
    engine: str = ""


class SearchInput(BaseModel):
    query: str
    max_results: int = 5
    #: Where to search (`Sources`). Left out of the payload when `configured`, and `owner` when
    #: None, so a research that does not choose records the same search inputs as before.
    sources: Sources = Field(
        default=Sources.CONFIGURED, exclude_if=lambda v: v is Sources.CONFIGURED
    )
    #: Whose uploaded documents are searched: set only when `sources` includes documents.
    owner: str | None = Field(default=None, exclude_if=lambda v: v is None)


class SearchHit(BaseModel):
    url: str
    title: str
    snippet: str
    provider: str
    #: A scholarly index's hit: the work's metadata (its `url` is then the DOI's resolver link,
    #: else the arXiv abstract page, else the index's landing page).
    paper: Paper | None = Field(default=None, exclude_if=lambda v: v is None)


class SearchOutput(BaseModel):
    hits: list[SearchHit]


class SearchPapersInput(BaseModel):
    """One query to one scholarly index (`openalex`, `arxiv`, `crossref`, `semanticscholar`,
    `pubmed`), run on that index's own task queue (`papers_task_queue`), whose rate limit the
    Temporal server keeps across every research on every worker."""

    query: str
    max_results: int
    index: str


def papers_task_queue(research_queue: str, index: str) -> str:
    """The task queue of one scholarly index's searches, beside the research's own."""
    return f"{research_queue}-papers-{index}"


class PaperIndexesInput(BaseModel):
    """Which scholarly indexes a `papers` research may search: asked once per research of the
    worker that runs it (a local activity), because only the worker knows SCHOLARLY_PROVIDERS and
    only it polls the indexes' own task queues; a list chosen by the client could name a queue
    no worker polls, and each search there would wait out its whole window."""

    research_queue: str


class PaperIndexesOutput(BaseModel):
    indexes: list[str]


class ReadPageInput(BaseModel):
    url: str
    #: What the step is about: the page is trimmed to the passages that best match it.
    focus: str
    max_chars: int = PAGE_TEXT_LIMIT
    #: A paper's metadata: its open-access full text is read if it can be, else its abstract.
    paper: Paper | None = Field(default=None, exclude_if=lambda v: v is None)


class ReadPageOutput(BaseModel):
    url: str
    title: str = ""
    text: str = ""
    #: Why the page could not be read (a per-page failure never fails the step).
    error: str | None = None
    #: The fingerprint of the whole document as read, before it was trimmed to `text`
    #: (activities/fingerprint.py; "" from readers and histories before it).
    digest: str = ""
    #: A paper's: `full_text` (its open-access text was read) or `abstract`; "" for a page.
    read: str = Field(default="", exclude_if=lambda v: not v)


# --- verification and the research library ----------------------------------------------------------


class JudgeVerdict(str, Enum):
    SUPPORTED = "supported"
    PARTIAL = "partial"
    UNSUPPORTED = "unsupported"


class ClaimCheck(BaseModel):
    """One claim sent to the judge or the reviser; `index` ties the answer back to the claim."""

    index: int
    text: str
    source_ids: list[int]


class VerifyClaimsInput(AboutQuestion):
    claims: list[ClaimCheck]
    #: Only the evidence of the sources the claims cite.
    evidence: list[Evidence]
    sources: list[Source]


class ClaimVerdict(BaseModel):
    index: int
    verdict: JudgeVerdict
    reason: str


class VerifyClaimsOutput(LLMOutput):
    verdicts: list[ClaimVerdict]
    #: How the verdicts were reached: the judge (an LLM) or lexically (the offline engine).
    checked_by: CheckedBy = CheckedBy.JUDGE


class ReviseClaimsInput(AboutQuestion):
    #: Claims judged unsupported, and why (`reasons[i]` belongs to `claims[i]`).
    claims: list[ClaimCheck]
    reasons: list[str] = Field(default_factory=list)
    evidence: list[Evidence]


class ClaimRewrite(BaseModel):
    index: int
    #: The sentence rewritten to say only what the evidence says, with its [n] citations;
    #: empty when the evidence supports nothing of it (the sentence is removed).
    text: str


class ReviseClaimsOutput(LLMOutput):
    rewrites: list[ClaimRewrite]


class CritiqueInput(AboutQuestion):
    report_markdown: str
    verification: VerificationSummary
    sources_count: int
    steps_completed: int
    steps_planned: int


class CritiqueOutput(Critique, LLMOutput):
    """The critic's scores and what asking for them cost."""


class SaveResearchInput(BaseModel):
    """What the `save_research` activity writes: the result and where it came from."""

    workflow_id: str
    run_id: str
    started_at: datetime
    finished_at: datetime
    result: ResearchResult


class SaveResearchOutput(BaseModel):
    #: False when this (workflow id, run id) was already stored (a retried activity).
    created: bool
