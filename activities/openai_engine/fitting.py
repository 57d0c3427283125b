"""Fitting a prompt into the model's context window, by trimming quoted evidence and history.

A server with a small context either refuses a long prompt (llama.cpp, vLLM, OpenAI) or, worse,
silently drops its start (Ollama), which is where the instructions are. So the engine fits every
prompt itself before sending it: the reply's cap comes first (at most a third of the window), then
the prompt must fit what is left, with a margin for the chat template. What gives way is quoted
text (passages, evidence, findings, earlier reports, the conversation), each value cut in
proportion to its length inside its wrappers (`quoting.shrink`); the question, the instructions and
the reply's schema are never cut. A prompt that cannot fit even so is refused in one line.
"""

from __future__ import annotations

from typing import Any

from temporalio.exceptions import ApplicationError

from activities.openai_engine.servers import ServerFacts
from activities.prompts.quoting import NONE, Quoted, shrink

#: Tokens the chat template and the message framing take beyond the text itself.
TEMPLATE_TOKENS = 64
#: The reply never takes more than this share of the window.
REPLY_SHARE = 3


def estimate(text: str, facts: ServerFacts) -> int:
    """Tokens `text` likely takes on this server (calibrated by what it served, servers.py)."""
    return int(len(text) / facts.chars_per_token) + 1


def reply_cap(max_tokens: int, facts: ServerFacts) -> int:
    """The reply's cap: the prompt's own, at most a third of a known window."""
    if facts.context_tokens is None:
        return max_tokens
    return max(64, min(max_tokens, facts.context_tokens // REPLY_SHARE))


def prompt_room(cap: int, facts: ServerFacts) -> int | None:
    """Tokens the prompt may take, None while the window is unknown."""
    if facts.context_tokens is None:
        return None
    return facts.context_tokens - cap - TEMPLATE_TOKENS


def trimmed(values: dict[str, Any], excess_chars: int) -> dict[str, Any] | None:
    """`values` with their quoted text cut by about `excess_chars` in all, each value in
    proportion to its length (to nothing, `(none)`, when even that is too much); None when
    there is no quoted text left to cut."""
    quoted = {k: v for k, v in values.items() if isinstance(v, Quoted) and v != NONE}
    total = sum(len(v) for v in quoted.values())
    if total == 0:
        return None
    keep = max(0.0, (total - excess_chars) / total)
    return {**values, **{k: shrink(v, int(len(v) * keep)) for k, v in quoted.items()}}


def too_long(role: str, needed: int, facts: ServerFacts) -> ApplicationError:
    """A prompt that no trimming fits: the role's fallback applies (workflows/accounting/calls.py)."""
    return ApplicationError(
        f"the prompt of {role} needs about {needed} tokens even with its quoted text cut, more "
        f"than the model's context of {facts.context_tokens} tokens allows; use a model or server "
        "setting with a larger context (LLM_CONTEXT_TOKENS tells the engine the window)",
        type="LLMPromptTooLong",
        non_retryable=True,
    )
