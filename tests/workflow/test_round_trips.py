"""Fewer round trips through the server per research, as an operator sees them in a
research's history, with the failure policy unchanged.

- Searches and reads of the local corpus run as local activities: in the worker that runs the
  research, recorded as one marker event, without a round trip through the task queue (a light
  research had a third of its events in these short, CPU-light calls). A web page is a crawl
  (robots, politeness, slow hosts) and stays a regular activity, its heartbeats and retries
  visible one by one.
- The coordinator classifies the question alongside the first routing call: a clear question
  waits for one LLM call fewer; a vague one is classified again once it is clarified.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from tests.support.doubles import Script
from workflows import activity_models as m
from workflows.models import Depth, ResearchRequest, ResearchResult
from workflows.research import DeepResearchWorkflow


def mixed_hits(req: m.SearchInput) -> m.SearchOutput:
    """One document of the local corpus and one web page per query."""
    slug = abs(hash(req.query)) % 10_000
    return m.SearchOutput(
        hits=[
            m.SearchHit(
                url=f"file:///docs/{slug}.md",
                title=f"Doc on {req.query}",
                snippet="snippet",
                provider="local",
            ),
            m.SearchHit(
                url=f"https://example.org/{slug}",
                title=f"Page on {req.query}",
                snippet="snippet",
                provider="web",
            ),
        ]
    )


async def run(env: WorkflowEnvironment, script: Script) -> tuple[ResearchResult, Any]:
    task_queue = f"tq-{uuid.uuid4()}"
    async with Worker(
        env.client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow],
        activities=script.activities(),
    ):
        handle = await env.client.start_workflow(
            DeepResearchWorkflow.run,
            ResearchRequest(query="How do tide pools form?", depth=Depth.LIGHT),
            id=f"wf-{uuid.uuid4()}",
            task_queue=task_queue,
        )
        result = await handle.result()
        return result, await handle.fetch_history()


def scheduled(history: Any) -> Counter[str]:
    return Counter(
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    )


def markers(history: Any) -> int:
    return sum(e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED for e in history.events)


async def test_corpus_searches_and_reads_are_markers_and_web_pages_stay_activities(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script(search=mixed_hits)
    result, history = await run(time_skipping_env, script)

    read = [page.url for page in script.calls["read_page"]]
    web_reads = [url for url in read if url.startswith("https://")]
    assert script.calls["search"] and web_reads and len(web_reads) < len(read)
    kinds = scheduled(history)
    assert "search" not in kinds
    assert kinds["read_page"] == len(web_reads)  # only the web pages went through the task queue
    assert markers(history) >= len(script.calls["search"]) + len(read) - len(web_reads)
    cited = {source.url for source in result.sources}
    assert any(url.startswith("file://") for url in cited) and any(
        url.startswith("https://") for url in cited
    )


async def test_a_local_search_is_retried_and_then_falls_back_like_any_activity(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    attempts: Counter[str] = Counter()

    def flaky(req: m.SearchInput) -> m.SearchOutput:
        attempts[req.query] += 1
        if attempts[req.query] < 2:
            raise ApplicationError("the index is busy")
        if "never" in req.query:
            raise ApplicationError("the index is gone")
        return mixed_hits(req)

    script = Script(search=flaky)
    result, _ = await run(time_skipping_env, script)

    assert attempts and all(
        n >= 2 for n in attempts.values()
    )  # each query retried after its failure
    assert result.sources  # ...and then answered
    assert not any("search failed" in note for note in result.notes)

    def broken(req: m.SearchInput) -> m.SearchOutput:
        raise ApplicationError("the index is gone")

    result, _ = await run(time_skipping_env, Script(search=broken))
    assert any(note.startswith("search failed (the index is gone)") for note in result.notes)


# --- the coordinator alongside the first routing call (patch classify-while-routing) -----------


def order(history: Any) -> list[str]:
    """Scheduled activities and their completions, in history order (`+name`, `-name`)."""
    names: dict[int, str] = {}
    seen = []
    for e in history.events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            names[e.event_id] = e.activity_task_scheduled_event_attributes.activity_type.name
            seen.append("+" + names[e.event_id])
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            seen.append("-" + names[e.activity_task_completed_event_attributes.scheduled_event_id])
    return seen


async def test_a_clear_question_is_classified_while_it_is_routed(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    script = Script()
    result, history = await run(time_skipping_env, script)

    seen = order(history)
    assert seen.index("+coordinate") < seen.index("-route")  # both asked before either answered
    assert len(script.calls["coordinate"]) == 1 and result.report_markdown


async def test_a_vague_question_is_classified_again_once_it_is_clarified(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    from workflows.models import RoutingDecision

    routes = iter([RoutingDecision.CLARIFICATION, RoutingDecision.RESEARCH])
    script = Script(route=lambda inp: m.RouteOutput(decision=next(routes), reasoning="scripted"))
    task_queue = f"tq-{uuid.uuid4()}"
    async with Worker(
        time_skipping_env.client,
        task_queue=task_queue,
        workflows=[DeepResearchWorkflow],
        activities=script.activities(),
    ):
        handle = await time_skipping_env.client.start_workflow(
            DeepResearchWorkflow.run,
            ResearchRequest(query="Is it better?", depth=Depth.LIGHT, reply_shortcut=False),
            id=f"wf-{uuid.uuid4()}",
            task_queue=task_queue,
        )
        while not (await handle.query(DeepResearchWorkflow.status)).pending_question:
            pass
        await handle.signal("clarification_answer", "tide pools on rocky shores")
        result = await handle.result()

    first, second = script.calls["coordinate"]
    assert first.clarifications == [] and second.clarifications == ["tide pools on rocky shores"]
    assert result.report_markdown


# --- v0.1.0: every gate folded (workflows/patches.py) ---------------------------------------------


def patch_markers(history: Any) -> list[str]:
    import json

    ids = []
    for e in history.events:
        if (
            e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
            and e.marker_recorded_event_attributes.marker_name == "core_patch"
        ):
            [payload] = e.marker_recorded_event_attributes.details["patch-data"].payloads
            ids.append(json.loads(payload.data)["id"])
    return ids


async def test_a_new_research_records_only_the_markers_of_the_paths_it_took(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """Every gate before v0.1.0 was folded; a patch after it is asked only where its new path
    begins, so a plain research whose claims a model's judge checked records that one marker
    (and the SDK's one TemporalChangeVersion search attribute upsert for it)."""
    from workflows import patches

    _, history = await run(time_skipping_env, Script(search=mixed_hits))
    assert patch_markers(history) == [patches.JUDGE_HAS_LAST_WORD]
    upserts = sum(
        e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
        for e in history.events
    )
    assert upserts == 1


def test_no_retired_patch_id_is_used_again() -> None:
    from pathlib import Path

    from workflows import patches

    assert not patches.ACTIVE & patches.RETIRED
    code = "".join(
        p.read_text()
        for p in (Path(__file__).parents[2] / "workflows").rglob("*.py")
        if p.name != "patches.py"
    )
    assert not [i for i in patches.RETIRED if f'"{i}"' in code]
