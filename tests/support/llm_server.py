"""An OpenAI-compatible chat-completions server for tests that run whole research with the
`openai` engine: real sockets, the real openai client in a real worker.

It answers each role sensibly (recognised by the structured-output schema the engine asks for) and
can be told to misbehave for one role: reply with an error, garbage, or not at all for a while.
Every request is recorded with its arrival time, so tests can measure the gaps between retries.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from activities.openai_engine import replies
from tests.support.http_doubles import local_server, send_json, serving

#: The role behind each structured reply the engine asks for.
ROLE_OF_SCHEMA = {
    replies.RouteReply.__name__: "route",
    replies.ClarifyReply.__name__: "clarify",
    replies.ClassificationReply.__name__: "coordinate",
    replies.QueriesReply.__name__: "write_queries",
    replies.PlanReply.__name__: "plan",
    replies.FindingsReply.__name__: "observe",
    replies.ReflectReply.__name__: "reflect",
    replies.ReportReply.__name__: "synthesize",
    replies.VerifyReply.__name__: "verify_claims",
    replies.ReviseReply.__name__: "revise_claims",
    replies.CritiqueReply.__name__: "critique",
    replies.OutlineReply.__name__: "outline_report",
    replies.SectionReply.__name__: "write_section",
    replies.SummaryReply.__name__: "summarize_report",
}
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


@dataclass
class Fault:
    """What the next request for a role gets instead of a proper answer."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    hang_s: float = 0.0
    #: "length": the reply is cut off (`body` is the part that came back).
    finish_reason: str = "stop"


def answer(role: str, prompt: str) -> dict[str, Any]:
    ids = [int(n) for n in re.findall(r"^\[(\d+)\]", prompt, re.M)] or [1]
    claims = [int(n) for n in re.findall(r"^(\d+)\. .*\(cites ", prompt, re.M)]
    return {
        "route": {"decision": "RESEARCH", "reasoning": "The question is specific."},
        "clarify": {"question": "Which aspect matters most to you?"},
        "coordinate": {"complexity": "moderate", "is_simple": False, "recommended_depth": "light",
                       "reasoning": "Needs a short look at the sources."},
        "write_queries": {"queries": ["python with statement context manager"]},
        "plan": {"title": "How with works", "thought": "One step is enough.",
                 "steps": [{"title": "The with statement and context managers",
                            "description": "What __enter__ and __exit__ do."}]},
        "observe": {"observation": f"The with statement calls __enter__ and __exit__ [{ids[0]}].",
                    "source_ids": [ids[0]], "needs_more": False, "suggested_agent": None, "suggested_query": None},
        "reflect": {"decision": "CONTINUE", "reasoning": "The plan is on track.", "suggested_changes": []},
        "synthesize": {"markdown": f"# The with statement\n\nIt calls __enter__ and __exit__ [{ids[0]}].\n",
                       "claims": [{"text": "It calls __enter__ and __exit__.", "source_ids": [ids[0]]}]},
        "verify_claims": {"verdicts": [{"index": i, "verdict": "supported", "reason": "The evidence says so."}
                                       for i in claims]},
        "revise_claims": {"rewrites": [{"index": i, "text": ""} for i in claims]},
        "critique": {"quality": 0.7, "quality_reason": "Short but sourced.",
                     "hallucination_risk": 0.1, "hallucination_reason": "Every claim is verified."},
        "outline_report": {"title": "The with statement", "sections": [
            {"heading": f"Part {n}", "brief": "What the step found.", "step_indexes": [int(n)]}
            for n in re.findall(r"^Step (\d+):", prompt, re.M)]},
        "write_section": {"markdown": f"The with statement calls __enter__ and __exit__ [{ids[0]}].",
                          "claims": [{"text": "It calls __enter__ and __exit__.", "source_ids": [ids[0]]}]},
        "summarize_report": {"markdown": f"The with statement manages a context [{ids[0]}].",
                             "claims": [{"text": "The with statement manages a context.", "source_ids": [ids[0]]}]},
        CONTINUATION: {},
    }[role]


def completion(content: str, finish_reason: str = "stop", usage: tuple[int, int] = USAGE) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


class ScriptedLLM:
    def __init__(self, usage_from_text: bool = False) -> None:
        """`usage_from_text`: tokens are counted from the texts (4 characters a token), as a
        real endpoint's would vary, instead of the fixed USAGE of every completion."""
        self.served: list[Served] = []
        self.faults: dict[str, list[Fault]] = {}
        self.usage_from_text = usage_from_text
        self.lock = threading.Lock()
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
                role = ROLE_OF_SCHEMA.get(schema, "unknown")
                if not schema and len(body["messages"]) > 1:
                    role = CONTINUATION
                prompt = body["messages"][0]["content"]
                with llm.lock:
                    fault = llm.faults.get(role, []).pop(0) if llm.faults.get(role) else None
                record = Served(time.monotonic(), role, 200, prompt, {k.lower(): v for k, v in self.headers.items()},
                                body=body)
                llm.served.append(record)
                if fault is not None and fault.hang_s:
                    time.sleep(fault.hang_s)
                if fault is not None and fault.status != 200:
                    record.status = fault.status
                    self._send(fault.status, fault.body or {"error": {"message": "scripted failure"}}, fault.headers)
                    return
                content = fault.body if fault is not None and fault.body is not None else json.dumps(answer(role, prompt))
                # A hung request's answer arrives after the client gave up: nobody was served.
                record.completion = fault is None or not fault.hang_s
                sent = "".join(m["content"] for m in body["messages"])
                usage = (len(sent) // 4, max(1, len(content) // 4)) if llm.usage_from_text else USAGE
                self._send(200, completion(content, fault.finish_reason if fault else "stop", usage), {})

            def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
                send_json(self, status, payload, headers)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = local_server(Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def fail_next(self, role: str, *faults: Fault) -> None:
        with self.lock:
            self.faults.setdefault(role, []).extend(faults)

    def reset(self) -> None:
        with self.lock:
            self.served.clear()
            self.faults.clear()

    def completions(self, role: str | None = None) -> list[Served]:
        return [s for s in self.served if s.completion and (role is None or s.role == role)]

    def requests(self, role: str) -> list[Served]:
        return [s for s in self.served if s.role == role]


@contextmanager
def running_llm(usage_from_text: bool = False) -> Iterator[ScriptedLLM]:
    llm = ScriptedLLM(usage_from_text)
    with serving(llm.server):
        yield llm
