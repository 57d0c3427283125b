"""The model that writes: which endpoint, which model per tier, and how long a call may take."""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr

from settings.base import Section

DEFAULT_MODEL = "gpt-4o-mini"
#: The most LLM_CALL_LIMIT_S may be: what the workflow gives an LLM activity (workflows/roles.py).
LLM_CALL_LIMIT_MAX_S = 3600.0

OFFLINE_NOTICE = (
    "LLM: offline engine (deterministic, extractive, no network). "
    "To use a real LLM set OPENAI_API_KEY and/or OPENAI_BASE_URL (see README: Ollama, vLLM, OpenAI)."
)


class LLMSettings(Section):
    provider: str | None = Field(None, validation_alias="llm_provider")
    api_key: SecretStr | None = Field(None, validation_alias="openai_api_key")
    base_url: str | None = Field(None, validation_alias="openai_base_url")
    model: str | None = Field(None, validation_alias="llm_model")
    model_simple: str | None = Field(None, validation_alias="llm_model_simple")
    model_analytical: str | None = Field(None, validation_alias="llm_model_analytical")
    model_complex: str | None = Field(None, validation_alias="llm_model_complex")
    #: Replies are streamed (activities/openai_engine/streaming.py), so a slow model may take
    #: minutes as long as it keeps writing. Seconds the endpoint may go without sending a token
    #: once it has begun replying; longer, the attempt fails (LLMTimeout, retried). Default per
    #: prompt (60 s, the report 120 s). LLM_REQUEST_TIMEOUT_S is its older name.
    silence_timeout_s: float | None = Field(  # type: ignore[pydantic-alias]  # two names
        None,
        gt=0,
        le=LLM_CALL_LIMIT_MAX_S,
        validation_alias=AliasChoices("llm_silence_timeout_s", "llm_request_timeout_s"),
    )
    #: Before its first token a server reads the whole prompt and says nothing (llama.cpp cannot
    #: stream its progress): that wait is allowed the silence timeout plus the prompt's tokens at
    #: this many tokens a second (a CPU reads a 1.5B model's prompt at about 17).
    prompt_tokens_per_s: float = Field(10.0, gt=0, validation_alias="llm_prompt_tokens_per_s")
    #: The longest one LLM call may take in all, however steadily it writes (its retries each get
    #: as long again). The workflow gives an LLM activity LLM_CALL_LIMIT_MAX_S, so this is the
    #: deployment's own ceiling below it.
    call_limit_s: float = Field(
        900.0, ge=1, le=LLM_CALL_LIMIT_MAX_S, validation_alias="llm_call_limit_s"
    )
    #: The model's context window in tokens, for a server that does not state it (llama-cpp-python,
    #: a proxy): prompts are fitted to it. Unset: asked of the server (activities/openai_engine/servers.py).
    context_tokens: int | None = Field(
        None, ge=512, le=10_000_000, validation_alias="llm_context_tokens"
    )
    #: Prices per model, JSON: `{"MODEL": {"input": USD per 1M tokens, "output": USD per 1M}}`,
    #: over the built-in table (activities/pricing.py).
    prices: str | None = Field(None, validation_alias="llm_prices")

    @property
    def engine(self) -> str:
        """`openai` when an endpoint is configured, else the network-free `offline` engine."""
        if self.provider:
            return self.provider.strip().lower()
        if (self.api_key and self.api_key.get_secret_value()) or self.base_url:
            return "openai"
        return "offline"

    def model_for(self, tier: str) -> str:
        per_tier = {
            "simple": self.model_simple,
            "analytical": self.model_analytical,
            "complex": self.model_complex,
        }.get(tier)
        return per_tier or self.model or DEFAULT_MODEL
