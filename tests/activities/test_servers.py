"""One request path for every OpenAI-compatible server, tested against what each server
really says: the bodies in tests/support/server_bodies.py, recorded from llama-cpp-python's server
where it installs here and taken from the servers' documentation otherwise.

Each test stands up a small HTTP server that answers as that server does (its refusals, its
discovery endpoints, its context window) and runs one role of the real engine against it: the
engine must work with no setting but the URL, remember what the server refused, fit its prompts
into the window the server states, and keep reasoning text out of what it returns.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from activities.openai_engine import OpenAIEngine
from activities.openai_engine.servers import facts_for, forget_servers
from settings import Settings
from tests.support import server_bodies as bodies
from tests.support.http_doubles import local_server, send_json
from workflows.activity_models import CritiqueInput, PlanInput, RouteInput
from workflows.models import Message, Speaker, VerificationSummary

Reply = tuple[int, Any]
Rule = Callable[[dict[str, Any]], Reply | None]

PLAN = {
    "title": "Ownership in Rust",
    "thought": "Owners, then moves.",
    "steps": [{"title": "Rust ownership rules", "description": "d", "queries": ["rust ownership"]}],
}


def completion(content: str | dict[str, Any], **message: Any) -> Reply:
    text = content if isinstance(content, str) else json.dumps(content)
    return 200, {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, **message},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


class Server:
    """A stand-in for one kind of server: discovery answers by path, completions by rules."""

    def __init__(self, discovery: dict[str, Any], rules: list[Rule], reply: Reply) -> None:
        self.discovery, self.rules, self.reply = discovery, rules, reply
        self.completions: list[dict[str, Any]] = []
        self.asked: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, body: dict[str, Any] | None) -> None:
                path = self.path.split("?")[0].rstrip("/")
                server.asked.append(f"{self.command} {path}")
                if path.endswith("/chat/completions") and body is not None:
                    server.completions.append(body)
                    for rule in server.rules:
                        said = rule(body)
                        if said is not None:
                            return send_json(self, *said)
                    return send_json(self, *server.reply)
                if path in server.discovery:
                    return send_json(self, 200, server.discovery[path])
                send_json(self, 404, {"error": {"message": "Not Found"}})

            def do_GET(self) -> None:
                self._answer(None)

            def do_POST(self) -> None:
                self._answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

            def log_message(self, *args: Any) -> None:
                pass

        self.http = local_server(Handler)
        self.base_url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        threading.Thread(target=self.http.serve_forever, args=(0.02,), daemon=True).start()

    def engine(self, **settings: Any) -> OpenAIEngine:
        return OpenAIEngine(
            Settings(_env_file=None, openai_base_url=self.base_url, llm_model="m", **settings)
        )

    def prompt_chars(self, index: int = -1) -> int:
        return sum(len(m["content"]) for m in self.completions[index]["messages"])


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LLM_MODEL", "LLM_CONTEXT_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    forget_servers()
    yield
    forget_servers()


def format_type(body: dict[str, Any]) -> str | None:
    return (body.get("response_format") or {}).get("type")


def refuses_json_schema_with_500(body: dict[str, Any]) -> Reply | None:
    if format_type(body) == "json_schema":
        return 500, bodies.LLAMA_CPP_PYTHON_JSON_SCHEMA_500
    return None


def plan_input(background: str = "- The Rust Book") -> PlanInput:
    return PlanInput(
        query="How does ownership work in Rust?",
        background=background,
        completed_steps=[],
        min_steps=1,
        max_steps=3,
        iteration=1,
    )


async def test_llama_cpp_pythons_500_for_json_schema_is_a_refusal_and_json_mode_carries_the_schema() -> (
    None
):
    server = Server(
        {"/v1/models": bodies.LLAMA_CPP_PYTHON_MODELS},
        [refuses_json_schema_with_500],
        completion(PLAN),
    )
    engine = server.engine()

    first = await engine.plan(plan_input())
    second = await engine.plan(plan_input())

    assert first.steps[0].title == "Rust ownership rules" and second.title == "Ownership in Rust"
    kinds = [format_type(b) for b in server.completions]
    assert kinds == ["json_schema", "json_object", "json_object"]  # refused once, remembered
    constrained = server.completions[1]["response_format"]
    assert constrained["schema"]["properties"]["steps"]  # the grammar's schema rides along
    assert "steps" in server.completions[1]["messages"][0]["content"]  # and the prompt says it


async def test_a_litellm_relay_of_a_refusal_is_recognised_too() -> None:
    def relays(body: dict[str, Any]) -> Reply | None:
        return (400, bodies.LITELLM_JSON_SCHEMA_400) if format_type(body) == "json_schema" else None

    server = Server({}, [relays], completion(PLAN))
    await server.engine().plan(plan_input())
    assert [format_type(b) for b in server.completions] == ["json_schema", "json_object"]


async def test_a_reasoning_model_is_asked_without_temperature_and_with_max_completion_tokens() -> (
    None
):
    def refuses(body: dict[str, Any]) -> Reply | None:
        if "temperature" in body:
            return 400, bodies.OPENAI_NO_TEMPERATURE_400
        if "max_tokens" in body:
            return 400, bodies.OPENAI_NO_MAX_TOKENS_400
        return None

    server = Server({}, [refuses], completion(PLAN))
    engine = server.engine(openai_api_key="sk-test")
    await engine.plan(plan_input())
    await engine.plan(plan_input())

    last = server.completions[-1]
    assert "temperature" not in last and "max_tokens" not in last
    assert last["max_completion_tokens"] > 0
    assert len(server.completions) == 4  # two refusals, then every call asks the right way


async def test_llama_servers_props_window_fits_a_long_prompt_before_it_is_sent() -> None:
    server = Server({"/props": bodies.LLAMA_SERVER_PROPS}, [], completion(PLAN))
    huge = "\n".join(f"- Source {i}: " + "ownership moves borrowing " * 40 for i in range(200))

    await server.engine().plan(plan_input(huge))

    assert len(server.completions) == 1  # no overflow, no retry: fitted first
    window = bodies.LLAMA_SERVER_PROPS["default_generation_settings"]["n_ctx"]
    sent = server.completions[0]
    assert server.prompt_chars() / 3 + sent["max_tokens"] <= window  # by the engine's own measure
    assert "How does ownership work in Rust?" in sent["messages"][0]["content"]  # never cut
    assert "[…]" in sent["messages"][0]["content"]  # the quoted background was


async def test_ollama_is_fitted_to_its_runtime_window_not_the_models_trained_one() -> None:
    server = Server({"/api/show": bodies.OLLAMA_SHOW}, [], completion(PLAN))
    huge = "ownership " * 20000
    await server.engine().plan(plan_input(huge))
    assert facts_for(server.base_url, "m").context_tokens == 4096  # Ollama's default num_ctx
    assert server.prompt_chars() < 4096 * 3


async def test_ollama_with_num_ctx_vllm_and_lm_studio_state_their_windows() -> None:
    for discovery, window in (
        ({"/api/show": bodies.OLLAMA_SHOW_NUM_CTX}, 16384),
        ({"/v1/models": bodies.VLLM_MODELS}, 32768),
        ({"/api/v0/models/m": bodies.LM_STUDIO_MODEL}, 8192),
    ):
        forget_servers()
        server = Server(discovery, [], completion(PLAN))
        await server.engine().plan(plan_input())
        assert facts_for(server.base_url, "m").context_tokens == window, discovery


async def test_an_overflow_error_teaches_the_window_and_the_call_is_fitted_and_asked_again() -> (
    None
):
    def overflows(body: dict[str, Any]) -> Reply | None:
        chars = sum(len(m["content"]) for m in body["messages"])
        return (400, bodies.LLAMA_CPP_PYTHON_OVERFLOW_400) if chars > 2048 * 3 else None

    server = Server({"/v1/models": bodies.LLAMA_CPP_PYTHON_MODELS}, [overflows], completion(PLAN))
    huge = "ownership moves " * 3000

    out = await server.engine().plan(plan_input(huge))

    assert out.steps
    assert facts_for(server.base_url, "m").context_tokens == 2048
    assert len(server.completions) == 2 and server.prompt_chars() < server.prompt_chars(0)


async def test_a_setting_names_the_window_of_a_server_that_says_nothing() -> None:
    server = Server({}, [], completion(PLAN))
    await server.engine(llm_context_tokens=2048).plan(plan_input("x " * 20000))
    assert "GET /props" not in server.asked  # the setting is not second-guessed
    assert server.prompt_chars() / 3 <= 2048


async def test_reasoning_never_reaches_a_parsed_reply() -> None:
    critique = {
        "quality": 0.8,
        "quality_reason": "<think>the user wants praise</think>Clear and sourced.",
        "hallucination_risk": 0.1,
        "hallucination_reason": "Every claim cites a source.",
        "is_acceptable": True,
        "issues": [],
        "rewrite_suggestion": "",
        "requires_human_input": False,
    }
    server = Server(
        {},
        [],
        completion(
            "<think>Let me think about {this} carefully.</think>\n" + json.dumps(critique),
            reasoning_content="Hidden chain of thought that must stay hidden.",
        ),
    )
    out = await server.engine().critique(
        CritiqueInput(
            query="How does ownership work in Rust?",
            report_markdown="# R\n\nOwners [1].",
            verification=VerificationSummary(claims=1, supported=1),
            sources_count=1,
            steps_completed=1,
            steps_planned=1,
        )
    )
    dumped = out.model_dump_json()
    assert "think" not in dumped and "Hidden chain" not in dumped


async def test_a_question_with_nothing_before_its_pronoun_is_asked_back_whatever_the_model_says() -> (
    None
):
    server = Server({}, [], completion({"decision": "RESEARCH", "reasoning": "Clear enough."}))
    out = await server.engine().route(
        RouteInput(
            messages=[Message(role=Speaker.USER, content="Tell me more about it")],
            clarification_count=0,
            max_clarifications=2,
        )
    )
    assert out.decision.value == "CLARIFICATION"
    assert "it" in out.reasoning
