"""Every activity the worker runs (the research's and its notifier's), one row each: the one place a role is defined.

A row says what history records (the activity name), what goes in and comes out, which prompts an
LLM role asks with and how (model tier, temperature, `max_tokens`, silence timeout), how long one
attempt may take, how it is retried, and what the research does when the retries are spent.

Everything else is built from the rows. The workflow calls activities by name through them
(`workflows/accounting/calls.py`), so the deterministic core never imports an activity module; the
worker's LLM activities (activities/llm.py) and the test doubles (tests/support/doubles.py) are
defined by `Role.define` (what a row is, and the retry policies the rows pick from, is
workflows/activity_role.py); both engines read their prompts' knobs here; the README's table of
roles is `python -m workflows.roles`. A test (tests/workflow/test_roles.py) fails when an LLM role
lacks its prompt file, a method on either engine, or a fallback, or when the README's table is stale.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from workflows import activity_models as m
from workflows.activity_role import SAVE_RETRY, SEARCH_RETRY, AnyRole, Prompt, Role, Tier
from workflows.report_models import (
    OutlineInput,
    OutlineOutput,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
)
from workflows.revising_messages import SaveRevisionInput, SaveRevisionOutput
from workflows.standing_messages import (
    DeliverInput,
    DeliverOutput,
    Notice,
    OwnerRunningInput,
    OwnerRunningOutput,
    PreviousRunInput,
    PreviousRunOutput,
)

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
    OutlineInput,
    OutlineOutput,
    "the report is written in one call",
    asks=(Prompt("agent_outliner", COMPLEX, 0.3, max_tokens=1000),),
)
WRITE_SECTION = Role(
    "write_section",
    SectionInput,
    SectionOutput,
    "the section lists its steps' observations as found",
    asks=(Prompt("agent_section_writer", COMPLEX, 0.3, max_tokens=2500, silence_timeout_s=120.0),),
)
SUMMARIZE = Role(
    "summarize_report",
    SummaryInput,
    SummaryOutput,
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
#: A standing research's scheduled run counts its owner's running research first.
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
