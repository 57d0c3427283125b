"""Streamed replies (activities/openai_engine/streaming.py) against a real HTTP server that writes
its reply token by token (tests/support/sse.py): a slow model that keeps writing finishes however
long it takes, one that falls silent fails as a retryable timeout, usage comes from the stream,
and the activity heartbeats while the tokens arrive.

The limits are small here (a silence of half a second, tokens a fifth of a second apart) so that
what takes minutes on a CPU takes seconds.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from activities.openai_engine import OpenAIEngine
from activities.usage import metered
from settings import Settings
from tests.activities.test_openai_engine import clean_env  # noqa: F401 - fixture
from tests.support.llm_server import USAGE, Fault, ScriptedLLM, running_llm
from tests.support.sse import tokens
from workflows.activity_models import RouteInput, RouteOutput
from workflows.models import Message, RoutingDecision, Speaker
from workflows.roles import ROUTE

QUESTION = RouteInput(
    messages=[Message(role=Speaker.USER, content="How does ownership work in Rust?")],
    clarification_count=0,
    max_clarifications=0,
)
#: The route reply the server writes, about 17 tokens of 4 characters.
ROUTE_TOKENS = len(tokens('{"decision": "RESEARCH", "reasoning": "The question is specific."}'))


@pytest.fixture
def slow_llm(clean_env: None) -> Iterator[ScriptedLLM]:
    """A model that writes a token every 0.2 s."""
    with running_llm(token_gap_s=0.2) as llm:
        yield llm


def engine_for(llm: ScriptedLLM, **settings: Any) -> OpenAIEngine:
    values: dict[str, Any] = {
        "openai_base_url": llm.base_url,
        "llm_model": "test-model",
        "llm_silence_timeout_s": 0.5,
        "llm_prompt_tokens_per_s": 1e6,  # no allowance for reading the prompt unless a test says
    }
    return OpenAIEngine(Settings(_env_file=None, **{**values, **settings}))


async def test_a_reply_that_keeps_coming_finishes_however_long_it_takes(
    slow_llm: ScriptedLLM,
) -> None:
    started = time.monotonic()
    out = await engine_for(slow_llm).route(QUESTION)
    took = time.monotonic() - started

    assert out.decision is RoutingDecision.RESEARCH
    # Six times the silence timeout, which a request timeout of that length would have cut.
    assert took > 6 * 0.5, took
    [request] = slow_llm.served
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["response_format"]["type"] == "json_schema"  # structured, streamed


async def test_a_server_that_falls_silent_mid_reply_is_a_retryable_timeout(
    slow_llm: ScriptedLLM,
) -> None:
    slow_llm.fail_next("route", Fault(stall_after=5, hang_s=30.0))

    started = time.monotonic()
    with pytest.raises(ApplicationError) as caught:
        await engine_for(slow_llm).route(QUESTION)
    took = time.monotonic() - started

    assert caught.value.type == "LLMTimeout" and not caught.value.non_retryable
    assert "went silent for 0.5 s" in caught.value.message
    # Five tokens 0.2 s apart, then half a second of silence: not the server's thirty.
    assert 0.5 < took < 10.0, took


async def test_the_first_token_may_wait_for_the_prompt_to_be_read(
    slow_llm: ScriptedLLM,
) -> None:
    """A server reads the prompt before its first token, in silence: that wait is allowed the
    prompt's tokens at LLM_PROMPT_TOKENS_PER_S on top of the silence timeout."""
    slow_llm.fail_next("route", Fault(hang_s=2.0), Fault(hang_s=8.0))
    # The route prompt is over 100 tokens: at 50 a second, over 2 s more than the silence's 0.5.
    patient = engine_for(slow_llm, llm_prompt_tokens_per_s=50)

    assert (await patient.route(QUESTION)).decision is RoutingDecision.RESEARCH
    started = time.monotonic()
    with pytest.raises(ApplicationError) as caught:
        await engine_for(slow_llm).route(QUESTION)  # no allowance: the silence's 0.5 s only
    assert caught.value.type == "LLMTimeout" and "sent nothing for" in caught.value.message
    assert time.monotonic() - started < 5.0  # not the server's 8 s


async def test_a_call_that_writes_past_the_ceiling_is_ended_there(clean_env: None) -> None:
    with running_llm(token_gap_s=0.3) as llm:  # about 5 s of steady tokens
        started = time.monotonic()
        with pytest.raises(ApplicationError) as caught:
            await engine_for(llm, llm_silence_timeout_s=1.0, llm_call_limit_s=2).route(QUESTION)
    assert caught.value.type == "LLMTimeout" and not caught.value.non_retryable
    assert "still replying" in caught.value.message and "LLM_CALL_LIMIT_S" in caught.value.message
    assert 1.9 < time.monotonic() - started < 4.5  # the server would go on to about 5 s


async def test_usage_comes_from_the_stream_and_is_estimated_when_the_server_sends_none(
    clean_env: None,
) -> None:
    with running_llm() as llm:
        counted = await engine_for(llm).route(QUESTION)
        llm.usage_chunk = False
        estimated = await engine_for(llm).route(QUESTION)

    assert (counted.usage.prompt_tokens, counted.usage.completion_tokens) == USAGE
    assert estimated.usage.completion_tokens == ROUTE_TOKENS  # one chunk, one token
    assert 50 < estimated.usage.prompt_tokens < 5000  # from the prompt's length


async def test_a_server_that_ignores_stream_is_read_as_one_reply(clean_env: None) -> None:
    with running_llm(streams=False) as llm:
        out = await engine_for(llm).route(QUESTION)
    assert out.decision is RoutingDecision.RESEARCH
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == USAGE


# --- inside a real activity --------------------------------------------------------------------------


@workflow.defn(sandboxed=False)
class RouteOnce:
    """One route call with a heartbeat timeout shorter than the reply takes, and no retry: it
    completes only if the activity heartbeats while the tokens arrive."""

    @workflow.run
    async def run(self, inp: RouteInput) -> RouteOutput:
        return await workflow.execute_activity(
            ROUTE.name,
            inp,
            result_type=RouteOutput,
            start_to_close_timeout=timedelta(seconds=60),
            heartbeat_timeout=timedelta(seconds=3),
            retry_policy=RetryPolicy(maximum_attempts=1),
        )


async def test_the_activity_heartbeats_while_the_reply_streams(
    dev_client: Client, slow_llm: ScriptedLLM
) -> None:
    slow_llm.token_gap_s = 0.4  # about 7 s of tokens: past the 3 s heartbeat timeout twice
    engine = engine_for(slow_llm, llm_silence_timeout_s=2.0)

    async def serve(inp: RouteInput) -> RouteOutput:
        # What activities/llm.py runs: the background beat comes every 5 s, too late for a 3 s
        # heartbeat timeout; the beats sent as tokens arrive are what keep the attempt alive.
        return await metered(engine.route(inp))

    queue = f"tq-stream-{uuid.uuid4().hex[:8]}"
    async with Worker(
        dev_client,
        task_queue=queue,
        workflows=[RouteOnce],
        activities=[ROUTE.define(serve)],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        started = time.monotonic()
        out = await dev_client.execute_workflow(
            RouteOnce.run, QUESTION, id=f"stream-{uuid.uuid4().hex[:8]}", task_queue=queue
        )
    assert out.decision is RoutingDecision.RESEARCH
    assert time.monotonic() - started > 5  # longer than the heartbeat timeout
    assert out.usage.completion_tokens == USAGE[1] and out.usage.attempt == 1


async def test_a_server_that_refuses_streaming_is_asked_without_it_from_then_on(
    clean_env: None,
) -> None:
    with running_llm() as llm:
        refusal = {"error": {"message": "Streaming is not supported", "param": "stream"}}
        llm.fail_next("route", Fault(400, refusal))
        engine = engine_for(llm)
        first = await engine.route(QUESTION)
        second = await engine.route(QUESTION)

    assert first.decision is second.decision is RoutingDecision.RESEARCH
    sent = [r.body for r in llm.served]
    assert [b.get("stream") for b in sent] == [True, None, None]
    assert "stream_options" not in sent[1]


def test_the_older_name_of_the_silence_timeout_still_works(
    clean_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_REQUEST_TIMEOUT_S", "85")
    assert Settings(_env_file=None).llm.silence_timeout_s == 85
    monkeypatch.setenv("LLM_SILENCE_TIMEOUT_S", "300")  # the new name wins, and may exceed 85
    assert Settings(_env_file=None).llm.silence_timeout_s == 300
