"""One request, streamed: a call may take minutes as long as the model keeps writing.

A fixed request timeout cannot tell a slow model from a dead one. On a laptop CPU a 1.5B model
writes 1.4-7 tokens a second, so an honest 1,000-token reply takes minutes, and a fixed 85 s
timeout turned most calls of a light research into retries and fallbacks. So every reply is
streamed (`stream=True`, also for structured output: the JSON's deltas are joined and parsed at
the end) and three limits apply instead (`Patience`):

- silence: once the reply has begun, the endpoint may go at most `silence_s` without sending a
  chunk (any chunk: a reasoning model's `reasoning_content` is the model working too);
- the first chunk: before it a server reads the whole prompt and sends nothing (llama.cpp cannot
  stream its progress; a CPU reads 17 prompt tokens a second, so a 3,000-token prompt is three
  silent minutes). That wait gets the silence allowance plus the prompt's estimated tokens at a
  conservative rate (LLM_PROMPT_TOKENS_PER_S). A server that serves one call at a time
  (llama-cpp-python) is silent for a call queued behind another for the other's whole length:
  the rate is what absorbs that, so a slower rate suits a busy single-slot server;
- the ceiling: the whole call (its requests, a continuation's too) ends by the deployment's
  LLM_CALL_LIMIT_S however steadily it writes.

Each is a retryable `LLMTimeout`, as a timed-out request was.

The stream is read as the SSE spec says, not as one server writes it (`_events`): comment frames
(sse-starlette's `: ping`, sent while llama-cpp-python reads a long prompt) and events whose data
is not JSON (an older `event: ping`) are keep-alives, not the model writing, and never fail the
reply; a role-only first chunk, the text in `delta.content`, in a completions-style `text` or in a
whole `message`, and a reply whose text all went to `reasoning_content` are all read. A reply that
ends (`[DONE]` or the connection closed) without a finish reason was cut off by the server, not
finished by the model: llama-cpp-python's server does that to a streamed reply whenever another
request arrives (its `interrupt_requests`, on by default), so `Streamed.finished` tells the engine
to ask again one request at a time (chat.py) instead of reading half a reply as a bad one.

Usage comes from the stream's last
chunk (`stream_options.include_usage`); a server that sends none is estimated from the texts and
the chunks (`Streamed.estimated`, never used to calibrate the prompt estimate). A server that
ignores `stream` and answers with one JSON completion is read as before. While chunks arrive the
activity heartbeats (`beat`), so the attempt's heartbeat shows the model writing, not only the
worker breathing (the background beat of activities/heartbeats.py covers the silent prompt read).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import openai
from openai import AsyncStream
from openai.types.chat import ChatCompletion
from temporalio.exceptions import ApplicationError

from workflows.text.redaction import redact

#: How often a streaming call heartbeats at most (the SDK throttles too; this spares the work).
BEAT_EVERY_S = 2.0


@dataclass(frozen=True)
class Patience:
    """How long one request may stay silent, and when the call it belongs to must end."""

    silence_s: float
    #: Silence allowed before the first chunk: the prompt is read first (module docstring).
    first_chunk_s: float
    #: The event loop's clock by which the whole call ends (LLM_CALL_LIMIT_S from its start).
    deadline: float

    @classmethod
    def for_prompt(
        cls, silence_s: float, prompt_tokens: int, tokens_per_s: float, deadline: float
    ) -> Patience:
        return cls(silence_s, silence_s + prompt_tokens / tokens_per_s, deadline)


@dataclass
class Streamed:
    """A streamed reply put back together as the completion a plain request would have returned."""

    completion: Any
    #: No usage chunk came: the tokens are estimates (module docstring).
    estimated: bool = False
    #: The model finished its reply (a finish reason came); False when the server ended the
    #: stream before that (module docstring: an interrupted reply, to be asked again).
    finished: bool = True


@dataclass
class _Reply:
    """The deltas received so far."""

    text: list[str] = field(default_factory=list)
    #: What the server sent as `reasoning_content`: the reply itself when it sent nothing else.
    reasoning: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    chunks: int = 0
    #: Chunks that carried text (the reply's or reasoning): about one token each.
    tokens: int = 0
    finish_reason: str | None = None
    usage: Any = None
    model: str = ""

    def add(self, chunk: Any) -> None:
        """One chunk, as the JSON the server sent (module docstring: not the SDK's models)."""
        if not isinstance(chunk, dict):
            raise TypeError("a chunk that is not a JSON object")
        self.chunks += 1
        self.model = chunk.get("model") or self.model
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in (chunk.get("choices") or [])[:1]:
            delta = choice.get("delta") or choice.get("message") or {}
            text = delta.get("content") or choice.get("text") or ""
            if isinstance(text, str) and text:
                self.text.append(text)
            thought = delta.get("reasoning_content") or delta.get("reasoning") or ""
            if isinstance(thought, str) and thought:
                self.reasoning.append(thought)
            if text or thought:
                self.tokens += 1
            if delta.get("refusal"):
                self.refusal.append(delta["refusal"])
            self.finish_reason = choice.get("finish_reason") or self.finish_reason

    def completion(self, prompt_tokens: int) -> Streamed:
        usage, estimated = self.usage, self.usage is None
        if estimated:  # one chunk carries about one token on llama.cpp, vLLM and OpenAI
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": self.tokens}
        else:
            usage = {
                "prompt_tokens": int(usage.get("prompt_tokens") or 0),
                "completion_tokens": int(usage.get("completion_tokens") or 0),
            }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        text = "".join(self.text)
        if not text.strip() and "{" in "".join(self.reasoning):
            text = "".join(self.reasoning)  # the whole reply went to reasoning_content
        message = {
            "role": "assistant",
            "content": text if text or not self.refusal else None,
            "refusal": "".join(self.refusal) or None,
        }
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason or "stop"}
        completion = ChatCompletion.construct(
            id="streamed",
            object="chat.completion",
            created=int(time.time()),
            model=self.model,
            choices=[choice],
            usage=usage,
        )
        return Streamed(completion, estimated, finished=self.finish_reason is not None)


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str | None, str]]:
    """Each server-sent event as (its `event` name, its data), by the SSE spec: lines up to a
    blank one make an event, `data:` lines join with newlines, comment lines (`: ping`) and
    other fields are skipped. An event without data is no event (a bare keep-alive)."""
    name: str | None = None
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield name, "\n".join(data)
            name, data = None, []
            continue
        if line.startswith(":"):
            continue
        field_name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field_name == "event":
            name = value
        elif field_name == "data":
            data.append(value)
    if data:
        yield name, "\n".join(data)


def _chunk(data: str) -> Any:
    """The event's JSON, or None for data that is not JSON (a keep-alive such as `ping - <time>`)."""
    try:
        return json.loads(data)
    except ValueError:
        return None


async def _sent(
    client: openai.AsyncOpenAI, body: dict[str, Any], left_s: float
) -> AsyncStream[object]:
    """The request, its reply to be read as it streams. The SDK's own timeout only backs the
    call's limits up (it would cut a steady reply); chunks come as plain JSON, not the SDK's
    models: those cost 55 us each, a research's worth of tokens a third more worker CPU in
    `make bench` (cast_to `object`: as sent)."""
    return await client.post(
        "/chat/completions",
        cast_to=ChatCompletion,
        body=body,
        options={"timeout": max(1.0, left_s + 5)},
        stream=True,
        stream_cls=AsyncStream[object],
    )


async def stream_completion(
    client: openai.AsyncOpenAI,
    body: dict[str, Any],
    patience: Patience,
    *,
    prompt_tokens: int,
    beat: Callable[[], None],
    spent: Callable[[int, int], None],
    where: str,
) -> Streamed:
    """One streamed request within `patience`; SDK errors propagate (the caller classifies
    them), running out of patience is an `LLMTimeout`. `spent(prompt, completion)` counts what
    a reply cut short by a limit had cost (estimated: no usage chunk came)."""
    loop = asyncio.get_running_loop()
    reply, stream = _Reply(), None
    first_by = min(loop.time() + patience.first_chunk_s, patience.deadline)
    last_beat = loop.time()
    try:
        async with asyncio.timeout_at(first_by) as limit:
            stream = await _sent(client, body, patience.deadline - loop.time())
            if "event-stream" not in stream.response.headers.get("content-type", ""):
                raw = await stream.response.aread()  # a server that ignored `stream`
                return Streamed(ChatCompletion.construct(**json.loads(raw)))
            async for event, data in _events(stream.response.aiter_lines()):
                if data.strip() == "[DONE]":
                    break
                chunk = _chunk(data)
                if chunk is None:
                    continue  # a keep-alive: the server breathing, not the model writing
                if event == "error" or (isinstance(chunk, dict) and chunk.get("error")):
                    raise _stream_error(chunk, stream.response.request)
                now = loop.time()
                limit.reschedule(min(now + patience.silence_s, patience.deadline))
                reply.add(chunk)
                if now - last_beat >= BEAT_EVERY_S:
                    last_beat = now
                    beat()
    except (ValueError, TypeError, AttributeError) as err:  # not a completion's JSON
        raise ApplicationError(
            f"the LLM endpoint {redact(where)} sent a reply that is not a chat completion "
            f"({type(err).__name__})",
            type="InvalidLLMReply",
        ) from None
    except TimeoutError:
        if reply.tokens:
            spent(prompt_tokens, reply.tokens)
        raise _timed_out(reply, patience, loop.time(), where, body.get("model", "")) from None
    finally:
        if stream is not None:
            await stream.close()
    return reply.completion(prompt_tokens)


def _stream_error(chunk: Any, request: Any) -> openai.APIError:
    """An error the server sent inside the stream, as the SDK would raise it (endpoint.py classifies)."""
    error = chunk.get("error") if isinstance(chunk, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return openai.APIError(
        message
        if isinstance(message, str) and message
        else "the server reported an error mid-stream",
        request,
        body=error if error is not None else chunk,
    )


def _timed_out(
    reply: _Reply, patience: Patience, now: float, where: str, model: str
) -> ApplicationError:
    """Which of the three limits ran out, in words a person can act on (retryable)."""
    where = f"the LLM endpoint {redact(where)} (model {model})"
    if now >= patience.deadline - 0.05:
        doing = f"was still replying ({reply.chunks} chunks)" if reply.chunks else "sent nothing"
        why = f"{where} {doing} when the call reached its limit, LLM_CALL_LIMIT_S"
    elif reply.chunks:
        why = (
            f"{where} went silent for {patience.silence_s:g} s after {reply.chunks} chunks "
            "(LLM_SILENCE_TIMEOUT_S)"
        )
    else:
        why = (
            f"{where} sent nothing for {patience.first_chunk_s:.0f} s, the time allowed to read "
            "the prompt (LLM_SILENCE_TIMEOUT_S plus its tokens at LLM_PROMPT_TOKENS_PER_S)"
        )
    return ApplicationError(why, type="LLMTimeout")
