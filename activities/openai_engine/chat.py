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
generation.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, overload

import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from activities import pricing, tracing
from activities.openai_engine import fitting
from activities.openai_engine.client import (
    build_request,
    connect,
    features_sent,
    refused_features,
    server_text,
)
from activities.openai_engine.errors import classify_error
from activities.openai_engine.replies import (
    REPLIES,
    WRITTEN,
    parse_reply,
    read_reply,
    read_text,
    repaired_reply,
)
from activities.openai_engine.servers import (
    ServerFacts,
    context_from_error,
    facts_for,
    probe_context,
)
from activities.openai_engine.streaming import Patience, Streamed, stream_completion
from activities.prompts.loader import PromptBook, checked, stated
from activities.usage import beat, served
from config import Settings
from workflows.activity_models import Usage
from workflows.checks.redaction import redact
from workflows.roles import BY_NAME, PROMPTS

log = logging.getLogger(__name__)

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


#: One request's particulars: prompt file, model, messages, request fields, what the server is
#: known to take, and the event loop's time by which the whole call must end.
Asked = tuple[str, str, list[dict[str, str]], dict[str, Any], ServerFacts, float]


class Chat:
    """The endpoint's client (one connection pool per engine), the prompts and the price table."""

    def __init__(
        self, settings: Settings, client: openai.AsyncOpenAI | None, langfuse: Any | None
    ) -> None:
        self._settings = settings
        self._langfuse = langfuse if langfuse is not None else tracing.langfuse_for(settings)
        self._prompts = PromptBook(self._langfuse)
        self._secret = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        try:
            self._prices = pricing.table(settings.llm_prices)
        except pricing.PriceError as err:
            raise ApplicationError(str(err), type="ConfigError", non_retryable=True) from None
        if client is None:
            client = connect(settings, self._secret)
        self._client = client
        self._base_url = str(client.base_url).rstrip("/")

    def model_for(self, role: str, prompt: str | None = None) -> str:
        """The model a call of `role` (with `prompt`, for a role with several) is asked with."""
        return self._settings.model_for(PROMPTS[_prompt_of(role, prompt)].tier.value)

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
        facts = await self._facts(model)
        # The call's ceiling (LLM_CALL_LIMIT_S) covers every request it makes: below the activity's.
        deadline = asyncio.get_running_loop().time() + self._settings.llm_call_limit_s
        #: The unreadable reply and why, once: the model is shown both and asked once more.
        correction: list[dict[str, str]] = []
        spent: Usage | None = None  # what the requests before the last one cost
        interruptions = 0
        while True:
            template, content, options = await self._fitted(file, reply, values, facts)
            messages = [{"role": "user", "content": content}, *correction]
            with tracing.generation(
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
            ) as generation:
                asked = (file, model, messages, options, facts, deadline)
                streamed = await self._complete(asked, generation)
                if streamed is None:
                    continue  # a refused feature or an overflowed window: ask again, adapted
                if not streamed.finished and not _readable(streamed.completion, reply):
                    interruptions += 1
                    spent = _added(spent, self._interrupted(asked, streamed, generation))
                    if interruptions > MAX_INTERRUPTIONS:
                        raise _cut_short(model, self._base_url, interruptions)
                    continue  # cut short by the server, not answered: ask again, in turn
                try:
                    parsed, usage = await self._read(asked, streamed.completion, reply, generation)
                except Unreadable as unreadable:
                    spent = _added(spent, unreadable.usage)
                    if correction:
                        raise unreadable.failure.__class__(
                            unreadable.failure.message,
                            type=unreadable.failure.type,
                            non_retryable=True,  # asked again already: the role's fallback applies
                        ) from None
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

    async def _facts(self, model: str) -> ServerFacts:
        """What this server and model are known to take; the window asked once per process."""
        facts = facts_for(self._base_url, model)
        if not facts.probed:
            facts.probed = True
            facts.context_tokens = self._settings.llm_context_tokens or await probe_context(
                self._base_url, model, self._secret
            )
        return facts

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

    async def _complete(self, asked: Asked, generation: tracing.Generation) -> Streamed | None:
        """One request; None when the server refused an optional feature (now in
        `facts.unsupported`) or overflowed a window it had not stated (now `facts.context_tokens`)."""
        _, model, _, options, facts, _ = asked
        try:
            return await self._request(asked)
        except openai.APIStatusError as err:
            if self._adapted(err, options, facts, model):
                generation.failed("the server refused the request as sent; asking again adapted")
                return None
            raise self._failed(generation, err, model) from None
        except openai.OpenAIError as err:
            raise self._failed(generation, err, model) from None
        except ApplicationError as failure:  # out of patience (streaming.py)
            generation.failed(failure.message)
            raise

    def _interrupted(
        self, asked: Asked, streamed: Streamed, generation: tracing.Generation
    ) -> Usage:
        """A streamed reply the server ended before the model finished it: from now on this
        server gets one request at a time from this process (servers.py `turn`). What it cost."""
        _, model, _, _, facts, _ = asked
        usage = self._usage(streamed.completion, model)
        served(usage.prompt_tokens, usage.completion_tokens, usage)
        if not facts.one_at_a_time:
            log.warning(
                "%s (model %s) ended a streamed reply before it was finished, as a server that "
                "serves one request at a time does when another arrives (llama-cpp-python's "
                "interrupt_requests): sending it one request at a time from now on",
                redact(self._base_url),
                model,
            )
            facts.one_at_a_time = True
        generation.failed("the server ended the reply before it was finished; asking again")
        return usage

    async def _request(self, asked: Asked) -> Streamed:
        """The request in its turn at the server (servers.py: one at a time for a server that
        cuts replies short otherwise; the wait moves the call's ceiling), streamed unless the
        server refused streaming; then one silent wait, as long as the call may still take."""
        file, model, messages, options, facts, deadline = asked
        async with facts.turn() as waited:
            return await self._sent((file, model, messages, options, facts, deadline + waited))

    async def _sent(self, asked: Asked) -> Streamed:
        file, model, messages, options, facts, deadline = asked
        body = {"model": model, "messages": messages, **options}
        if options.get("stream"):
            prompt_tokens = fitting.estimate("".join(m["content"] for m in messages), facts)
            silence = self._settings.llm_silence_timeout_s or PROMPTS[file].silence_timeout_s
            rate = self._settings.llm_prompt_tokens_per_s
            return await stream_completion(
                self._client,
                body,
                Patience.for_prompt(silence, prompt_tokens, rate, deadline),
                prompt_tokens=prompt_tokens,
                beat=beat,
                spent=lambda sent, got: served(sent, got, self._priced(sent, got, model)),
                where=self._base_url,
            )
        # What `chat.completions.create` sends, without its pass that converts typed params
        # (ours are plain JSON already): a tenth of the worker's CPU per call (issue 24).
        remaining = max(1.0, deadline - asyncio.get_running_loop().time())
        return Streamed(
            await self._client.post(
                "/chat/completions",
                cast_to=ChatCompletion,
                body=body,
                options={"timeout": remaining},
            )
        )

    def _adapted(
        self, err: openai.APIStatusError, options: dict[str, Any], facts: ServerFacts, model: str
    ) -> bool:
        """Learn from a refusal what to leave out, or from an overflow the window; False when the
        error teaches nothing new (it is then an error like any other)."""
        refused = refused_features(err, features_sent(options))
        where = redact(self._base_url)
        if refused:
            what = " and ".join(sorted(refused))
            log.warning(
                "%s (model %s) refused %s: asking without it from now on", where, model, what
            )
            facts.unsupported |= refused
            return True
        window = (
            context_from_error(server_text(err))
            if err.status_code in (400, 413, 422, 500)
            else None
        )
        if window is not None and window != facts.context_tokens:
            log.warning(
                "%s (model %s) has a context of %d tokens: fitting prompts to it",
                where,
                model,
                window,
            )
            facts.context_tokens = window
            return True
        return False

    async def _read(
        self, asked: Asked, completion: Any, reply: type[BaseModel], generation: tracing.Generation
    ) -> tuple[Any, Usage]:
        """The completion's reply and what it cost (continued once if it was cut off)."""
        model = asked[1]
        usage = self._usage(completion, model)
        served(usage.prompt_tokens, usage.completion_tokens, usage)
        try:
            if _cut_off(completion):
                parsed, usage = await self._continued(asked, completion, reply, usage)
                return parsed, usage
            parsed, repaired = read_reply(
                completion, reply, model, lambda err: self._error(err, model)
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
                    f"the LLM endpoint {redact(self._base_url)}: {failure.message}",
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
                await self._request((file, model, more_messages, plain, facts, deadline))
            ).completion
        except openai.OpenAIError as err:
            raise self._error(err, model) from None
        extra = self._usage(more, model)
        served(extra.prompt_tokens, extra.completion_tokens, extra)
        usage = _added(usage, extra)
        whole = partial + (more.choices[0].message.content or "" if more.choices else "")
        if _cut_off(more) or not more.choices:
            salvaged = _salvaged(whole, reply)
            if salvaged is not None:
                usage.repaired = 1
                return salvaged, usage
            parsed, repaired = read_reply(more, reply, model, lambda err: self._error(err, model))
            usage.repaired = int(repaired)
            return parsed, usage
        try:
            parsed, repaired = read_text(whole, reply, model)
            usage.repaired = int(repaired)
            return parsed, usage
        except ApplicationError as unreadable:
            # Asked again, the reply would stop at the same length: the role's fallback applies.
            raise ApplicationError(
                f"model {model} ran out of its {options.get('max_tokens', options.get('max_completion_tokens'))} "
                f"reply tokens before its reply was complete, and its continuation did not complete "
                f"it ({unreadable.message[:200]})",
                type="LLMReplyTruncated",
                non_retryable=True,
            ) from None

    def _usage(self, completion: Any, model: str) -> Usage:
        """What one completion cost: its tokens, priced by the model's row (None: no price known)."""
        usage = completion.usage
        if isinstance(usage, dict):  # a streamed reply put together (streaming.py)
            return self._priced(usage["prompt_tokens"], usage["completion_tokens"], model)
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
        completion_tokens = getattr(usage, "completion_tokens", 0) or 0
        return self._priced(prompt_tokens, completion_tokens, model)

    def _priced(self, prompt_tokens: int, completion_tokens: int, model: str) -> Usage:
        price = pricing.price_of(model, self._prices)
        return Usage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            requests=1,
            cost_usd=None if price is None else price.cost(prompt_tokens, completion_tokens),
            unpriced=None if price is not None else model,
            price_in=price.input if price else 0.0,
            price_out=price.output if price else 0.0,
        )

    def _error(self, err: openai.OpenAIError, model: str) -> ApplicationError:
        return classify_error(err, model=model, base_url=self._base_url, secret=self._secret)

    def _failed(
        self, generation: tracing.Generation, err: openai.OpenAIError, model: str
    ) -> ApplicationError:
        failure = self._error(err, model)
        generation.failed(failure.message)
        return failure


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
