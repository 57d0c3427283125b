"""Every activity the research calls, one row each: the table a reader checks before adding a role.

A row says what history records (the activity name), what goes in and comes out, how long one
attempt may take, how it is retried, and what the research does when the retries are spent. The
workflow calls activities by name through these rows (`workflows/calls.py`), so the deterministic
core never imports an activity module; the worker registers functions under the same names, and
the test doubles build their table from this one.

The LLM roles' per-prompt knobs (model tier, temperature, HTTP timeout) are rows too (`PROMPTS`):
one role may use two prompts (the background search and a step's search write queries with
different instructions), and both engines read these rows rather than keeping tables of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum
from typing import Generic, TypeVar

from pydantic import BaseModel
from temporalio.common import RetryPolicy

from workflows.activity_models import (
    ClarifyInput,
    ClarifyOutput,
    CoordinateInput,
    CoordinateOutput,
    CritiqueInput,
    CritiqueOutput,
    OutlineInput,
    OutlineOutput,
    ObserveInput,
    ObserveOutput,
    PlanInput,
    PlanOutput,
    ReadPageInput,
    ReadPageOutput,
    ReflectInput,
    ReflectOutput,
    ReviseClaimsInput,
    ReviseClaimsOutput,
    RouteInput,
    RouteOutput,
    SaveResearchInput,
    SaveResearchOutput,
    SearchInput,
    SearchOutput,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
    SynthesizeInput,
    SynthesizeOutput,
    VerifyClaimsInput,
    VerifyClaimsOutput,
    WriteQueriesInput,
    WriteQueriesOutput,
)

I = TypeVar("I", bound=BaseModel)
O = TypeVar("O", bound=BaseModel)


class Tier(str, Enum):
    """Model tier (seed 002): cheap models route and judge, the strongest one writes the report."""

    SIMPLE = "simple"
    ANALYTICAL = "analytical"
    COMPLEX = "complex"


@dataclass(frozen=True)
class PromptSettings:
    """How an engine asks one prompt: which tier's model, how warm, how long one HTTP call may
    take (below the activity's start-to-close timeout, so the client gives up first and the
    failure is classified)."""

    tier: Tier
    temperature: float
    #: The longest reply the engine asks for (`max_tokens`): what bounds a call's cost before it
    #: is made (workflows/budget.py). A reply cut off there is continued once (openai engine).
    max_tokens: int = 1000
    request_timeout_s: float = 60.0


#: One row per prompt file in activities/prompts/. Low temperatures for decisions (routing at 0.3
#: per seed 000), a little higher where variety helps.
PROMPTS: dict[str, PromptSettings] = {
    "agent_orchestrator": PromptSettings(Tier.SIMPLE, 0.3, max_tokens=400),
    "agent_clarification": PromptSettings(Tier.SIMPLE, 0.5, max_tokens=400),
    "agent_coordinator": PromptSettings(Tier.SIMPLE, 0.2, max_tokens=600),
    "agent_background": PromptSettings(Tier.SIMPLE, 0.4, max_tokens=400),
    "agent_researcher_queries": PromptSettings(Tier.ANALYTICAL, 0.4, max_tokens=400),
    "agent_planner": PromptSettings(Tier.ANALYTICAL, 0.4, max_tokens=2000),
    "agent_researcher": PromptSettings(Tier.ANALYTICAL, 0.2, max_tokens=1500),
    "agent_reflector": PromptSettings(Tier.SIMPLE, 0.2, max_tokens=800),
    "agent_synthesizer": PromptSettings(Tier.COMPLEX, 0.3, max_tokens=4000, request_timeout_s=120.0),
    # A long report is written in pieces (workflows/reporting.py): the outline, each section
    # (concurrently) and the summary; each piece is a reply of its own size.
    "agent_outliner": PromptSettings(Tier.COMPLEX, 0.3, max_tokens=1000),
    "agent_section_writer": PromptSettings(Tier.COMPLEX, 0.3, max_tokens=2500, request_timeout_s=120.0),
    "agent_summarizer": PromptSettings(Tier.COMPLEX, 0.3, max_tokens=1000),
    # Judging a claim against a passage is a reading task; rewriting one is close to it.
    "agent_verifier": PromptSettings(Tier.ANALYTICAL, 0.0, max_tokens=2000),
    "agent_reviser": PromptSettings(Tier.ANALYTICAL, 0.2, max_tokens=1500),
    "agent_critic": PromptSettings(Tier.ANALYTICAL, 0.0, max_tokens=1200),
}


LLM_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=4,
)
SEARCH_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=20),
    maximum_attempts=3,
)
SAVE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=6,
)
LLM_TIMEOUT = timedelta(seconds=90)
#: Activities heartbeat every 5 s while they wait (activities/heartbeats.py): a worker that dies
#: mid-call is noticed after this long instead of after the call's whole start-to-close timeout.
HEARTBEAT_TIMEOUT = timedelta(seconds=20)


@dataclass(frozen=True)
class Role(Generic[I, O]):
    """One activity the research calls."""

    #: The activity name history records: never rename (recorded histories replay by it).
    name: str
    input: type[I]
    output: type[O]
    #: What the research does when this role's retries are spent (shown in the README's table).
    fallback: str
    timeout: timedelta = LLM_TIMEOUT
    retry: RetryPolicy = field(default_factory=lambda: LLM_RETRY)
    #: An LLM role: its usage is counted into `stats` (calls, retries, tokens by role).
    llm: bool = True
    #: A failure concerns one item (one page, the stored copy), is expected, and is never fatal
    #: or noted: the caller goes on without it.
    isolated: bool = False
    #: The prompt files this role uses (keys of PROMPTS); empty for roles without an LLM.
    prompts: tuple[str, ...] = ()


ROUTE = Role("route", RouteInput, RouteOutput, "research", prompts=("agent_orchestrator",))
CLARIFY = Role("clarify", ClarifyInput, ClarifyOutput, "research the question as asked",
               prompts=("agent_clarification",))
COORDINATE = Role("coordinate", CoordinateInput, CoordinateOutput, "a medium-depth plan",
                  prompts=("agent_coordinator",))
WRITE_QUERIES = Role("write_queries", WriteQueriesInput, WriteQueriesOutput,
                     "search for the step's title and the question",
                     prompts=("agent_background", "agent_researcher_queries"))
PLAN = Role("plan", PlanInput, PlanOutput, "one step that researches the question as asked",
            prompts=("agent_planner",))
OBSERVE = Role("observe", ObserveInput, ObserveOutput, "the step is recorded with no observation",
               prompts=("agent_researcher",))
REFLECT = Role("reflect", ReflectInput, ReflectOutput, "CONTINUE while steps remain, else COMPLETE",
               prompts=("agent_reflector",))
SYNTHESIZE = Role("synthesize", SynthesizeInput, SynthesizeOutput,
                  "a plain report of the step observations",
                  timeout=timedelta(seconds=180), prompts=("agent_synthesizer",))
OUTLINE = Role("outline_report", OutlineInput, OutlineOutput, "the report is written in one call",
               prompts=("agent_outliner",))
WRITE_SECTION = Role("write_section", SectionInput, SectionOutput,
                     "the section lists its steps' observations as found",
                     timeout=timedelta(seconds=180), prompts=("agent_section_writer",))
SUMMARIZE = Role("summarize_report", SummaryInput, SummaryOutput, "the report has no summary",
                 prompts=("agent_summarizer",))
VERIFY_CLAIMS = Role("verify_claims", VerifyClaimsInput, VerifyClaimsOutput, "claims stay unverified",
                     prompts=("agent_verifier",))
REVISE_CLAIMS = Role("revise_claims", ReviseClaimsInput, ReviseClaimsOutput,
                     "unsupported sentences are removed unrewritten", prompts=("agent_reviser",))
CRITIQUE = Role("critique", CritiqueInput, CritiqueOutput, "no scores", prompts=("agent_critic",))
SEARCH = Role("search", SearchInput, SearchOutput, "no hits from that query",
              timeout=timedelta(seconds=30), retry=SEARCH_RETRY, llm=False)
READ_PAGE = Role("read_page", ReadPageInput, ReadPageOutput, "the page is skipped",
                 timeout=timedelta(seconds=45), retry=SEARCH_RETRY, llm=False, isolated=True)
SAVE_RESEARCH = Role("save_research", SaveResearchInput, SaveResearchOutput,
                     "the research completes with a note that it was not stored",
                     timeout=timedelta(seconds=60), retry=SAVE_RETRY, llm=False, isolated=True)

ROLES: tuple[Role, ...] = (
    ROUTE, CLARIFY, COORDINATE, WRITE_QUERIES, PLAN, OBSERVE, REFLECT, SYNTHESIZE,
    OUTLINE, WRITE_SECTION, SUMMARIZE, VERIFY_CLAIMS, REVISE_CLAIMS, CRITIQUE, SEARCH, READ_PAGE, SAVE_RESEARCH,
)
LLM_ROLES: tuple[Role, ...] = tuple(r for r in ROLES if r.llm)
BY_NAME: dict[str, Role] = {r.name: r for r in ROLES}
