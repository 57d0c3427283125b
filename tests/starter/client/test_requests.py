"""The one way a research request is built (starter/client/requests.py): defaults and choices are the
model's, a bad value is one line naming the option as the client spells it, and the CLI and the
MCP tool build the same request from the same values. In process, no Temporal."""

from __future__ import annotations

import argparse
import math
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from settings import Settings
from starter.cli import commands
from starter.cli import main as cli
from starter.client import research_client
from starter.client.requests import (
    FLAGS,
    NAMES,
    OPTIONS,
    QUESTION,
    RequestError,
    build_request,
    check_prices,
    help_of,
)
from starter.client.session import Session
from starter.mcp import server as mcp_server
from workflows.models import Depth, QueryMode, ResearchRequest

QUESTION_TEXT = "How does asyncio.gather run coroutines concurrently?"
#: Fields no client sets: the follow-up's conversation is read from the earlier research, and
#: `steps_per_run` is an operator's (and the tests') cap.
#: `standing_id` and `notify`: set by a standing research's schedule (starter/client/standing.py), not a flag.
SET_BY_THE_STARTER = {
    "query",
    "history",
    "steps_per_run",
    "owner",
    "attended",
    "standing_id",
    "notify",
}


def research_flags() -> set[str]:
    research = next(
        action
        for action in cli.build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    ).choices["research"]
    return {flag for action in research._actions for flag in action.option_strings}


def test_every_request_field_is_an_option_with_a_real_flag() -> None:
    """A new field of ResearchRequest fails here until it has a row in OPTIONS."""
    assert set(ResearchRequest.model_fields) == SET_BY_THE_STARTER | set(FLAGS)
    assert set(FLAGS.values()) <= research_flags()
    for option in OPTIONS:
        if ResearchRequest.model_fields[option.field].default is True:
            assert option.flag.startswith("--no-"), option  # the flag turns it off


def test_defaults_are_the_models() -> None:
    assert build_request({QUESTION: f"  {QUESTION_TEXT}\n"}) == ResearchRequest(query=QUESTION_TEXT)
    assert build_request(
        {QUESTION: QUESTION_TEXT, "language": "", "max_tokens": None}
    ) == ResearchRequest(query=QUESTION_TEXT)
    help_texts = {option.field: help_of(option) for option in OPTIONS}
    assert (
        help_texts["clarification_timeout_s"]
        == "how long a question waits for an answer (default 24 h)"
    )
    assert help_texts["review_timeout_s"].endswith("before the plan runs as proposed (default 1 h)")


@pytest.mark.parametrize(
    "field, value, allowed",
    [
        ("depth", "deepest", "one of auto, light, medium, extended"),
        ("mode", "deeper", "one of deep, web, simple"),
        ("review_report", "sometimes", "one of auto, always, never"),
        ("max_clarifications", 11, "a whole number from 0 to 10"),
        ("max_clarifications", -1, "a whole number from 0 to 10"),
        ("clarification_timeout_s", math.inf, "a finite number above 0 and at most 2592000"),
        ("clarification_timeout_s", 0, "a finite number above 0 and at most 2592000"),
        ("time_budget_s", 90000, "a finite number above 0 and at most 86400"),
        ("review_timeout_s", math.nan, "a finite number above 0 and at most 2592000"),
        ("max_tokens", 0, "a whole number from 1 to 100000000"),
        ("max_cost_usd", -1.5, "a finite number above 0 and at most 10000"),
        ("verify", "perhaps", "true or false"),
        ("review_plan", [], "true or false"),
        ("language", "Deutsch!", "auto or a language code such as en, de or vi"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_option_and_what_it_allows(
    field: str, value: Any, allowed: str
) -> None:
    values = {QUESTION: QUESTION_TEXT, field: value}
    with pytest.raises(RequestError) as plain:
        build_request(values)
    with pytest.raises(RequestError) as flagged:
        build_request(values, FLAGS)
    for err, name in ((plain.value, field), (flagged.value, FLAGS[field])):
        message = str(err)
        assert "\n" not in message and err.field == field
        assert message.startswith(f"invalid {name} ") and message.endswith(f": use {allowed}"), (
            message
        )
    assert str(flagged.value).split()[1] in research_flags()


def test_the_messages_show_the_value_as_given() -> None:
    with pytest.raises(
        RequestError,
        match=r"^invalid --time-budget 90000: use a finite number above 0 and at most 86400$",
    ):
        build_request({QUESTION: QUESTION_TEXT, "time_budget_s": 90000.0}, FLAGS)
    with pytest.raises(RequestError, match=r"^invalid language 'Deutsch!': "):
        build_request({QUESTION: QUESTION_TEXT, "language": "Deutsch!"})


@pytest.mark.parametrize(
    "values, message",
    [
        ({}, "question is required: text of 3 to 5000 characters"),
        ({QUESTION: " ab "}, "the question is empty or too short (at least 3 characters)"),
        ({QUESTION: "x" * 5001}, "the question is too long (5001 characters, at most 5000)"),
        ({QUESTION: 42}, "invalid question 42: use text of 3 to 5000 characters"),
        (
            {QUESTION: QUESTION_TEXT, "steps_per_run": 3},
            f"unknown option 'steps_per_run': use {', '.join(NAMES)}",
        ),
    ],
)
def test_the_question_and_unknown_options(values: dict[str, Any], message: str) -> None:
    with pytest.raises(RequestError) as refused:
        build_request(values)
    assert str(refused.value) == message


def test_a_cost_budget_needs_a_price_named_as_the_client_spells_it() -> None:
    request = build_request({QUESTION: QUESTION_TEXT, "max_cost_usd": 0.5})
    cfg = Settings(llm_provider="openai", llm_model="my-llama", llm_prices=None)
    with pytest.raises(
        RequestError, match=r"^--max-cost: no price is known for model my-llama; set LLM_PRICES"
    ):
        check_prices(request, cfg, FLAGS)
    with pytest.raises(RequestError, match=r"^max_cost_usd: no price is known for model my-llama"):
        check_prices(request, cfg)
    check_prices(request, Settings(llm_provider="offline"))  # the offline engine costs nothing


class Started(Exception):
    """Raised by the fake start: the request is what it was given."""


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[ResearchRequest]:
    requests: list[ResearchRequest] = []

    async def start(
        client: Any, cfg: Settings, run: research_client.StartResearch, rpc_timeout: Any = None
    ) -> Any:
        requests.append(
            run.request.model_copy(update={"attended": run.attended})
            if run.attended is not None
            else run.request
        )
        raise Started()

    async def connect(self: Session) -> Any:
        return object()

    monkeypatch.setattr(research_client, "start", start)
    monkeypatch.setattr(Session, "connect", connect)
    return requests


@pytest.mark.parametrize(
    "flags, arguments",
    [
        ([], {}),
        (
            ["--depth", "light", "--mode", "web", "--language", " DE "],
            {"depth": "light", "mode": "web", "language": " DE "},
        ),
        (
            ["--depth", "extended", "--language", "pt-BR"],
            {"depth": "extended", "language": "pt-BR"},
        ),
    ],
)
async def test_the_cli_and_the_mcp_tool_build_the_same_request(
    captured: list[ResearchRequest],
    flags: list[str],
    arguments: dict[str, Any],
) -> None:
    session = Session(Settings(llm_provider="offline"))
    with pytest.raises(Started):
        await commands.research(
            cli.build_parser().parse_args(["research", QUESTION_TEXT, *flags]), session
        )
    with pytest.raises(ToolError, match="Started"):
        await mcp_server.build_server(session).call_tool(
            "research", {"question": QUESTION_TEXT, **arguments}
        )
    by_cli, by_mcp = captured
    assert by_cli == by_mcp == build_request({QUESTION: QUESTION_TEXT, **arguments})


async def test_the_mcp_tool_offers_the_models_choices_and_defaults() -> None:
    [research] = [
        tool
        for tool in await mcp_server.build_server(Session(Settings())).list_tools()
        if tool.name == "research"
    ]
    schema = research.input_schema["properties"]
    assert list(schema) == [
        "question",
        *(option.field for option in OPTIONS if option.mcp),
        "wait",
        "attended",
    ]
    assert (
        schema["depth"]["enum"] == [d.value for d in Depth]
        and schema["depth"]["default"] == Depth.AUTO.value
    )
    assert (
        schema["mode"]["enum"] == [m.value for m in QueryMode]
        and schema["mode"]["default"] == QueryMode.DEEP.value
    )
    assert research.input_schema["required"] == ["question"]
