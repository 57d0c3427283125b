"""Streamed replies of every shape real servers send, read right (activities/openai_engine/
streaming.py), over real HTTP from a loopback server that writes the recorded bytes as they are.

The shapes are those seen from llama.cpp's servers, vLLM, Ollama and proxies: sse-starlette's
`: ping` comment frames while a long prompt is read (with CRLF line ends), an older `event: ping`
whose data is a timestamp, a role-only first chunk, the JSON split anywhere (inside a string, an
escape, a multi-byte character), the whole reply in `reasoning_content`, a reply cut at
`max_tokens` (continued), an error sent mid-stream, and llama-cpp-python's interruption: a
streamed reply ended with `[DONE]` and no finish reason as soon as another request arrives, which
with a research's concurrent calls once made every reply read as empty or "no JSON object".
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from activities.openai_engine import OpenAIEngine
from activities.openai_engine.servers import facts_for
from settings import Settings
from tests.activities.test_openai_engine import clean_env  # noqa: F401 - fixture
from tests.support.http_doubles import local_server, serving
from workflows.activity_models import RouteInput
from workflows.models import Message, RoutingDecision, Speaker

MODEL = "test-model"
REPLY = {"decision": "RESEARCH", "reasoning": "Ownership is a named, specific topic — «clear»."}
TEXT = json.dumps(REPLY, ensure_ascii=False)
QUESTION = RouteInput(
    messages=[Message(role=Speaker.USER, content="How does ownership work in Rust?")],
    clarification_count=0,
    max_clarifications=0,
)


def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
    body = {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def plain_stream(text: str = TEXT, size: int = 5, finish: str = "stop") -> list[bytes]:
    """What llama.cpp's server sends: role first, then the text, the finish, usage, [DONE]."""
    return [
        chunk({"role": "assistant"}),
        *(chunk({"content": p}) for p in pieces(text, size)),
        chunk({}, finish),
        chunk(None, usage={"prompt_tokens": 30, "completion_tokens": 20, "total_tokens": 50}),
        b"data: [DONE]\n\n",
    ]


Writes = Callable[[dict[str, Any]], list[bytes]]


class RecordedLLM:
    """Answers each chat request with the byte writes `script(request)` gives, flushed one by one
    (a short pause between them, so a client sees them as separate TCP reads)."""

    def __init__(self, *scripts: Writes) -> None:
        self.scripts = list(scripts)
        self.requests: list[dict[str, Any]] = []
        recorded = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if not self.path.endswith("/chat/completions"):  # Ollama's /api/show probe
                    self.send_error(404)
                    return
                recorded.requests.append(body)
                script = (
                    recorded.scripts.pop(0) if len(recorded.scripts) > 1 else recorded.scripts[0]
                )
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for write in script(body):
                        self.wfile.write(write)
                        self.wfile.flush()
                        time.sleep(0.005)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = local_server(Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def engine_for(base_url: str) -> OpenAIEngine:
    return OpenAIEngine(
        Settings(
            _env_file=None,
            openai_base_url=base_url,
            llm_model=MODEL,
            llm_silence_timeout_s=20,
            llm_prompt_tokens_per_s=1e6,
        )
    )


async def routed(*scripts: Writes) -> tuple[Any, RecordedLLM]:
    llm = RecordedLLM(*scripts)
    with serving(llm.server):
        out = await engine_for(llm.base_url).route(QUESTION)
    return out, llm


@pytest.fixture(autouse=True)
def _clean(clean_env: None) -> None:  # noqa: F811 - the imported fixture
    pass


async def test_ping_comment_frames_with_crlf_are_keep_alives_not_replies() -> None:
    ping = b": ping - 2026-12-01 00:00:00.000000+00:00\r\n\r\n"
    writes = [ping, ping, *(w.replace(b"\n", b"\r\n") for w in plain_stream()), ping]

    out, _ = await routed(lambda _: writes)

    assert out.decision is RoutingDecision.RESEARCH and out.reasoning == REPLY["reasoning"]


async def test_an_old_style_ping_event_whose_data_is_not_json_is_skipped() -> None:
    ping = b"event: ping\ndata: 2026-12-01 00:00:00.000000\n\n"
    writes = [ping, *plain_stream()[:3], ping, *plain_stream()[3:]]

    out, _ = await routed(lambda _: writes)

    assert out.reasoning == REPLY["reasoning"]


@pytest.mark.parametrize("size", [1, 3, 7, 64])
async def test_json_split_anywhere_and_multibyte_text_split_across_writes_reads_whole(
    size: int,
) -> None:
    raw = b"".join(plain_stream(size=size))
    # Also split the bytes themselves, inside the UTF-8 of «, — and the JSON escapes.
    writes = [raw[i : i + 13] for i in range(0, len(raw), 13)]

    out, _ = await routed(lambda _: writes)

    assert out.reasoning == REPLY["reasoning"]


async def test_a_reply_that_went_wholly_to_reasoning_content_is_read() -> None:
    writes = [
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"content": "", "reasoning_content": p}) for p in pieces(TEXT, 6)),
        chunk({}, "stop"),
        b"data: [DONE]\n\n",
    ]

    out, _ = await routed(lambda _: writes)

    assert out.reasoning == REPLY["reasoning"]


async def test_a_reply_cut_at_max_tokens_is_continued_and_read_as_one() -> None:
    first = [
        chunk({"role": "assistant"}),
        *(chunk({"content": p}) for p in pieces(TEXT[:30], 5)),
        chunk({}, "length"),
        b"data: [DONE]\n\n",
    ]
    rest = plain_stream(TEXT[30:])

    out, llm = await routed(lambda _: first, lambda _: rest)

    assert out.reasoning == REPLY["reasoning"]
    assert llm.requests[1]["messages"][1] == {"role": "assistant", "content": TEXT[:30]}


async def test_an_error_sent_mid_stream_is_classified_not_read_as_an_empty_reply() -> None:
    writes = [
        chunk({"role": "assistant"}),
        b'data: {"error": {"message": "the model crashed while writing", "code": 500}}\n\n',
    ]

    with pytest.raises(ApplicationError) as caught:
        await routed(lambda _: writes)

    assert "crashed while writing" in caught.value.message
    assert caught.value.type != "InvalidLLMReply"


async def test_a_reply_the_server_ended_before_its_finish_is_asked_again_in_turn() -> None:
    """llama-cpp-python's shape when another request arrives: part of the reply, then [DONE]."""
    interrupted = [
        chunk({"role": "assistant"}),
        chunk({"content": '{ "decision": "RESEARCH", "reas'}),
        b"data: [DONE]\n\n",
    ]

    out, llm = await routed(lambda _: interrupted, lambda _: plain_stream())

    assert out.reasoning == REPLY["reasoning"]
    assert len(llm.requests) == 2
    assert facts_for(llm.base_url, MODEL).one_at_a_time
    assert out.usage.repaired == 0  # half a reply is asked again, never "repaired" into one


class OneSlotLLM:
    """llama-cpp-python's server as it behaves: one request at a time, and a streamed reply is cut
    short (`[DONE]`, no finish reason) as soon as another request is waiting for the model."""

    def __init__(self) -> None:
        self.slot = threading.Lock()
        self.waiting = 0
        self.cut = 0
        self.count = threading.Lock()
        one = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                if not self.path.endswith("/chat/completions"):  # Ollama's /api/show probe
                    self.send_error(404)
                    return
                with one.count:
                    one.waiting += 1
                with one.slot:
                    with one.count:
                        one.waiting -= 1
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.close_connection = True
                    for write in plain_stream(size=4):
                        self.wfile.write(write)
                        self.wfile.flush()
                        time.sleep(0.02)
                        if one.waiting and write.startswith(b'data: {"id"'):
                            with one.count:
                                one.cut += 1
                            self.wfile.write(b"data: [DONE]\n\n")
                            self.wfile.flush()
                            return

            def log_message(self, *args: Any) -> None:
                pass

        self.server = local_server(Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def one_slot() -> Iterator[OneSlotLLM]:
    llm = OneSlotLLM()
    with serving(llm.server):
        yield llm


async def test_concurrent_calls_to_a_server_that_interrupts_streams_all_get_their_answer(
    one_slot: OneSlotLLM,
) -> None:
    engine = engine_for(one_slot.base_url)

    outs = await asyncio.gather(*(engine.route(QUESTION) for _ in range(4)))

    assert [o.reasoning for o in outs] == [REPLY["reasoning"]] * 4
    assert one_slot.cut >= 1  # the server did interrupt, and the engine recovered from it
