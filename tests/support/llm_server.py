"""An OpenAI-compatible chat-completions server for tests that run whole research with the
`openai` engine: real sockets, the real openai client in a real worker.

It answers each role sensibly (recognised by the structured-output schema the engine asks for) and
can be told to misbehave for one role: reply with an error, garbage, or not at all for a while.
Every request is recorded with its arrival and answer times, so tests can measure the gaps between
retries, and `make bench` how long the LLM was busy (`latency_s`: every answer takes that long).
A request with `stream=True` is answered token by token (tests/support/sse.py), `token_gap_s`
apart, as a slow model writes; `streams=False` answers it with one JSON body, as a server that
ignores `stream` would.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from activities.openai_engine import replies
from tests.support.http_doubles import local_server, send_json, serving
from tests.support.sse import events, send_stream

#: The role behind each structured reply the engine asks for: the reply model's name is the JSON
#: schema's name on the wire (activities/openai_engine/replies.py), one per LLM role.
ROLE_OF_SCHEMA = {model.__name__: role for role, model in replies.REPLIES.items()}
#: A request without a schema that carries an earlier (cut-off) reply: the engine continuing it.
CONTINUATION = "continuation"

USAGE = (120, 30)  # prompt and completion tokens of every completion served


@dataclass
class Served:
    at: float
    role: str
    status: int
    content: str
    headers: dict[str, str]
    #: True when a completion (with tokens) was returned.
    completion: bool = False
    #: The request's JSON body (model, messages, max_tokens, ...).
    body: dict[str, Any] = field(default_factory=dict)
    #: The prompt and completion tokens the reply reported.
    usage: tuple[int, int] = (0, 0)
    #: When the answer was sent (monotonic); None until then.
    ended: float | None = None


@dataclass
class Fault:
    """What the next request for a role gets instead of a proper answer."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    hang_s: float = 0.0
    #: "length": the reply is cut off (`body` is the part that came back).
    finish_reason: str = "stop"
    #: A streamed reply falls silent for `hang_s` after this many chunks (instead of before any).
    stall_after: int | None = None


def answer(role: str, prompt: str) -> dict[str, Any]:
    ids = [int(n) for n in re.findall(r"^\[(\d+)\]", prompt, re.M)] or [1]
    claims = [int(n) for n in re.findall(r"^(\d+)\. .*\(cites ", prompt, re.M)]
    return {
        "route": {"decision": "RESEARCH", "reasoning": "The question is specific."},
        "clarify": {"question": "Which aspect matters most to you?"},
        "coordinate": {
            "complexity": "moderate",
            "is_simple": False,
            "recommended_depth": "light",
            "reasoning": "Needs a short look at the sources.",
        },
        "write_queries": {"queries": ["python with statement context manager"]},
        "plan": {
            "title": "How with works",
            "thought": "One step is enough.",
            "steps": [
                {
                    "title": "The with statement and context managers",
                    "description": "What __enter__ and __exit__ do.",
                }
            ],
        },
        "observe": {
            "observation": f"The with statement calls __enter__ and __exit__ [{ids[0]}].",
            "source_ids": [ids[0]],
            "needs_more": False,
            "suggested_agent": None,
            "suggested_query": None,
        },
        "reflect": {
            "decision": "CONTINUE",
            "reasoning": "The plan is on track.",
            "suggested_changes": [],
        },
        "synthesize": {
            "markdown": f"# The with statement\n\nIt calls __enter__ and __exit__ [{ids[0]}].\n",
            "claims": [{"text": "It calls __enter__ and __exit__.", "source_ids": [ids[0]]}],
        },
        "verify_claims": {
            "verdicts": [
                {"index": i, "verdict": "supported", "reason": "The evidence says so."}
                for i in claims
            ]
        },
        "revise_claims": {"rewrites": [{"index": i, "text": ""} for i in claims]},
        "critique": {
            "quality": 0.7,
            "quality_reason": "Short but sourced.",
            "hallucination_risk": 0.1,
            "hallucination_reason": "Every claim is verified.",
        },
        "outline_report": {
            "title": "The with statement",
            "sections": [
                {"heading": f"Part {n}", "brief": "What the step found.", "step_indexes": [int(n)]}
                for n in re.findall(r"^Step (\d+):", prompt, re.M)
            ],
        },
        "write_section": {
            "markdown": f"The with statement calls __enter__ and __exit__ [{ids[0]}].",
            "claims": [{"text": "It calls __enter__ and __exit__.", "source_ids": [ids[0]]}],
        },
        "summarize_report": {
            "markdown": f"The with statement manages a context [{ids[0]}].",
            "claims": [{"text": "The with statement manages a context.", "source_ids": [ids[0]]}],
        },
        CONTINUATION: {},
    }[role]


def completed(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A plain value valid for `schema` (strict structured output: every property required), so a
    reply model added to the engine is answered before it has its own line in `answer` and the
    bench does not measure retries and fallbacks."""
    defs = schema.get("$defs", {}) if defs is None else defs
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    if "anyOf" in schema:
        return (
            None
            if any(o.get("type") == "null" for o in schema["anyOf"])
            else completed(schema["anyOf"][0], defs)
        )
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {name: completed(sub, defs) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [completed(schema.get("items", {}), defs)]
    return {
        "string": "the with statement and context managers",
        "integer": 1,
        "number": 0.5,
        "boolean": False,
    }.get(kind)


def completion(
    content: str, finish_reason: str = "stop", usage: tuple[int, int] = USAGE
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        },
    }


class ScriptedLLM:
    """`latency_s`: every answer is sent that long after the request arrived, as a model would take
    (the bench's 250 ms). `answers(role, prompt)`: the reply's JSON object (default `answer`).
    `usage_from_text`: tokens are counted from the texts (4 characters a token), as a real
    endpoint's would vary, instead of the fixed USAGE of every completion."""

    def __init__(
        self,
        latency_s: float = 0.0,
        answers: Callable[[str, str], dict[str, Any]] = answer,
        usage_from_text: bool = False,
        token_gap_s: float = 0.0,
        streams: bool = True,
    ) -> None:
        self.served: list[Served] = []
        self.token_gap_s, self.streams = token_gap_s, streams
        #: False: a streamed reply ends without the usage chunk `include_usage` asks for.
        self.usage_chunk = True
        self.faults: dict[str, list[Fault]] = {}
        self.usage_from_text = usage_from_text
        self.answer_for = answers
        #: Standing replies per role, over `answer()`'s (e.g. a four-step plan), for every request:
        #: a reply, or a function of the prompt that returns one.
        self.answers: dict[str, Any] = {}
        self.lock = threading.Lock()
        llm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = (
                "HTTP/1.1"  # keep-alive, as real endpoints: no new connection per call
            )
            # The headers and the body are two writes: with Nagle's algorithm the body waits for the
            # client's delayed ACK of the headers, 40 ms a call that no real endpoint charges.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    # What OpenAI answers for another server's endpoint (Ollama's /api/show).
                    self._send(404, {"error": {"message": "not found"}}, {})
                    return
                asked = (body.get("response_format") or {}).get("json_schema") or {}
                schema = asked.get("name", "")
                role = ROLE_OF_SCHEMA.get(schema, "unknown")
                if not schema and len(body["messages"]) > 1:
                    role = CONTINUATION
                prompt = body["messages"][0]["content"]
                with llm.lock:
                    fault = llm.faults.get(role, []).pop(0) if llm.faults.get(role) else None
                record = Served(
                    time.monotonic(),
                    role,
                    200,
                    prompt,
                    {k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                llm.served.append(record)
                if fault is not None and fault.hang_s and fault.stall_after is None:
                    time.sleep(fault.hang_s)
                if fault is not None and fault.status != 200:
                    record.status = fault.status
                    self._send(
                        fault.status,
                        fault.body or {"error": {"message": "scripted failure"}},
                        fault.headers,
                    )
                    record.ended = time.monotonic()
                    return
                content = (
                    fault.body
                    if fault is not None and fault.body is not None
                    else llm.reply(role, prompt, asked)
                )
                # A hung request's answer arrives after the client gave up: nobody was served.
                record.completion = fault is None or not fault.hang_s
                sent = "".join(m["content"] for m in body["messages"])
                usage = (
                    (len(sent) // 4, max(1, len(content) // 4)) if llm.usage_from_text else USAGE
                )
                record.usage = usage if record.completion else (0, 0)
                if latency_s:
                    time.sleep(max(0.0, record.at + latency_s - time.monotonic()))
                self._answer(record, content, usage, fault)
                record.ended = time.monotonic()

            def _answer(
                self, record: Served, content: str, usage: tuple[int, int], fault: Fault | None
            ) -> None:
                """The reply: streamed token by token when asked (and `streams`), else one body."""
                finish = fault.finish_reason if fault else "stop"
                if not (record.body.get("stream") and llm.streams):
                    self._send(200, completion(content, finish, usage), {})
                    return
                asked_usage = (record.body.get("stream_options") or {}).get("include_usage")
                whole = send_stream(
                    self,
                    events(content, finish, usage if asked_usage and llm.usage_chunk else None),
                    llm.token_gap_s,
                    fault.stall_after if fault else None,
                    fault.hang_s if fault else 0.0,
                )
                record.completion = record.completion and whole
                record.usage = record.usage if record.completion else (0, 0)

            def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
                send_json(self, status, payload, headers)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = local_server(Handler, backlog=1024)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, role: str, prompt: str, asked: dict[str, Any]) -> str:
        """The reply's JSON text: the role's standing reply, else `answers`' (a role the server does
        not know yet, a reply model added to the engine, gets any value its schema allows)."""
        standing = self.answers.get(role)
        if standing is not None:
            return json.dumps(standing(prompt) if callable(standing) else standing)
        if role == "unknown":
            return json.dumps(completed(asked.get("schema") or {"type": "object"}))
        return json.dumps(self.answer_for(role, prompt))

    def fail_next(self, role: str, *faults: Fault) -> None:
        with self.lock:
            self.faults.setdefault(role, []).extend(faults)

    def reset(self) -> None:
        with self.lock:
            self.served.clear()
            self.faults.clear()
            self.answers.clear()

    def completions(self, role: str | None = None) -> list[Served]:
        return [s for s in self.served if s.completion and (role is None or s.role == role)]

    def requests(self, role: str) -> list[Served]:
        return [s for s in self.served if s.role == role]


@contextmanager
def running_llm(
    latency_s: float = 0.0,
    answers: Callable[[str, str], dict[str, Any]] = answer,
    usage_from_text: bool = False,
    token_gap_s: float = 0.0,
    streams: bool = True,
) -> Iterator[ScriptedLLM]:
    llm = ScriptedLLM(latency_s, answers, usage_from_text, token_gap_s, streams)
    with serving(llm.server):
        yield llm


# --- a research whose writers write what a model would ---------------------------------------------


def _prose(words: int, prompt: str) -> str:
    """About `words` words of sentences, each citing the first source the prompt lists."""
    cited = (re.findall(r"^\[(\d+)\]", prompt, re.M) or ["1"])[0]
    sentence = f"Each value in Rust has an owner, and the value is dropped when its owner goes out of scope [{cited}]."
    return " ".join([sentence] * max(1, words // 19))


def write_like_a_model(llm: ScriptedLLM, depth: str = "medium", steps: int = 4) -> None:
    """Standing replies for a research of `depth` with a plan of `steps` steps whose observations,
    sections, summaries and reports are as long as a model's (token counts follow the text when
    the server counts from it): budgets and report lengths can be measured against it."""
    titles = [
        "Ownership rules",
        "References and borrowing",
        "Lifetimes",
        "The borrow checker's errors",
        "Smart pointers",
        "Interior mutability",
        "Threads and Send",
        "Unsafe code",
    ][:steps]

    def written(words: int) -> Any:
        return lambda prompt: {"markdown": _prose(words, prompt), "claims": []}

    llm.answers.update(
        coordinate={
            "complexity": "moderate",
            "is_simple": False,
            "recommended_depth": depth,
            "reasoning": "Several facets.",
        },
        plan={
            "title": "Ownership",
            "thought": "One step per facet.",
            "steps": [
                {"title": t, "description": f"What the book says about {t.lower()}."}
                for t in titles
            ],
        },
        observe=lambda prompt: {
            "observation": _prose(150, prompt),
            "source_ids": [],
            "needs_more": False,
            "suggested_agent": None,
            "suggested_query": None,
        },
        write_section=lambda prompt: {
            "markdown": _prose(
                int(m.group(1)) if (m := re.search(r"about (\d+) words", prompt)) else 250, prompt
            ),
            "claims": [],
        },
        summarize_report=written(150),
        synthesize=lambda prompt: {
            "markdown": _prose(
                int(m.group(1)) if (m := re.search(r"about (\d+) words", prompt)) else 500, prompt
            ),
            "claims": [],
        },
    )
