"""Before the steps (seed 002): classify the question, look around, write the plan.

The coordinator decides the depth (or a direct answer for a simple question); a quick search
informs the planner; the planner writes new steps, and `merge_plan` (pure) keeps the completed
steps of an earlier plan, drops repeats and respects the depth's step limits, so an ADJUST
re-plan never loses work and never grows the plan past its maximum.
"""

from __future__ import annotations

from temporalio import workflow

from workflows import patches, roles
from workflows.accounting.calls import call
from workflows.accounting.state import ResearchState
from workflows.activity_models import (
    CoordinateInput,
    CoordinateOutput,
    PlanInput,
    PlanOutput,
    WriteQueriesInput,
)
from workflows.events import EventKind, emit
from workflows.loop.researching import (
    PAGES_PER_STEP,
    SEARCH_QUERIES_PER_STEP,
    clean_queries,
    search_all,
    write_queries,
)
from workflows.models import (
    ROUTING_HISTORY,
    Depth,
    Passage,
    Plan,
    PlanStep,
    QueryMode,
    ResearchRequest,
    StepStatus,
)


def classifies(request: ResearchRequest) -> bool:
    """The coordinator is asked (the web and simple modes decide without it)."""
    return request.mode not in (QueryMode.WEB, QueryMode.SIMPLE)


async def classify(state: ResearchState) -> CoordinateOutput | None:
    """The coordinator's call; None when its retries are spent."""
    return await call(
        state,
        roles.COORDINATE,
        CoordinateInput(**state.about(), messages=state.conversation.messages[-ROUTING_HISTORY:]),
    )


async def coordinate(
    state: ResearchState, early: tuple[CoordinateOutput | None] | None = None
) -> bool:
    """Classify the question; True when it gets a direct answer instead of a research plan.
    `early`: the classification already made alongside routing (conversation.converse)."""
    mode, inquiry = state.request.mode, state.inquiry
    if mode is QueryMode.WEB:
        inquiry.depth = Depth.LIGHT
        return False
    if mode is QueryMode.SIMPLE:
        inquiry.depth = Depth.LIGHT
        return True
    classification = early[0] if early is not None else await classify(state)
    if classification is None:
        if inquiry.depth is Depth.AUTO:
            inquiry.depth = Depth.MEDIUM
        return False
    inquiry.complexity = classification.complexity
    inquiry.background_queries = clean_queries(classification.queries, 2)
    if inquiry.depth is Depth.AUTO:
        if classification.is_simple:
            inquiry.depth = Depth.LIGHT
            # A person who asked to review the plan is shown one, simple question or not.
            asked_to_review = state.request.review_plan
            return not (asked_to_review and workflow.patched(patches.REVIEWED_PLAN_NOT_SKIPPED))
        inquiry.depth = (
            classification.recommended_depth
            if classification.recommended_depth is not Depth.AUTO
            else Depth.MEDIUM
        )
    return False


async def investigate_background(state: ResearchState, as_sources: bool) -> None:
    """A quick search before planning (no page reads). For a direct answer, its hits are the sources.
    Its queries come with the coordinator's classification (one call fewer on the critical path);
    a coordinator that wrote none has them written here."""
    if state.inquiry.background_queries:
        queries = state.inquiry.background_queries
    else:
        queries = await write_queries(state, WriteQueriesInput(**state.about(), max_queries=2))
    hits = await search_all(state, queries)
    material = state.material
    material.background = []
    for hit in hits[: PAGES_PER_STEP * 2]:
        source_id = (
            material.add_source(hit.url, hit.title, hit.provider, state.events, paper=hit.paper)
            if as_sources
            else 0
        )
        material.background.append(
            Passage(source_id=source_id, title=hit.title, url=hit.url, text=hit.snippet)
        )


async def make_plan(
    state: ResearchState,
    feedback: list[str],
    by_reviewer: bool = False,
    keep: list[PlanStep] | None = None,
) -> None:
    """A plan (or a re-plan keeping the completed steps) from the planner, with `feedback` from
    the reflector or a person's review. `keep`: pending steps a person approved, which an ADJUST
    re-plan keeps after the completed ones (the planner is told they are kept, like those)."""
    low, high = state.step_limits()
    inquiry = state.inquiry
    completed = [
        s for s in (inquiry.plan.steps if inquiry.plan else []) if s.status is StepStatus.COMPLETED
    ]
    if keep:
        completed = [*completed, *keep]
        state.oversight.approved_steps = [s.title for s in keep]
    inquiry.plan_iterations += 1
    state.oversight.reviewer_plans += by_reviewer
    background = "\n".join(f"- {p.title}: {p.text}" for p in state.material.background)
    draft = await call(
        state,
        roles.PLAN,
        PlanInput(
            **state.about(),
            background=background,
            completed_steps=completed,
            feedback=feedback,
            min_steps=max(0, low - len(completed)),
            max_steps=max(0, high - len(completed)),
            iteration=inquiry.plan_iterations,
        ),
    )
    inquiry.plan = plan = merge_plan(state.meant(), draft, completed, high, inquiry.plan_iterations)
    steps = len(plan.steps)
    emit(
        state.events,
        EventKind.PLAN,
        f"plan {inquiry.plan_iterations}: {plan.title} ({steps} step{'s' * (steps != 1)})",
        {
            "iteration": inquiry.plan_iterations,
            "title": plan.title,
            "steps": [{"title": s.title, "status": s.status.value} for s in plan.steps],
        },
    )


def merge_plan(
    question: str,
    draft: PlanOutput | None,
    completed: list[PlanStep],
    max_steps: int,
    iteration: int,
) -> Plan:
    """The new plan: the completed steps, then the draft's new steps that are not repeats, within
    `max_steps`. With no usable draft and nothing done, one step researches the question as asked."""
    room = max(0, max_steps - len(completed))
    done_titles = {c.title.lower() for c in completed}
    new_steps = [
        PlanStep(
            title=s.title.strip(),
            description=s.description.strip(),
            queries=clean_queries(s.queries, SEARCH_QUERIES_PER_STEP),
            independent=s.independent,
        )
        for s in (draft.steps if draft else [])
        if s.title.strip() and s.title.strip().lower() not in done_titles
    ][:room]
    if not new_steps and not completed:
        new_steps = [PlanStep(title=question[:200], description="Research the question as asked.")]
    title = draft.title if draft and draft.title.strip() else f"Research: {question[:80]}"
    return Plan(
        title=title,
        thought=draft.thought
        if draft
        else "The planner was unavailable; one step researches the question as asked.",
        iteration=iteration,
        steps=[*completed, *new_steps],
    )
