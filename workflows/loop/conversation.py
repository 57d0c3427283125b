"""The orchestrator's conversation (seed 000): ask back while the question is too vague.

Routing has three layers: the counter limit and the reply shortcut decide without an LLM
(`workflows/kit/routing.py`, pure); only then does the `route` role look at the last messages. A
clarification question waits durably for the user's answer, which arrives as a signal or an
update, minutes or days later; an unanswered question times out and the research goes ahead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

from temporalio import workflow

from workflows import roles
from workflows.accounting.calls import call
from workflows.accounting.parts import Conversation
from workflows.accounting.stages import enter
from workflows.accounting.state import ResearchState
from workflows.activity_models import ClarifyInput, RouteInput
from workflows.events import EventKind, emit
from workflows.kit.routing import Route, route_without_llm
from workflows.loop.concurrency import both
from workflows.models import (
    ANSWER_MAX_CHARS,
    ROUTING_HISTORY,
    Clarification,
    Message,
    RoutingDecision,
    RoutingLayer,
    Speaker,
    Stage,
)
from workflows.text import duration, has_lone_surrogate, without_controls

T = TypeVar("T")


async def converse(
    state: ResearchState, alongside: Callable[[], Awaitable[T]] | None = None
) -> tuple[T] | None:
    """Route, and ask back while the question is too vague, within the limit.

    `alongside`: what the research does next when the question is clear (the coordinator's
    classification), started with the first routing call instead of after it: a clear question,
    the usual case, waits for one LLM call fewer. Its result, in a 1-tuple, when that first
    routing call sent the question straight to research; None (and discarded) otherwise, since a
    clarified question must be classified again."""
    conversation = state.conversation
    while True:
        enter(state, Stage.ROUTING)
        route, early = await _route(state, alongside if not conversation.routes else None)
        conversation.routes.append(route)
        if route.decision is RoutingDecision.RESEARCH:
            return early  # None but after the first routing call
        enter(state, Stage.CLARIFYING)
        asked = await call(
            state,
            roles.CLARIFY,
            ClarifyInput(
                messages=conversation.messages[-ROUTING_HISTORY:], language=state.language
            ),
        )
        if asked is not None and asked.note:
            state.writeup.notes.append(asked.note)
        if asked is None or not asked.question.strip():
            if asked is None or not asked.note:
                state.writeup.notes.append(
                    "A clarification question could not be written; researched the question as asked."
                )
            return None
        if not await _await_answer(state, asked.question.strip()):
            return None


async def _route(
    state: ResearchState, alongside: Callable[[], Awaitable[T]] | None
) -> tuple[Route, tuple[T] | None]:
    conversation, request = state.conversation, state.request
    shortcut = route_without_llm(
        conversation.messages,
        len(conversation.clarifications),
        request.max_clarifications,
        conversation.last_agent,
        request.reply_shortcut,
    )
    conversation.last_agent = "orchestrator"
    if shortcut is not None:
        return shortcut, None  # decided at once: nothing to overlap with
    routing = call(
        state,
        roles.ROUTE,
        RouteInput(
            messages=conversation.messages[-ROUTING_HISTORY:],
            clarification_count=len(conversation.clarifications),
            max_clarifications=request.max_clarifications,
            iteration=len(conversation.routes),
        ),
    )
    early: tuple[T] | None = None
    if alongside is None:
        decided = await routing
    else:
        decided, found = await both(routing, alongside())
        early = (found,)
    if decided is None:
        route = Route(
            RoutingDecision.RESEARCH,
            "Routing failed after its retries: research by default.",
            RoutingLayer.FALLBACK,
        )
    else:
        route = Route(decided.decision, decided.reasoning, RoutingLayer.LLM)
    return route, early


async def _await_answer(state: ResearchState, question: str) -> bool:
    """Wait durably for the user's answer; False when the wait timed out."""
    conversation = state.conversation
    conversation.clarifications.append(Clarification(question=question))
    conversation.messages.append(Message(role=Speaker.ASSISTANT, content=question))
    conversation.pending_question = question
    conversation.answer = None
    conversation.last_agent = "clarification"
    enter(state, Stage.AWAITING_ANSWER)
    emit(
        state.events,
        EventKind.QUESTION,
        f"question: {question}",
        {"question": question, "count": len(conversation.clarifications)},
    )
    timeout = state.request.clarification_timeout_s
    try:
        await workflow.wait_condition(
            lambda: conversation.answer is not None, timeout=timedelta(seconds=timeout)
        )
    except TimeoutError:
        conversation.pending_question = None
        state.writeup.notes.append(
            f"The clarification question was not answered within {duration(timeout)}; "
            "the research went ahead with the question as asked."
        )
        emit(
            state.events,
            EventKind.ANSWER,
            f"no answer within {duration(timeout)}",
            {"answer": None, "by": "timeout"},
        )
        return False
    answer = conversation.answer or ""
    conversation.pending_question = None
    conversation.clarifications[-1].answer = answer
    conversation.messages.append(Message(role=Speaker.USER, content=answer))
    emit(state.events, EventKind.ANSWER, f"answer: {answer}", {"answer": answer, "by": "person"})
    return True


def answer_problem(conversation: Conversation, answer: object) -> str | None:
    """Why an answer cannot be taken, or None: the signal records it, the update refuses it."""
    if conversation.pending_question is None or conversation.answer is not None:
        return "no clarification question is pending"
    if not isinstance(answer, str):
        return f"the answer must be a JSON string, got {type(answer).__name__}"
    if not without_controls(answer).strip():
        return "the answer is empty"
    if has_lone_surrogate(answer):
        return "the answer contains an undecodable character (a lone surrogate)"
    if len(answer) > ANSWER_MAX_CHARS:
        return f"the answer is longer than {ANSWER_MAX_CHARS} characters"
    return None
