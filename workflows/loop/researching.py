"""One research step (seed 002): write queries, search, read the best sources, observe.

Searches run concurrently and merge by rank; the best three unread pages of a step are read
concurrently, one activity per page (a bad page costs that page only); the observation cites
source ids, and the paragraphs behind each cited sentence join the evidence pool. A step that
needs more work may ask for it (seed 003): `judge_loop_back` (pure) decides whether the request
becomes a new step.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow

from workflows import roles
from workflows.accounting.calls import call
from workflows.accounting.stages import show_progress
from workflows.accounting.state import ResearchState
from workflows.accounting.step_budget import affordable_wave
from workflows.activity_models import (
    ObserveInput,
    ObserveOutput,
    ReadPageInput,
    ReadPageOutput,
    SearchHit,
    SearchInput,
    WriteQueriesInput,
)
from workflows.events import EventKind, emit
from workflows.kit import evidence
from workflows.loop import literature
from workflows.loop.concurrency import together
from workflows.models import (
    OBSERVATION_LIMIT,
    LoopBack,
    Passage,
    Plan,
    PlanStep,
    StepOrigin,
    StepStatus,
)
from workflows.text import content_terms, stem

SEARCH_QUERIES_PER_STEP = 2
HITS_PER_QUERY = 5
PAGES_PER_STEP = 3
#: Agents a step may ask for in a loop-back request (seed 003). Steps are run by the researcher.
LOOP_BACK_AGENTS = frozenset({"researcher"})
APPENDED = "appended as a new step"


async def research_wave(state: ResearchState, wave: list[int]) -> list[ObserveOutput]:
    """Research steps (one, or several independent ones at the same time) in phases: every
    step's searches at once; the pages to read chosen in plan order (a page goes to the first
    step that found it); every read at once; sources numbered in plan order; every observation at
    once. So what a research reads and how its sources are numbered never depend on which
    activity happened to finish first, and a page one step failed to read never becomes another
    step's source through its snippet. A single step runs exactly as it always did."""
    plan = state.inquiry.plan
    assert plan is not None
    steps = [plan.steps[i] for i in wave]
    for index, step in zip(wave, steps, strict=False):
        step.status = StepStatus.IN_PROGRESS
        emit(
            state.events,
            EventKind.STEP_STARTED,
            f"step {index + 1}/{len(plan.steps)}: {step.title}",
            {"index": index + 1, "of": len(plan.steps), "title": step.title},
        )
    state.inquiry.current_step_index = wave[0]
    show_progress(state)
    about = state.about()
    hits = await together([_search_for(state, step, about) for step in steps])
    chosen = [_choose_pages(state, found) for found in hits]
    pages = await together(
        [
            _read(state, fresh, focus=f"{step.title}. {step.description} {state.topic_text()}")
            for step, (fresh, _) in zip(steps, chosen, strict=False)
        ]
    )
    passages = [
        _passages(state, fresh, read, seen)
        for (fresh, seen), read in zip(chosen, pages, strict=False)
    ]
    asked = affordable_wave(
        state,
        [
            ObserveInput(**about, step=step, passages=given)
            for step, given in zip(steps, passages, strict=False)
        ],
    )
    found = await together([call(state, roles.OBSERVE, observe) for observe in asked])
    passages = [observe.passages for observe in asked]
    results = []
    for index, step, given, findings in zip(wave, steps, passages, found, strict=False):
        results.append(_record(state, index, step, given, findings))
    return results


async def _search_for(
    state: ResearchState, step: PlanStep, about: dict[str, Any]
) -> list[SearchHit]:
    if step.queries:  # written with the plan: no call of their own
        queries = step.queries[:SEARCH_QUERIES_PER_STEP]
    else:
        queries = await write_queries(
            state, WriteQueriesInput(**about, step=step, max_queries=SEARCH_QUERIES_PER_STEP)
        )
    return await search_all(state, queries)


def _record(
    state: ResearchState,
    index: int,
    step: PlanStep,
    passages: list[Passage],
    findings: ObserveOutput | None,
) -> ObserveOutput:
    if findings is None:
        findings = ObserveOutput(
            observation="The researcher could not write an observation for this step.",
            source_ids=[],
        )
    known = {p.source_id for p in passages}
    step.observation = findings.observation[:OBSERVATION_LIMIT]
    step.source_ids = [n for n in findings.source_ids if n in known]
    state.material.evidence = evidence.merge(
        state.material.evidence,
        evidence.supporting_evidence(step.observation, step.source_ids, passages),
    )
    state.material.keep_read(passages)
    step.status = StepStatus.COMPLETED
    cited = " ".join(f"[{n}]" for n in step.source_ids) or "none"
    emit(
        state.events,
        EventKind.STEP_DONE,
        f"step {index + 1} done: {step.title} (sources: {cited})",
        {
            "index": index + 1,
            "title": step.title,
            "source_ids": step.source_ids,
            "sources": [s.model_dump() for s in state.material.sources if s.id in step.source_ids],
        },
    )
    return findings


def handle_loop_back(state: ResearchState, index: int, findings: ObserveOutput) -> None:
    """A step that needs more work asks for it (seed 003). The request lives only in this
    step's findings, so it is cleared by construction once handled."""
    inquiry, plan = state.inquiry, state.inquiry.plan
    if not findings.needs_more or plan is None:
        return
    agent = (findings.suggested_agent or "").strip().lower()
    query = (findings.suggested_query or "").strip()
    _, high = state.step_limits()
    step = plan.steps[index]
    context = f"{state.topic_text()} {step.title} {step.description}"
    reason = judge_loop_back(plan, agent, query, high, inquiry.depth.value, context)
    accepted = reason == APPENDED
    if accepted:
        plan.steps.append(
            PlanStep(
                title=query[:200],
                description=f"Requested by step {index + 1}: {plan.steps[index].title}",
                origin=StepOrigin.LOOP_BACK,
            )
        )
    else:
        workflow.logger.warning("Loop-back request after step %d refused: %s", index + 1, reason)
    inquiry.loop_backs.append(
        LoopBack(after_step=index + 1, agent=agent, query=query, accepted=accepted, reason=reason)
    )
    verdict = "accepted" if accepted else "declined"
    emit(
        state.events,
        EventKind.LOOP_BACK,
        f"loop-back after step {index + 1} ({verdict}): {query}",
        inquiry.loop_backs[-1].model_dump(),
    )


def judge_loop_back(
    plan: Plan, agent: str, query: str, max_steps: int, depth: str, context: str | None = None
) -> str:
    """Why a loop-back request is refused, or APPENDED when it becomes a new step.

    The request comes from an observation, and so indirectly from the pages read: a page could
    try to steer the research elsewhere. So a suggested step must serve the research: it shares
    at least one content word (by its stem: lifetimes~lifetime, borrowing~borrow) with `context`, the question with
    its clarifications and the step that asked for it.
    """
    if agent not in LOOP_BACK_AGENTS:
        return f"unknown agent {agent or '(none)'!r}; known: {', '.join(sorted(LOOP_BACK_AGENTS))}"
    if not query:
        return "no query was suggested"
    if context is not None and not _words(query) & _words(context):
        return "the suggested step shares no word with the question or the step that asked for it"
    if len(plan.steps) >= max_steps:
        return f"the plan already has the {depth} depth's maximum of {max_steps} steps"
    if any(s.title.lower() == query.lower() for s in plan.steps):
        return "a step with that query is already in the plan"
    return APPENDED


def _words(text: str) -> set[str]:
    return {stem(w) for w in content_terms(text)}


def clean_queries(queries: list[str], limit: int) -> list[str]:
    """Queries as a search box takes them: one line each, no repeats, at most `limit`."""
    out: list[str] = []
    for query in queries:
        query = " ".join(query.split()).strip("\"'")[:400]
        if query and query.lower() not in {q.lower() for q in out}:
            out.append(query)
    return out[:limit]


async def write_queries(state: ResearchState, request: WriteQueriesInput) -> list[str]:
    written = await call(state, roles.WRITE_QUERIES, request)
    queries = [q.strip() for q in (written.queries if written else []) if q.strip()]
    fallback = (
        f"{request.step.title} {request.topic_text()}" if request.step else request.topic_text()
    )
    return queries[: request.max_queries] or [fallback[:400]]


async def search_all(state: ResearchState, queries: list[str]) -> list[SearchHit]:
    """Search every query concurrently; hits merged in rank order, one per URL (a `papers`
    research: every scholarly index, one hit per work: workflows/loop/literature.py)."""
    sources = state.request.sources
    if sources.papers:
        return await literature.search_papers(state, queries, HITS_PER_QUERY)
    owner = state.request.owner if sources.documents else None
    results = await asyncio.gather(
        *(
            call(
                state,
                roles.SEARCH,
                SearchInput(query=q, max_results=HITS_PER_QUERY, sources=sources, owner=owner),
            )
            for q in queries
        )
    )
    state.ledger.stats.searches += len(queries)
    merged: list[SearchHit] = []
    seen: set[str] = set()
    for rank in range(HITS_PER_QUERY):
        for result in results:
            if result is not None and rank < len(result.hits) and result.hits[rank].url not in seen:
                seen.add(result.hits[rank].url)
                merged.append(result.hits[rank])
    return merged


def _choose_pages(
    state: ResearchState, hits: list[SearchHit]
) -> tuple[list[SearchHit], list[SearchHit]]:
    """The best unread pages to read, and the hits of pages read before (their snippets stand in:
    a URL is never fetched twice in a research). Claims the pages it chooses."""
    read, unreadable = state.material.read_urls, state.material.unreadable_urls
    fresh = [h for h in hits if h.url not in read][:PAGES_PER_STEP]
    seen_before = [h for h in hits if h.url in read and h.url not in unreadable][:PAGES_PER_STEP]
    read.update(h.url for h in fresh)
    return fresh, seen_before


async def _read(
    state: ResearchState, fresh: list[SearchHit], focus: str
) -> list[ReadPageOutput | None]:
    """Read pages concurrently; a page that fails is None (skipped, never fatal)."""
    return list(
        await asyncio.gather(
            *(
                call(
                    state,
                    roles.READ_PAGE,
                    ReadPageInput(url=h.url, focus=focus[:1000], paper=h.paper),
                )
                for h in fresh
            )
        )
    )


def _passages(
    state: ResearchState,
    fresh: list[SearchHit],
    pages: list[ReadPageOutput | None],
    seen_before: list[SearchHit],
) -> list[Passage]:
    """The step's passages, its sources numbered now (in plan order, after every read of the
    wave): pages read, then the snippets of pages read before that could be read."""
    passages, material = [], state.material
    for hit, page in zip(fresh, pages, strict=False):
        state.ledger.stats.pages_fetched += 1
        if page is None or page.error or not page.text.strip():
            workflow.logger.info("Skipped %s: %s", hit.url, page.error if page else "read failed")
            material.unreadable_urls.add(hit.url)
            continue
        # a paper keeps its index's title: a PDF's own is often a running head or a file name
        title = hit.title if hit.paper else page.title or hit.title
        source_id = material.add_source(
            hit.url, title, hit.provider, state.events, page.digest, hit.paper, page.read
        )
        passages.append(Passage(source_id=source_id, title=title, url=hit.url, text=page.text))
    for hit in seen_before:
        if hit.url in material.unreadable_urls:
            continue
        source_id = material.add_source(
            hit.url, hit.title, hit.provider, state.events, paper=hit.paper
        )
        passages.append(
            Passage(source_id=source_id, title=hit.title, url=hit.url, text=hit.snippet)
        )
    return passages
