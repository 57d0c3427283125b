"""One request to the endpoint, sent in its turn and adapted to what the server turned out to take.

Apart from chat.py, which decides what to ask and reads what comes back, because this side
answers to the server: the window it is known to have (asked once per process, servers.py), the
turn it gives (one request at a time for a server that cuts streamed replies short otherwise), the
stream within the call's limits (streaming.py), a feature it refused or a window it overflowed
(learned, then asked again without, client.py), and the price of what it served (pricing.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from temporalio.exceptions import ApplicationError

from activities import pricing, tracing
from activities.openai_engine import fitting
from activities.openai_engine.client import features_sent, refused_features, server_text
from activities.openai_engine.errors import classify_error
from activities.openai_engine.servers import (
    ServerFacts,
    context_from_error,
    facts_for,
    probe_context,
)
from activities.openai_engine.streaming import Patience, Streamed, stream_completion
from activities.usage import beat, served
from settings import Settings
from workflows.activity_models import Usage
from workflows.roles import PROMPTS
from workflows.text.redaction import redact

log = logging.getLogger(__name__)

#: One request's particulars: prompt file, model, messages, request fields, what the server is
#: known to take, and the event loop's time by which the whole call must end.
Asked = tuple[str, str, list[dict[str, str]], dict[str, Any], ServerFacts, float]


class Endpoint:
    """The endpoint's client (one connection pool per engine), its address and the price table."""

    def __init__(
        self,
        settings: Settings,
        client: openai.AsyncOpenAI,
        secret: str,
        prices: dict[str, pricing.Price],
    ) -> None:
        self._settings = settings
        self._client = client
        self._secret = secret
        self._prices = prices
        self.base_url = str(client.base_url).rstrip("/")

    async def facts(self, model: str) -> ServerFacts:
        """What this server and model are known to take; the window asked once per process."""
        facts = facts_for(self.base_url, model)
        if not facts.probed:
            facts.probed = True
            facts.context_tokens = self._settings.llm.context_tokens or await probe_context(
                self.base_url, model, self._secret
            )
        return facts

    async def complete(self, asked: Asked, generation: tracing.Generation) -> Streamed | None:
        """One request; None when the server refused an optional feature (now in
        `facts.unsupported`) or overflowed a window it had not stated (now `facts.context_tokens`)."""
        _, model, _, options, facts, _ = asked
        try:
            return await self.request(asked)
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

    def interrupted(
        self, asked: Asked, streamed: Streamed, generation: tracing.Generation
    ) -> Usage:
        """A streamed reply the server ended before the model finished it: from now on this
        server gets one request at a time from this process (servers.py `turn`). What it cost."""
        _, model, _, _, facts, _ = asked
        usage = self.usage(streamed.completion, model)
        served(usage.prompt_tokens, usage.completion_tokens, usage)
        if not facts.one_at_a_time:
            log.warning(
                "%s (model %s) ended a streamed reply before it was finished, as a server that "
                "serves one request at a time does when another arrives (llama-cpp-python's "
                "interrupt_requests): sending it one request at a time from now on",
                redact(self.base_url),
                model,
            )
            facts.one_at_a_time = True
        generation.failed("the server ended the reply before it was finished; asking again")
        return usage

    async def request(self, asked: Asked) -> Streamed:
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
            silence = self._settings.llm.silence_timeout_s or PROMPTS[file].silence_timeout_s
            rate = self._settings.llm.prompt_tokens_per_s
            return await stream_completion(
                self._client,
                body,
                Patience.for_prompt(silence, prompt_tokens, rate, deadline),
                prompt_tokens=prompt_tokens,
                beat=beat,
                spent=lambda sent, got: served(sent, got, self.priced(sent, got, model)),
                where=self.base_url,
            )
        # What `chat.completions.create` sends, without its pass that converts typed params
        # (ours are plain JSON already): a tenth of the worker's CPU per call.
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
        where = redact(self.base_url)
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

    def usage(self, completion: Any, model: str) -> Usage:
        """What one completion cost: its tokens, priced by the model's row (None: no price known)."""
        usage = completion.usage
        if isinstance(usage, dict):  # a streamed reply put together (streaming.py)
            return self.priced(usage["prompt_tokens"], usage["completion_tokens"], model)
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
        completion_tokens = getattr(usage, "completion_tokens", 0) or 0
        return self.priced(prompt_tokens, completion_tokens, model)

    def priced(self, prompt_tokens: int, completion_tokens: int, model: str) -> Usage:
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

    def error(self, err: openai.OpenAIError, model: str) -> ApplicationError:
        return classify_error(err, model=model, base_url=self.base_url, secret=self._secret)

    def _failed(
        self, generation: tracing.Generation, err: openai.OpenAIError, model: str
    ) -> ApplicationError:
        failure = self.error(err, model)
        generation.failed(failure.message)
        return failure
