"""Every activity the worker runs (the research's and its notifier's), one row each: the one place a role is defined.

A row says what history records (the activity name), what goes in and comes out, which prompts an
LLM role asks with and how (model tier, temperature, `max_tokens`, silence timeout), how long one
attempt may take, how it is retried, and what the research does when the retries are spent.

Everything else is built from the rows. The workflow calls activities by name through them
(`workflows/calls.py`), so the deterministic core never imports an activity module; the worker's
LLM activities (activities/llm.py) and the test doubles (tests/support/doubles.py) are defined by
`Role.define`; both engines read their prompts' knobs here; the README's table of roles is
`python -m workflows.roles`. A test (tests/workflow/test_roles.py) fails when an LLM role lacks its
prompt file, a method on either engine, or a fallback, or when the README's table is stale.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum
from typing import Any, Generic, TypeAlias, TypeVar

from pydantic import BaseModel
from temporalio import activity, workflow
from temporalio.common import RetryPolicy

from workflows import activity_models as m
from workflows.revising.messages import SaveRevisionInput, SaveRevisionOutput
from workflows.standing.changes import PreviousRunInput, PreviousRunOutput
from workflows.standing.messages import (
    DeliverInput,
    DeliverOutput,
    Notice,
    OwnerRunningInput,
    OwnerRunningOutput,
)

Req = TypeVar("Req", bound=BaseModel)
#: What a role answers: a model, or (the notification targets) a list of keys.
Rep = TypeVar("Rep")


class Tier(str, Enum):
    """Model tier (seed 002): cheap models route and judge, the strongest one writes the report."""

    SIMPLE = "simple"
    ANALYTICAL = "analytical"
    COMPLEX = "complex"


@dataclass(frozen=True)
class Prompt:
    """One prompt file a role asks with (`activities/prompts/<file>.md`), and how an engine asks
    it: which tier's model, how warm, the longest reply, and how long the endpoint may go without
    sending a token once it has begun replying (replies are streamed, so a slow model may write
    for minutes; activities/openai_engine/streaming.py). Low temperatures for decisions (routing at 0.3 per seed 000), a little
    higher where variety helps."""

    file: str
    tier: Tier
    temperature: float
    #: The longest reply the engine asks for (`max_tokens`): what bounds a call's cost before it
    #: is made (workflows/loop/budget.py). A reply cut off there is continued once (openai engine).
    max_tokens: int = 1000
    silence_timeout_s: float = 60.0


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
#: The most a deployment may let one LLM call take (LLM_CALL_LIMIT_S, config.py, checks it is
#: at most this; a test checks they agree). The workflow cannot read the deployment's settings,
#: so every LLM activity gets this much plus a minute: the engine's own limits end a call first
#: with a classified error, and a dead worker is noticed by the heartbeat timeout, not by this.
LLM_CALL_LIMIT_MAX = timedelta(hours=1)
LLM_TIMEOUT = LLM_CALL_LIMIT_MAX + timedelta(minutes=1)
#: Activities heartbeat every 5 s while they wait (activities/heartbeats.py): a worker that dies
#: mid-call is noticed after this long instead of after the call's whole start-to-close timeout.
HEARTBEAT_TIMEOUT = timedelta(seconds=20)


@dataclass(frozen=True)
class Role(Generic[Req, Rep]):
    """One activity the research calls."""

    #: The activity name history records: never rename (recorded histories replay by it). An LLM
    #: role's engine method has this name too (activities/engine.py).
    name: str
    input: type[Req]
    output: type[Rep]
    #: What the research does when this role's retries are spent (shown in the README's table).
    fallback: str
    #: The prompts an LLM role asks with: one, or one per kind of request (the background
    #: search's queries and a step's are written with different instructions). None: no LLM.
    asks: tuple[Prompt, ...] = ()
    timeout: timedelta = LLM_TIMEOUT
    retry: RetryPolicy = field(default_factory=lambda: LLM_RETRY)
    #: A failure concerns one item (one page, the stored copy), is expected, and is never fatal
    #: or noted: the caller goes on without it.
    isolated: bool = False
    #: Which calls run as local activities (in the worker that runs the research, recorded as one
    #: marker event, no task queue round trip): short, CPU-light work whose retries need no
    #: separate visibility, such as searching the local index or reading one of its documents.
    #: None: always a regular activity.
    local: Callable[[Req], bool] | None = None
    #: How long all attempts together may take (schedule-to-close); None: the retry policy's
    #: attempts alone bound it.
    window: timedelta | None = None
    #: How long a regular attempt may go without a heartbeat before Temporal retries it on
    #: another worker (the research's activities heartbeat: activities/heartbeats.py); None: it
    #: does not heartbeat, its timeout alone bounds it.
    heartbeat: timedelta | None = field(default_factory=lambda: HEARTBEAT_TIMEOUT)

    @property
    def llm(self) -> bool:
        """An LLM role: admitted against the budgets, its usage counted into `stats`."""
        return bool(self.asks)

    @property
    def prompts(self) -> tuple[str, ...]:
        """The files of the prompts it asks with (keys of `PROMPTS`)."""
        return tuple(p.file for p in self.asks)

    @property
    def max_tokens(self) -> int:
        """The longest reply one call may be asked for (0 for a role without an LLM)."""
        return max((p.max_tokens for p in self.asks), default=0)

    async def run(self, arg: Req, task_queue: str | None = None) -> Rep:
        """This activity, scheduled from a workflow with the row's limits: local where the row
        says so (short, CPU-light work), else regular (on TASK_QUEUE when given: a scholarly
        index's own rate-limited queue, else the research's)."""
        # Called by name: the SDK decodes the result as `self.output`, a `Rep`.
        result: Rep
        if self.local is not None and self.local(arg):
            result = await workflow.execute_local_activity(
                self.name,
                arg,
                result_type=self.output,
                start_to_close_timeout=self.timeout,
                schedule_to_close_timeout=self.window,
                retry_policy=self.retry,
            )
            return result
        result = await workflow.execute_activity(
            self.name,
            arg,
            result_type=self.output,
            task_queue=task_queue,
            start_to_close_timeout=self.timeout,
            schedule_to_close_timeout=self.window,
            heartbeat_timeout=self.heartbeat,
            retry_policy=self.retry,
        )
        return result

    def define(self, fn: Callable[[Req], Awaitable[Rep]]) -> Callable[[Req], Awaitable[Rep]]:
        """`fn` (one parameter, any annotation) as this role's activity: registered under the
        role's name and typed with its input and output models, which the data converter decodes
        by. So one generic function serves every role: the worker's LLM activities, the doubles."""
        (parameter,) = fn.__code__.co_varnames[: fn.__code__.co_argcount]
        fn.__name__ = fn.__qualname__ = self.name
        fn.__annotations__ = {parameter: self.input, "return": self.output}
        return activity.defn(name=self.name)(fn)


#: A role of whatever input and output: for the tables and for what reads only its name and limits.
AnyRole: TypeAlias = Role[Any, Any]


SIMPLE, ANALYTICAL, COMPLEX = Tier.SIMPLE, Tier.ANALYTICAL, Tier.COMPLEX

ROUTE = Role(
    "route",
    m.RouteInput,
    m.RouteOutput,
    "research",
    asks=(Prompt("agent_orchestrator", SIMPLE, 0.3, max_tokens=400),),
)
CLARIFY = Role(
    "clarify",
    m.ClarifyInput,
    m.ClarifyOutput,
    "research the question as asked",
    asks=(Prompt("agent_clarification", SIMPLE, 0.5, max_tokens=400),),
)
COORDINATE = Role(
    "coordinate",
    m.CoordinateInput,
    m.CoordinateOutput,
    "a medium-depth plan",
    asks=(Prompt("agent_coordinator", SIMPLE, 0.2, max_tokens=500),),
)
WRITE_QUERIES = Role(
    "write_queries",
    m.WriteQueriesInput,
    m.WriteQueriesOutput,
    "search for the step's title and the question",
    asks=(
        Prompt("agent_background", SIMPLE, 0.4, max_tokens=300),
        Prompt("agent_researcher_queries", ANALYTICAL, 0.4, max_tokens=300),
    ),
)
PLAN = Role(
    "plan",
    m.PlanInput,
    m.PlanOutput,
    "one step that researches the question as asked",
    asks=(Prompt("agent_planner", ANALYTICAL, 0.4, max_tokens=1500),),
)
# An observation is at most OBSERVATION_LIMIT (3,000) characters: about 750 tokens and its fields.
OBSERVE = Role(
    "observe",
    m.ObserveInput,
    m.ObserveOutput,
    "the step is recorded with no observation",
    asks=(Prompt("agent_researcher", ANALYTICAL, 0.2, max_tokens=1200),),
)
REFLECT = Role(
    "reflect",
    m.ReflectInput,
    m.ReflectOutput,
    "CONTINUE while steps remain, else COMPLETE",
    asks=(Prompt("agent_reflector", SIMPLE, 0.2, max_tokens=600),),
)
SYNTHESIZE = Role(
    "synthesize",
    m.SynthesizeInput,
    m.SynthesizeOutput,
    "a plain report of the step observations",
    asks=(Prompt("agent_synthesizer", COMPLEX, 0.3, max_tokens=4000, silence_timeout_s=120.0),),
)
# A long report is written in pieces (workflows/checks/reporting.py): the outline, each section
# (concurrently) and the summary; each piece is a reply of its own size.
OUTLINE = Role(
    "outline_report",
    m.OutlineInput,
    m.OutlineOutput,
    "the report is written in one call",
    asks=(Prompt("agent_outliner", COMPLEX, 0.3, max_tokens=1000),),
)
WRITE_SECTION = Role(
    "write_section",
    m.SectionInput,
    m.SectionOutput,
    "the section lists its steps' observations as found",
    asks=(Prompt("agent_section_writer", COMPLEX, 0.3, max_tokens=2500, silence_timeout_s=120.0),),
)
SUMMARIZE = Role(
    "summarize_report",
    m.SummaryInput,
    m.SummaryOutput,
    "the report has no summary",
    asks=(Prompt("agent_summarizer", COMPLEX, 0.3, max_tokens=1000),),
)
# Judging a claim against a passage is a reading task; rewriting one is close to it.
VERIFY_CLAIMS = Role(
    "verify_claims",
    m.VerifyClaimsInput,
    m.VerifyClaimsOutput,
    "claims stay unverified",
    asks=(Prompt("agent_verifier", ANALYTICAL, 0.0, max_tokens=2000),),
)
REVISE_CLAIMS = Role(
    "revise_claims",
    m.ReviseClaimsInput,
    m.ReviseClaimsOutput,
    "unsupported sentences are removed unrewritten",
    asks=(Prompt("agent_reviser", ANALYTICAL, 0.2, max_tokens=1500),),
)
CRITIQUE = Role(
    "critique",
    m.CritiqueInput,
    m.CritiqueOutput,
    "no scores",
    asks=(Prompt("agent_critic", ANALYTICAL, 0.0, max_tokens=1200),),
)
SEARCH = Role(
    "search",
    m.SearchInput,
    m.SearchOutput,
    "no hits from that query",
    timeout=timedelta(seconds=30),
    retry=SEARCH_RETRY,
    local=lambda _: True,
)
#: One query to one scholarly index, on the index's own task queue (`papers_task_queue`), whose
#: rate limit the server keeps for every worker (arXiv: one request every 3 s); a 429's
#: Retry-After becomes the next retry's delay. Within a 3-minute window so a research queued
#: behind others' searches of a slow index waits its turn rather than failing.
SEARCH_PAPERS = Role(
    "search_papers",
    m.SearchPapersInput,
    m.SearchOutput,
    "no papers from that index for that query",
    timeout=timedelta(seconds=30),
    retry=SEARCH_RETRY,
    window=timedelta(minutes=3),
    heartbeat=None,
)
#: The indexes a `papers` research searches, asked once of the worker that runs the research
#: (m.PaperIndexesInput says why not the client): reading settings, so local and quick.
PAPER_INDEXES = Role(
    "paper_indexes",
    m.PaperIndexesInput,
    m.PaperIndexesOutput,
    "the research ends: it cannot know which indexes to search",
    timeout=timedelta(seconds=10),
    retry=RetryPolicy(maximum_attempts=3),
    local=lambda _: True,
    heartbeat=None,
)
READ_PAGE = Role(
    "read_page",
    m.ReadPageInput,
    m.ReadPageOutput,
    "the page is skipped",
    timeout=timedelta(seconds=45),
    retry=SEARCH_RETRY,
    isolated=True,
    local=lambda page: page.url.startswith("file://"),
)  # a web page: a crawl, regular
SAVE_RESEARCH = Role(
    "save_research",
    m.SaveResearchInput,
    m.SaveResearchOutput,
    "the research completes with a note that it was not stored",
    timeout=timedelta(seconds=60),
    retry=SAVE_RETRY,
    isolated=True,
)

#: A delivery is retried for a day, then given up (its failure is the notifier's result).
DELIVERY_WINDOW = timedelta(days=1)

#: A standing research's run reads the run before it, to say what changed.
PREVIOUS_RUN = Role(
    "previous_run",
    PreviousRunInput,
    PreviousRunOutput,
    "the report says nothing about what changed, and a note says so",
    timeout=timedelta(seconds=60),
    retry=RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(seconds=10)),
    isolated=True,
    heartbeat=None,
)
#: A standing research's scheduled run counts its owner's running research first (issue 49).
OWNER_RUNNING = Role(
    "owner_running",
    OwnerRunningInput,
    OwnerRunningOutput,
    "the run goes ahead",
    timeout=timedelta(seconds=30),
    retry=RetryPolicy(maximum_attempts=3, maximum_interval=timedelta(seconds=5)),
    isolated=True,
    heartbeat=None,
)
#: Which receivers a notice goes to: opaque keys (`webhook:0`, `email`), never an address.
NOTIFICATION_TARGETS = Role(
    "notification_targets",
    Notice,
    list[str],
    "no notice is sent (logged)",
    timeout=timedelta(seconds=10),
    retry=RetryPolicy(maximum_attempts=2),
    isolated=True,
    local=lambda _: True,
    heartbeat=None,
)
#: One notice to one receiver, by the `NotifyWorkflow` (never by the research itself).
DELIVER_NOTIFICATION = Role(
    "deliver_notification",
    DeliverInput,
    DeliverOutput,
    "given up after a day: the delivery's outcome names the receiver and why",
    timeout=timedelta(seconds=60),
    retry=RetryPolicy(
        initial_interval=timedelta(seconds=2),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(minutes=30),
        non_retryable_error_types=["Refused", "NotConfigured"],
    ),
    isolated=True,
    window=DELIVERY_WINDOW,
    heartbeat=None,
)

#: A revised section's new version of the report, kept in the library beside the earlier ones
#: (`ReviseSectionWorkflow`, workflows/revising/): not isolated, a revision nobody can read is none.
SAVE_REVISION = Role(
    "save_revision",
    SaveRevisionInput,
    SaveRevisionOutput,
    "the revision fails with one line; the report stays as it was",
    timeout=timedelta(seconds=60),
    retry=SAVE_RETRY,
    heartbeat=None,
)

ROLES: tuple[AnyRole, ...] = (
    ROUTE,
    CLARIFY,
    COORDINATE,
    WRITE_QUERIES,
    PLAN,
    OBSERVE,
    REFLECT,
    SYNTHESIZE,
    OUTLINE,
    WRITE_SECTION,
    SUMMARIZE,
    VERIFY_CLAIMS,
    REVISE_CLAIMS,
    CRITIQUE,
    SEARCH,
    SEARCH_PAPERS,
    PAPER_INDEXES,
    READ_PAGE,
    SAVE_RESEARCH,
    PREVIOUS_RUN,
    OWNER_RUNNING,
    NOTIFICATION_TARGETS,
    DELIVER_NOTIFICATION,
    SAVE_REVISION,
)
LLM_ROLES: tuple[AnyRole, ...] = tuple(r for r in ROLES if r.llm)
BY_NAME: dict[str, AnyRole] = {r.name: r for r in ROLES}
#: The rows' prompts by file: what an engine looks a prompt's knobs up in.
PROMPTS: dict[str, Prompt] = {p.file: p for r in ROLES for p in r.asks}


# --- the README's table ------------------------------------------------------------------------------


def _seconds(span: timedelta | float | None) -> str:
    seconds = span.total_seconds() if isinstance(span, timedelta) else span or 0
    return f"{seconds:g} s"


def _retries(policy: RetryPolicy, window: timedelta | None) -> str:
    attempts = str(policy.maximum_attempts) if policy.maximum_attempts else "unlimited"
    ceiling = policy.maximum_interval or policy.initial_interval * 100  # Temporal's default
    within = f", all within {_seconds(window)}" if window else ""
    return (
        f"{attempts}, {_seconds(policy.initial_interval)} backoff ×{policy.backoff_coefficient:g}"
        f" up to {_seconds(ceiling)}{within}"
    )


def _prompt(p: Prompt) -> str:
    return f"`{p.file}`: {p.tier.value}, {p.temperature:g}, {p.max_tokens}, {_seconds(p.silence_timeout_s)}"


def markdown_table() -> str:
    """The rows as the README shows them (`python -m workflows.roles`; a test compares)."""
    rows = [
        [
            "activity",
            "prompt: tier, temperature, max_tokens, silence timeout",
            "timeout",
            "attempts",
            "when the retries are spent",
        ],
        ["---"] * 5,
        *(
            [
                f"`{r.name}`",
                "<br>".join(map(_prompt, r.asks)) or "no LLM",
                _seconds(r.timeout),
                _retries(r.retry, r.window),
                r.fallback + (" (never fatal)" if r.isolated else ""),
            ]
            for r in ROLES
        ),
    ]
    return "\n".join(f"| {' | '.join(row)} |" for row in rows)


if __name__ == "__main__":
    print(markdown_table())
