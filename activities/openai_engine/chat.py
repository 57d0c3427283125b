"""The one place that talks to the endpoint: render a role's prompt, fit it, ask, read the reply.

`Chat.ask(role, **values)` renders the prompt of that role's row in workflows/roles.py (from
Langfuse or the file, prompts/loader.py) with values of the kinds the prompt declares (untrusted
text only wrapped, prompts/quoting.py) and the data rule stated; fits it into the model's context
window by trimming quoted text (fitting.py, with the window the server states, servers.py); asks
with the prompt's tier, temperature and `max_tokens`, streaming the reply within the limits of
streaming.py (silence, the prompt's reading, the call's ceiling); and validates the reply with the
role's reply model (replies.py). It tries strict structured output first; a server that refuses a
feature, in whatever words and status, gets the call again without it (client.py), and one that
overflows its window gets it again fitted. A reply cut off at `max_tokens` is continued once.
Everything else becomes a classified `ApplicationError` (errors.py); each request is one Langfuse
generation. Sending a request (its turn at the server, the stream, what the server refused, what
it served at which price) is endpoint.py's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, overload

import openai
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from activities import pricing, tracing
from activities.openai_engine import fitting
from activities.openai_engine.client import build_request, connect
from activities.openai_engine.endpoint import Asked, Endpoint
from activities.openai_engine.replies import (
    REPLIES,
    WRITTEN,
    parse_reply,
    read_reply,
    read_text,
    repaired_reply,
)
from activities.openai_engine.servers import ServerFacts
from activities.prompts.loader import PromptBook, checked, stated
from activities.usage import served
from settings import Settings
from workflows.activity_models import Usage
from workflows.roles import BY_NAME, PROMPTS
from workflows.text.redaction import redact

CONTINUE = (
    "Your reply was cut off by the length limit. Continue it exactly where it stopped: "
    "write only the rest, with no preface and nothing repeated."
)
#: What the model is told when its reply could not be read, before it is asked once more.
READ_AGAIN = (
    "Your reply could not be read: {why}. Reply again with only the JSON object the schema asks "
    "for, complete, with every required field, and nothing before or after it."
)
#: How often one call asks again after the server cut a streamed reply short (streaming.py):
#: once the engine sends one request at a time it should not happen again in this process.
MAX_INTERRUPTIONS = 3


class Chat:
    """The prompts, the endpoint (endpoint.py) and the Langfuse client that traces every request."""

    def __init__(
        self, settings: Settings, client: openai.AsyncOpenAI | None, langfuse: Any | None
    ) -> None:
        self._settings = settings
        self._langfuse = langfuse if langfuse is not None else tracing.langfuse_for(settings)
        self._prompts = PromptBook(self._langfuse, settings.langfuse.prompt_wait_s)
        secret = settings.llm.api_key.get_secret_value() if settings.llm.api_key else ""
        try:
            prices = pricing.table(settings.llm.prices)
        except pricing.PriceError as err:
            raise ApplicationError(str(err), type="ConfigError", non_retryable=True) from None
        client = client if client is not None else connect(settings, secret)
        self._endpoint = Endpoint(settings, client, secret, prices)

    def model_for(self, role: str, prompt: str | None = None) -> str:
        """The model a call of `role` (with `prompt`, for a role with several) is asked with."""
        return self._settings.llm.model_for(PROMPTS[_prompt_of(role, prompt)].tier.value)

    async def ask(
        self,
        role: str,
        *,
        prompt: str | None = None,
        trace: dict[str, Any] | None = None,
        describe: Callable[[Any], dict[str, Any]] | None = None,
        **values: Any,
    ) -> tuple[Any, Usage]:
        """The validated reply of `role`'s model (`REPLIES[role]`) to its prompt (its only one, or
        `prompt`) rendered with `values`, and what it cost; `trace` and `describe` (what the reply
        means) go into the Langfuse generation's metadata."""
        file, reply = _prompt_of(role, prompt), REPLIES[role]
        model = self.model_for(role, file)
        checked(file, values)  # page text only wrapped: every value of the kind its prompt declares
        facts = await self._endpoint.facts(model)
        # The call's ceiling (LLM_CALL_LIMIT_S) covers every request it makes: below the activity's.
        deadline = asyncio.get_running_loop().time() + self._settings.llm.call_limit_s
        #: The unreadable reply and why, once: the model is shown both and asked once more.
        correction: list[dict[str, str]] = []
        spent: Usage | None = None  # what the requests before the last one cost
        interruptions = 0
        while True:
            template, content, options = await self._fitted(file, reply, values, facts)
            messages = [{"role": "user", "content": content}, *correction]
            asked = (file, model, messages, options, facts, deadline)
            with self._traced(asked, template, trace) as generation:
                streamed = await self._endpoint.complete(asked, generation)
                if streamed is None:
                    continue  # a refused feature or an overflowed window: ask again, adapted
                if not streamed.finished and not _readable(streamed.completion, reply):
                    interruptions += 1
                    spent = _added(spent, self._endpoint.interrupted(asked, streamed, generation))
                    if interruptions > MAX_INTERRUPTIONS:
                        raise _cut_short(model, self._endpoint.base_url, interruptions)
                    continue  # cut short by the server, not answered: ask again, in turn
                try:
                    parsed, usage = await self._read(asked, streamed.completion, reply, generation)
                except Unreadable as unreadable:
                    spent = _added(spent, unreadable.usage)
                    if correction:
                        raise _final(unreadable.failure) from None
                    correction = _read_again(streamed.completion, unreadable.failure.message)
                    continue
                usage = _added(spent, usage)
                usage.repaired = int(usage.repaired or 0)
                usage.reasked = 1 if correction else 0
                learned = usage.requests == 1 and not streamed.estimated  # a count, not a guess
                facts.learn_ratio(len(content), usage.prompt_tokens if learned else 0)
                generation.succeeded(
                    parsed.model_dump(), usage, describe(parsed) if describe else None
                )
                return parsed, usage

    def _traced(
        self, asked: Asked, template: Any, trace: dict[str, Any] | None
    ) -> AbstractContextManager[tracing.Generation]:
        """The Langfuse generation of one request: the prompt as managed, what was sent."""
        file, model, messages, options, _, _ = asked
        return tracing.generation(
            self._langfuse,
            role=file,
            model=model,
            prompt=template,
            messages=messages,
            parameters={k: v for k, v in options.items() if k != "response_format"},
            metadata={
                "response_format": options.get("response_format", {}).get("type", "none"),
                **(trace or {}),
            },
        )

    async def _fitted(
        self, file: str, reply: type[BaseModel], values: dict[str, Any], facts: ServerFacts
    ) -> tuple[Any, str, dict[str, Any]]:
        """The prompt (template, text, request fields) fitted to the window: quoted values are
        cut until the text leaves room for the reply (fitting.py)."""
        cap = fitting.reply_cap(PROMPTS[file].max_tokens, facts)
        room = fitting.prompt_room(cap, facts)
        fitted = values
        for _ in range(4):
            template, rendered = await self._prompts.get(file, fitted)
            content, options = build_request(
                file, stated(template, rendered), reply, facts.unsupported, cap
            )
            needed = fitting.estimate(content, facts)
            if room is None or needed <= room:
                return template, content, options
            excess = int((needed - room) * facts.chars_per_token) + 100
            smaller = fitting.trimmed(fitted, excess)
            if smaller is None:
                break
            fitted = smaller
        raise fitting.too_long(file, needed, facts)

    async def _read(
        self, asked: Asked, completion: Any, reply: type[BaseModel], generation: tracing.Generation
    ) -> tuple[Any, Usage]:
        """The completion's reply and what it cost (continued once if it was cut off)."""
        model = asked[1]
        usage = self._endpoint.usage(completion, model)
        served(usage.prompt_tokens, usage.completion_tokens, usage)
        try:
            if _cut_off(completion):
                parsed, usage = await self._continued(asked, completion, reply, usage)
                return parsed, usage
            parsed, repaired = read_reply(
                completion, reply, model, lambda err: self._endpoint.error(err, model)
            )
            usage.repaired = int(repaired)
            return parsed, usage
        except ApplicationError as failure:
            text = completion.choices[0].message.content if completion.choices else None
            generation.failed(failure.message, output=text, usage=usage)
            if failure.type != "InvalidLLMReply":
                raise
            raise Unreadable(
                ApplicationError(  # which endpoint's model: the research may fail on it
                    f"the LLM endpoint {redact(self._endpoint.base_url)}: {failure.message}",
                    type=failure.type,
                ),
                usage,
            ) from None

    async def _continued(
        self, asked: Asked, completion: Any, reply: type[BaseModel], usage: Usage
    ) -> tuple[Any, Usage]:
        """A reply cut off at `max_tokens` is continued once, in the same conversation, rather
        than thrown away: the two parts are read as one reply. A continuation that is cut off
        too fails as a truncated reply (the role's fallback applies)."""
        file, model, messages, options, facts, deadline = asked
        partial = completion.choices[0].message.content
        more_messages = [
            *messages,
            {"role": "assistant", "content": partial},
            {"role": "user", "content": CONTINUE},
        ]
        plain = {k: v for k, v in options.items() if k != "response_format"}
        try:
            more = (
                await self._endpoint.request((file, model, more_messages, plain, facts, deadline))
            ).completion
        except openai.OpenAIError as err:
            raise self._endpoint.error(err, model) from None
        extra = self._endpoint.usage(more, model)
        served(extra.prompt_tokens, extra.completion_tokens, extra)
        usage = _added(usage, extra)
        whole = partial + (more.choices[0].message.content or "" if more.choices else "")
        if _cut_off(more) or not more.choices:
            salvaged = _salvaged(whole, reply)
            if salvaged is not None:
                usage.repaired = 1
                return salvaged, usage
            parsed, repaired = read_reply(
                more, reply, model, lambda err: self._endpoint.error(err, model)
            )
            usage.repaired = int(repaired)
            return parsed, usage
        try:
            parsed, repaired = read_text(whole, reply, model)
            usage.repaired = int(repaired)
            return parsed, usage
        except ApplicationError:
            # Asked again, the reply would stop at the same length: the role's fallback applies.
            # Said in one short clause: a research's notes quote it to a reader.
            raise ApplicationError(
                f"model {model} ran out of its {options.get('max_tokens', options.get('max_completion_tokens'))} "
                "reply tokens twice (its continuation too) before its reply was complete",
                type="LLMReplyTruncated",
                non_retryable=True,
            ) from None


class Unreadable(Exception):
    """A reply that could not be read even repaired (`failure`), and what it cost."""

    def __init__(self, failure: ApplicationError, usage: Usage) -> None:
        super().__init__(failure.message)
        self.failure, self.usage = failure, usage


def _salvaged(text: str, reply: type[BaseModel]) -> Any | None:
    """A decision cut off twice at `max_tokens` (SmolLM2's coordinator talks on in its
    `reasoning`), repaired when every field it needs was written before the cut. Never a writer's
    reply: a report cut mid-sentence is no report (the role's fallback applies)."""
    if reply in WRITTEN.values():
        return None
    try:
        return repaired_reply(text, reply)
    except ValueError:
        return None


def _readable(completion: Any, reply: type[BaseModel]) -> bool:
    """A reply that reads whole without repair (a server that sends no finish reason at all)."""
    try:
        parse_reply(completion.choices[0].message.content, reply)
    except (ValueError, IndexError, AttributeError):
        return False
    return True


def _read_again(completion: Any, why: str) -> list[dict[str, str]]:
    """The unreadable reply and what was wrong with it, for the model's second try."""
    text = completion.choices[0].message.content if completion.choices else ""
    return [
        {"role": "assistant", "content": (text or "")[:4000]},
        {"role": "user", "content": READ_AGAIN.format(why=why.split(": ", 1)[-1][:300])},
    ]


def _final(failure: ApplicationError) -> ApplicationError:
    """An unreadable reply after the model was asked again: not retried, the role's fallback applies."""
    return failure.__class__(failure.message, type=failure.type, non_retryable=True)


def _cut_short(model: str, base_url: str, times: int) -> ApplicationError:
    return ApplicationError(
        f"the LLM endpoint {redact(base_url)} (model {model}) ended its reply before it was "
        f"finished {times} times in one call",
        type="LLMError",
    )


def _prompt_of(role: str, prompt: str | None) -> str:
    """The prompt file a call of `role` asks with: its only one, or the one named (of its own)."""
    files = BY_NAME[role].prompts
    if prompt is None and len(files) == 1:
        return files[0]
    if prompt in files:
        return prompt
    raise ApplicationError(
        f"{role} asks with {', '.join(files)}, not {prompt}", type="PromptError", non_retryable=True
    )


def _cut_off(completion: Any) -> bool:
    """A reply stopped by `max_tokens` with text worth continuing."""
    return (
        bool(completion.choices)
        and completion.choices[0].finish_reason == "length"
        and bool(completion.choices[0].message.content)
    )


@overload
def _added(a: Usage | None, b: Usage) -> Usage: ...
@overload
def _added(a: Usage, b: Usage | None) -> Usage: ...
def _added(a: Usage | None, b: Usage | None) -> Usage:
    """Two requests' costs as one (either may be None: nothing spent before)."""
    if a is None or b is None:
        return (b if a is None else a) or Usage()
    cost = None if a.cost_usd is None or b.cost_usd is None else a.cost_usd + b.cost_usd
    return a.model_copy(
        update={
            "prompt_tokens": a.prompt_tokens + b.prompt_tokens,
            "completion_tokens": a.completion_tokens + b.completion_tokens,
            "requests": a.requests + b.requests,
            "cost_usd": cost,
        }
    )
