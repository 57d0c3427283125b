"""What the engine learns about each (server, model): the features it refused, how large its
context window is, and how many characters its tokens hold.

Local servers differ in what they say about themselves. The context window comes, in order, from
the LLM_CONTEXT_TOKENS setting; llama.cpp's `llama-server` (`GET /props`); Ollama (`POST
/api/show`: the model's `num_ctx`, else Ollama's own default, which it applies by silently
dropping the start of a longer prompt); LM Studio (`GET /api/v0/models/{model}`); vLLM and
others (`GET /v1/models`: `max_model_len`, `context_length`, `meta.n_ctx_train`); and, for a
server that says nothing (llama-cpp-python, OpenAI), from its first context-overflow error
("maximum context length is N", "exceed context window of N"), after which the call is fitted and
asked again. Everything is kept for the life of the worker process, per base URL and model.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from workflows.text.redaction import redact

log = logging.getLogger(__name__)

#: Ollama's context when the model sets no `num_ctx` (its documented default since 0.6); a longer
#: prompt is cut from the start without an error, so the engine must fit prompts to it.
OLLAMA_DEFAULT_CONTEXT = 4096
#: Characters per token before a server has served one call (English prose runs about 4; code,
#: URLs and other scripts fewer): low, so an estimate errs toward fitting.
FIRST_CHARS_PER_TOKEN = 3.0
PROBE_TIMEOUT_S = 3.0

_OVERFLOW = (
    re.compile(r"maximum context length is (\d+)"),  # OpenAI, vLLM, llama-cpp-python
    re.compile(r"exceeds? (?:the )?context window of (\d+)"),  # llama-cpp-python's own text
    re.compile(r"\"n_ctx\"\s*:\s*(\d+)"),  # llama-server's exceed_context_size_error body
    re.compile(r"context (?:size|length) (?:of |is )?\(?(\d+)\)?"),
)


@dataclass
class ServerFacts:
    """What one (base URL, model) turned out to be."""

    unsupported: set[str] = field(default_factory=set)
    #: Tokens the server holds for prompt and reply together; None while unknown.
    context_tokens: int | None = None
    probed: bool = False
    chars_per_token: float = FIRST_CHARS_PER_TOKEN
    #: The densest prompt seen (characters per token the server counted).
    densest_ratio: float | None = None
    #: The server cut a streamed reply short when another request arrived (llama-cpp-python's
    #: `interrupt_requests`): from then on this process sends it one request at a time (`turn`).
    one_at_a_time: bool = False
    _turns: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = field(
        default=None, repr=False
    )

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[float]:
        """This request's turn at the server: at once unless it serves one request at a time,
        then after the requests before it. Yields the seconds waited (not the server's time: the
        call's ceiling is moved by them, endpoint.py)."""
        if not self.one_at_a_time:
            yield 0.0
            return
        loop = asyncio.get_running_loop()
        if self._turns is None or self._turns[0] is not loop:
            self._turns = (loop, asyncio.Semaphore(1))
        began = loop.time()
        async with self._turns[1]:
            yield loop.time() - began

    def learn_ratio(self, chars: int, prompt_tokens: int) -> None:
        """Calibrate the estimate from what a served call's prompt really took (the server's own
        count): the lowest ratio seen wins, so a dense prompt is never underestimated again."""
        if prompt_tokens > 50 and chars > 0:
            seen = chars / prompt_tokens
            if self.densest_ratio is None or seen < self.densest_ratio:
                self.densest_ratio = seen
            self.chars_per_token = max(1.0, min(self.densest_ratio, 6.0) * 0.95)


_FACTS: dict[tuple[str, str], ServerFacts] = {}


def forget_servers() -> None:
    """Forget every server (tests start each from nothing, as a new worker does)."""
    _FACTS.clear()


def facts_for(base_url: str, model: str) -> ServerFacts:
    return _FACTS.setdefault((base_url.rstrip("/"), model), ServerFacts())


def context_from_error(text: str) -> int | None:
    """The context window a context-overflow error names, if it names one."""
    for pattern in _OVERFLOW:
        found = pattern.search(text)
        if found and 256 <= int(found.group(1)) <= 10_000_000:
            return int(found.group(1))
    return None


async def probe_context(base_url: str, model: str, key: str) -> int | None:
    """The context window the server says it has for `model`, or None (module docstring)."""
    root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S, headers=headers) as http:
        for ask in (_llama_server, _ollama, _lm_studio, _models_list):
            try:
                found = await ask(http, root, base_url.rstrip("/"), model)
            except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError):
                found = None
            if found:
                log.info("%s says model %s has %d tokens of context", redact(root), model, found)
                return found
    return None


async def _llama_server(http: httpx.AsyncClient, root: str, base: str, model: str) -> int | None:
    reply = await http.get(f"{root}/props")
    if reply.status_code != 200:
        return None
    body = reply.json()
    settings = body.get("default_generation_settings") or {}
    return _int(settings.get("n_ctx") or body.get("n_ctx"))


async def _ollama(http: httpx.AsyncClient, root: str, base: str, model: str) -> int | None:
    reply = await http.post(f"{root}/api/show", json={"model": model})
    if reply.status_code != 200:
        return None
    body = reply.json()
    if "model_info" not in body and "parameters" not in body:
        return None
    set_ctx = re.search(r"(?m)^\s*num_ctx\s+(\d+)", body.get("parameters") or "")
    trained = next(
        (
            _int(v)
            for k, v in (body.get("model_info") or {}).items()
            if k.endswith(".context_length")
        ),
        None,
    )
    context = int(set_ctx.group(1)) if set_ctx else OLLAMA_DEFAULT_CONTEXT
    return min(context, trained) if trained else context


async def _lm_studio(http: httpx.AsyncClient, root: str, base: str, model: str) -> int | None:
    reply = await http.get(f"{root}/api/v0/models/{model}")
    if reply.status_code != 200:
        return None
    body = reply.json()
    return _int(body.get("loaded_context_length") or body.get("max_context_length"))


async def _models_list(http: httpx.AsyncClient, root: str, base: str, model: str) -> int | None:
    reply = await http.get(f"{base}/models")
    if reply.status_code != 200:
        return None
    rows = reply.json().get("data") or []
    row = next((r for r in rows if r.get("id") == model), rows[0] if len(rows) == 1 else None)
    if not isinstance(row, dict):
        return None
    meta = row.get("meta") or {}
    return _int(row.get("max_model_len") or row.get("context_length") or meta.get("n_ctx_train"))


def _int(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 256 else None
