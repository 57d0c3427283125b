"""The orchestrator's first two routing layers (seed 000), pure and deterministic.

Layer 1, the counter limit, guarantees the clarification loop ends. Layer 2, the reply shortcut,
sends a user's reply to a clarification straight to research without an LLM call. Only when both
pass does layer 3, the LLM (an activity), look at the last messages of the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

from workflows.models import Message, RoutingDecision, RoutingLayer, Speaker


@dataclass(frozen=True)
class Route:
    decision: RoutingDecision
    reasoning: str
    layer: RoutingLayer


def route_without_llm(
    messages: list[Message],
    clarification_count: int,
    max_clarifications: int,
    last_agent: str | None,
    reply_shortcut: bool,
) -> Route | None:
    """The decision of layers 1 and 2, or None when the LLM must decide."""
    if clarification_count >= max_clarifications:
        return Route(
            RoutingDecision.RESEARCH,
            f"Clarification limit reached ({clarification_count}/{max_clarifications}): research is forced.",
            RoutingLayer.LIMIT,
        )
    if (
        reply_shortcut
        and last_agent == "clarification"
        and len(messages) >= 2
        and messages[-2].role is Speaker.ASSISTANT
        and messages[-1].role is Speaker.USER
    ):
        return Route(
            RoutingDecision.RESEARCH,
            "The user answered the clarification question: straight to research, no LLM call.",
            RoutingLayer.REPLY,
        )
    return None
