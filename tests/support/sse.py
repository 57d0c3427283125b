"""A chat completion streamed as OpenAI's server-sent events, token by token, for the test servers.

What llama.cpp's server and OpenAI send for `stream=True`: a chunk with the assistant's role, one
chunk per token (`delta.content`), a chunk with the finish reason, with `stream_options.
include_usage` a last chunk with no choices and the usage, and `data: [DONE]`. The body is sent
as it is written, with `Connection: close` (no length known in advance), so a client sees each
token when the server sends it: a test can make the model write slowly (`gap_s` between tokens)
or fall silent after some tokens (`stall_after`, for `stall_s`).
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

#: Characters per streamed token: about what a real tokenizer gives English.
TOKEN_CHARS = 4


def tokens(text: str) -> list[str]:
    return [text[i : i + TOKEN_CHARS] for i in range(0, len(text), TOKEN_CHARS)] or [""]


def chunk(
    delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stream",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "test-model",
        "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
        **({"usage": usage} if usage is not None else {}),
    }


def events(content: str, finish_reason: str, usage: tuple[int, int] | None) -> list[dict[str, Any]]:
    """The chunks of one reply; `usage` None: the server sends no usage chunk."""
    sent = [chunk({"role": "assistant", "content": ""})]
    sent += [chunk({"content": piece}) for piece in tokens(content)]
    sent.append(chunk({}, finish_reason))
    if usage is not None:
        counts = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
        sent.append(chunk(None, usage={**counts, "total_tokens": sum(usage)}))
    return sent


def send_stream(
    handler: BaseHTTPRequestHandler,
    chunks: list[dict[str, Any]],
    gap_s: float = 0.0,
    stall_after: int | None = None,
    stall_s: float = 0.0,
) -> bool:
    """Write the events with `gap_s` between them (silent for `stall_s` after `stall_after` of
    them); False when the client hung up before the end (it gave up waiting)."""
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        for n, event in enumerate(chunks):
            if n and gap_s:
                time.sleep(gap_s)
            if stall_after is not None and n == stall_after:
                time.sleep(stall_s)
            handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
    except OSError:
        return False
    return True
