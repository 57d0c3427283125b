"""A research request from plain values: the one way the CLI's flags, the MCP tool's arguments and
the web API's JSON become a `ResearchRequest`.

Defaults, types, choices and ranges are the model's (`workflows.models.ResearchRequest`).
`OPTIONS` adds only what a client shows: each option's CLI flag and help, and whether the MCP
`research` tool offers it. Values are named as the model names them (`max_cost_usd`), except the
question (`question`, the model's `query`). A value that cannot work raises `RequestError`: one
line naming the option as the caller spells it (`--max-cost` on the CLI, `max_cost_usd` elsewhere)
and what it allows, with what was given cut to a hundred characters. The question is taken
without control characters or bidi overrides (`terminal.clean`); a research id (`follow_up_of`,
and every id a client is given: `research_id`) must be non-empty, at most ID_MAX_CHARS and free of
them. Nothing here touches the network.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import ValidationError

from activities import pricing
from settings import Settings
from starter.client.errors import ClientError, Kind
from starter.client.temporal import shown
from starter.client.terminal import clean, escape
from workflows.models import QUERY_MAX_CHARS, QUERY_MIN_CHARS, STEP_LIMITS, ResearchRequest
from workflows.roles import Tier
from workflows.text.language_codes import is_language

QUESTION = "question"
#: The longest research id taken (ours are 17 characters; Temporal would take 1,000 bytes).
ID_MAX_CHARS = 200
#: Fields that name a research: given, they must be a research id ("" is refused, not ignored).
ID_FIELDS = frozenset({"follow_up_of"})


@dataclass(frozen=True)
class Option:
    """A request field a client may set. A bool field whose default is true is turned off by its
    flag, so that flag reads `--no-...`."""

    field: str
    flag: str
    #: The CLI's help; `{default}` stands for the model's default, in words.
    help: str | None = None
    metavar: str | None = None
    #: What the field allows, in words, where its type and bounds do not say it well.
    allowed: str | None = None
    #: Offered by the MCP `research` tool too: the fields `POST /api/research` documents.
    mcp: bool = False
    #: Its label on the web app's request forms (the home page's and /standing's); None: not
    #: offered there. The forms' controls, choices and reading follow from the model's field.
    page: str | None = None


OPTIONS: tuple[Option, ...] = (
    Option(
        "depth",
        "--depth",
        "how much research: auto (chosen from the question, default), "
        + ", ".join(
            f"{depth.value} ({low} to {high} plan steps)"
            for depth, (low, high) in STEP_LIMITS.items()
        ),
        mcp=True,
        page="Depth",
    ),
    Option(
        "mode",
        "--mode",
        "deep (plan, research, reflect, report; default), web (one quick search step) "
        "or simple (a direct answer, no research)",
        mcp=True,
        page="Mode",
    ),
    Option(
        "max_clarifications",
        "--max-clarifications",
        "at most N questions asked back before the research starts (default {default})",
        "N",
        mcp=True,
    ),
    Option(
        "reply_shortcut",
        "--no-reply-shortcut",
        "let the LLM judge every reply (the limit is what stops the loop)",
    ),
    Option(
        "clarification_timeout_s",
        "--clarification-timeout",
        "how long a question waits for an answer (default {default})",
        "SECONDS",
    ),
    Option(
        "time_budget_s",
        "--time-budget",
        "research time before synthesis (default: the mode's budget)",
        "SECONDS",
    ),
    Option(
        "follow_up_of",
        "--follow-up",
        "a follow-up to research ID: its question, clarifications and report are the conversation",
        "ID",
        mcp=True,
    ),
    Option(
        "verify",
        "--no-verify",
        "skip claim verification and the critic (faster; claims stay unverified)",
    ),
    Option(
        "review_plan",
        "--review-plan",
        "wait for your approval (or revision) of the plan before any step runs",
        mcp=True,
        page="Review the plan before research starts",
    ),
    Option(
        "review_replans",
        "--review-replans",
        "with --review-plan: review each automatic re-plan too (default: the first plan only)",
        mcp=True,
    ),
    Option(
        "review_report",
        "--review-report",
        "wait for your review of the report: when the critic asks and you are attached to a terminal "
        "(auto), always, or never",
        mcp=True,
        page="Review the report",
    ),
    Option(
        "review_timeout_s",
        "--review-timeout",
        "how long a review waits for you before the plan runs as proposed (default {default})",
        "SECONDS",
        mcp=True,
    ),
    Option(
        "max_tokens",
        "--max-tokens",
        "token budget for the whole research, report and verification included",
        "N",
        mcp=True,
        page="Token budget",
    ),
    Option(
        "max_cost_usd",
        "--max-cost",
        "cost budget in USD (prices: LLM_PRICES or the built-in table)",
        "USD",
        mcp=True,
        page="Cost budget (USD)",
    ),
    Option(
        "sources",
        "--sources",
        "where to search: configured (SEARCH_PROVIDER and its fallbacks, default), web (the "
        "configured web providers only), documents (the local corpus and your uploaded documents), "
        "both (web and documents) or papers (the scholarly indexes of SCHOLARLY_PROVIDERS)",
        mcp=True,
        page="Sources",
    ),
    Option(
        "language",
        "--language",
        "the report's language: auto (the question's, default) or an ISO 639 code such as en, de, vi, pt-BR",
        "CODE",
        allowed="auto or a language code such as en, de or vi",
        mcp=True,
        page="Report language",
    ),
)
#: How the CLI spells each field in its messages.
FLAGS: dict[str, str] = {o.field: o.flag for o in OPTIONS}
#: Every name `build_request` takes, in the order a client shows them.
NAMES: tuple[str, ...] = (QUESTION, *FLAGS)
_OPTION = {o.field: o for o in OPTIONS}


class RequestError(ClientError, ValueError):
    """A request that cannot work; the message is one line naming the option and what it allows
    (a `ClientError` of kind `INVALID`: every front end shows it as it shows bad input)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message, Kind.INVALID)
        self.field = field


def build_request(
    values: Mapping[str, Any], names: Mapping[str, str] | None = None
) -> ResearchRequest:
    """The request from plain values, checked before any network call. A value that is absent,
    None or "" takes the model's default (but a research id given as "" is refused). NAMES: how
    the caller spells each field in messages (default: the field's own name)."""
    unknown = [name for name in values if name not in NAMES]
    if unknown:
        raise RequestError(
            f"unknown option {_shown(unknown[0])}: use {', '.join(NAMES)}", unknown[0]
        )
    given: dict[str, Any] = {}
    for name, value in values.items():
        if (
            name in ID_FIELDS and value is not None
        ):  # given as "", it is refused, not taken as absent
            given[name] = research_id(value, (names or {}).get(name, name))
        elif name != QUESTION and value is not None and value != "":
            given[name] = _cleaned(name, value)
    language = given.get("language")
    if isinstance(language, str) and language != "auto" and not is_language(language):
        # The shape is the model's; whether it names a language is asked here, where a research
        # is started, not in the model a running research decodes again on every replay.
        name = (names or {}).get("language", "language")
        raise RequestError(
            f"invalid {name} {_shown(values.get('language'))}: use {allowed('language')}",
            "language",
        )
    try:
        return ResearchRequest(query=_question(values.get(QUESTION)), **given)
    except ValidationError as err:
        field = str(err.errors()[0]["loc"][0])
        name = (names or {}).get(field, field)
        raise RequestError(
            f"invalid {name} {_shown(values.get(field))}: use {allowed(field)}", field
        ) from err


def check_prices(
    request: ResearchRequest, cfg: Settings, names: Mapping[str, str] | None = None
) -> None:
    """A cost budget needs a price for every model the research may use: refused before it
    starts, naming the model (the worker reads the same LLM_PRICES and model settings)."""
    if request.max_cost_usd is None or cfg.llm.engine == "offline":
        return
    try:
        prices = pricing.table(cfg.llm.prices)
    except pricing.PriceError as err:
        raise RequestError(str(err), "max_cost_usd") from None
    for model in dict.fromkeys(cfg.llm.model_for(tier.value) for tier in Tier):
        if pricing.price_of(model, prices) is None:
            raise RequestError(
                f"{(names or {}).get('max_cost_usd', 'max_cost_usd')}: no price is known for model {model}; "
                f'set LLM_PRICES, e.g. LLM_PRICES=\'{{"{model}": {{"input": 0.5, "output": 1.5}}}}\' '
                "(USD per 1M tokens)",
                "max_cost_usd",
            )


def check_sources(
    request: ResearchRequest, cfg: Settings, names: Mapping[str, str] | None = None
) -> None:
    """Web sources need a web search provider, papers a scholarly index: refused before the
    research starts rather than left to fail at its first search (the worker reads the same
    SEARCH_* and SCHOLARLY_PROVIDERS settings; the research asks it again and says so too)."""
    if request.sources.web and not cfg.search.web_providers:
        name = (names or {}).get("sources", "sources")
        raise RequestError(
            f"{name} {request.sources.value}: no web search provider is configured "
            f"(SEARCH_PROVIDER={cfg.search.provider}); set SEARCH_PROVIDER or "
            "SEARCH_FALLBACK_PROVIDERS to one, such as duckduckgo, or choose documents",
            "sources",
        )
    if request.sources.papers and not cfg.papers.indexes:
        name = (names or {}).get("sources", "sources")
        raise RequestError(
            f"{name} papers: no scholarly index is configured (SCHOLARLY_PROVIDERS is empty); "
            "set it to one or more of openalex, arxiv, crossref, semanticscholar, pubmed",
            "sources",
        )


def research_id(value: Any, name: str = "id") -> str:
    """VALUE as a research id, without surrounding space; RequestError (one line, naming NAME)
    when it is not text, empty, longer than ID_MAX_CHARS, or has control characters."""
    if not isinstance(value, str):
        raise RequestError(f"invalid {name} {_shown(value)}: use a research id", name)
    text = value.strip()
    if not text:
        raise RequestError(f"{name} is empty: give a research id", name)
    if len(text) > ID_MAX_CHARS:
        raise RequestError(
            f"{name} is too long ({len(text)} characters, at most {ID_MAX_CHARS}): {shown(text)}",
            name,
        )
    if escape(text) != text:
        raise RequestError(f"{name} {shown(text)} has control characters: not a research id", name)
    return text


# --- what the model says of a field ---------------------------------------------------------------


def value_type(field: str) -> type:
    """The field's type without its None: int, float, bool, str or an Enum."""
    annotation = ResearchRequest.model_fields[field].annotation
    kinds = [kind for kind in typing.get_args(annotation) if kind is not type(None)]
    return kinds[0] if kinds else annotation  # type: ignore[return-value]


def choices(field: str) -> list[str] | None:
    kind = value_type(field)
    return [member.value for member in kind] if issubclass(kind, Enum) else None


def default(field: str) -> Any:
    value = ResearchRequest.model_fields[field].default
    return value.value if isinstance(value, Enum) else value


def help_of(option: Option) -> str | None:
    if option.help is None:
        return None
    value = default(option.field)
    shown = _duration(value) if option.field.endswith("_s") and value is not None else str(value)
    return option.help.replace("{default}", shown)


def allowed(field: str) -> str:
    """What the field takes, in words: its choices or its range."""
    option = _OPTION.get(field)
    if option is not None and option.allowed:
        return option.allowed
    kind = value_type(field)
    if issubclass(kind, Enum):
        return "one of " + ", ".join(choices(field) or ())
    if kind is bool:
        return "true or false"
    if kind in (int, float):
        return _range(field, kind)
    return "text"


def _range(field: str, kind: type) -> str:
    rules = ResearchRequest.model_fields[field].metadata
    bounds = {
        name: getattr(rule, name)
        for rule in rules
        for name in ("ge", "gt", "le")
        if getattr(rule, name, None) is not None
    }
    if kind is int and "gt" in bounds:
        bounds["ge"] = bounds.pop("gt") + 1
    finite = kind is float and any(getattr(rule, "allow_inf_nan", True) is False for rule in rules)
    words = ["a whole number" if kind is int else "a finite number" if finite else "a number"]
    if "ge" in bounds:
        words.append(f"from {_number(bounds['ge'])}")
    elif "gt" in bounds:
        words.append(f"above {_number(bounds['gt'])}")
    if "le" in bounds:
        words.append(
            ("to " if "ge" in bounds else "and at most " if "gt" in bounds else "at most ")
            + _number(bounds["le"])
        )
    return " ".join(words)


def _question(value: Any) -> str:
    if not isinstance(value, str | None):
        raise RequestError(
            f"invalid {QUESTION} {_shown(value)}: use text of {QUERY_MIN_CHARS} to "
            f"{QUERY_MAX_CHARS} characters",
            QUESTION,
        )
    if value is None:
        raise RequestError(
            f"{QUESTION} is required: text of {QUERY_MIN_CHARS} to {QUERY_MAX_CHARS} characters",
            QUESTION,
        )
    query = clean(value).strip()
    if len(query) < QUERY_MIN_CHARS:
        raise RequestError(
            f"the question is empty or too short (at least {QUERY_MIN_CHARS} characters)", QUESTION
        )
    if len(query) > QUERY_MAX_CHARS:
        raise RequestError(
            f"the question is too long ({len(query)} characters, at most {QUERY_MAX_CHARS})",
            QUESTION,
        )
    return query


def _cleaned(field: str, value: Any) -> Any:
    """A language code is matched as typed but for case and surrounding space."""
    return value.strip().lower() if field == "language" and isinstance(value, str) else value


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else str(value)


def _shown(value: Any) -> str:
    """A value as given, for a message: cut to a hundred characters."""
    if isinstance(value, float) and math.isfinite(value):
        return _number(value)
    return str(value) if isinstance(value, int | float) else shown(repr(value))


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)} {unit}"
    return f"{_number(seconds)} s"
