"""After every step the reflector decides CONTINUE, ADJUST or COMPLETE (seed 002), within rules.

The reflector (an LLM or the offline rules) proposes; `guard` (pure, below) holds the research to
the depth's limits, whatever was proposed:

| proposed | when | becomes |
| --- | --- | --- |
| COMPLETE | fewer than the depth's minimum steps done | CONTINUE if steps remain, else ADJUST |
| ADJUST | the plan was already made MAX_PLAN_ITERATIONS times | CONTINUE if steps remain, else COMPLETE |
| CONTINUE | no step remains | ADJUST below the minimum while plans remain, else COMPLETE |
| COMPLETE | steps remain that a person approved in a plan review | CONTINUE |

A reflector whose retries are spent falls back to CONTINUE while steps remain, else COMPLETE.
"""

from __future__ import annotations

from workflows import roles
from workflows.accounting.calls import call
from workflows.accounting.state import ResearchState
from workflows.activity_models import ReflectInput
from workflows.events import EventKind, emit
from workflows.loop import approved
from workflows.models import Reflection, ReflectionDecision

MAX_PLAN_ITERATIONS = 3


async def reflect(state: ResearchState, judged: list[int] | None = None) -> Reflection:
    """One reflection on the steps just researched (`judged`, 0-based: one step, or a wave of
    independent steps researched at the same time, judged together in plan order)."""
    inquiry = state.inquiry
    assert inquiry.plan is not None
    low, _ = state.step_limits()
    done = inquiry.steps_done()
    pending = inquiry.next_step() is not None
    decided = await call(
        state,
        roles.REFLECT,
        ReflectInput(
            **state.about(),
            plan=inquiry.plan,
            completed_steps=done,
            min_steps=low,
            sources_count=len(state.material.sources),
        ),
    )
    if decided is None:
        decision = ReflectionDecision.CONTINUE if pending else ReflectionDecision.COMPLETE
        proposed = Reflection(
            decision=decision, reasoning="Reflection failed after its retries: fallback."
        )
    else:
        proposed = Reflection(
            decision=decided.decision,
            reasoning=decided.reasoning,
            suggested_changes=decided.suggested_changes,
        )
    approved_pending = pending and bool(approved.pending(state))
    reflection = guard(
        proposed,
        done=done,
        min_steps=low,
        pending=pending,
        plan_iterations=inquiry.plan_iterations - state.oversight.reviewer_plans,
        depth=inquiry.depth.value,
        approved_pending=approved_pending,
    )
    if judged and len(judged) > 1:
        reflection = reflection.model_copy(update={"steps": [i + 1 for i in judged]})
    inquiry.reflections.append(reflection)
    emit(
        state.events,
        EventKind.REFLECTION,
        f"reflection: {reflection.decision.value}: {reflection.reasoning}",
        {"decision": reflection.decision.value, "reason": reflection.reasoning[:1000]},
    )
    return reflection


def guard(
    reflection: Reflection,
    *,
    done: int,
    min_steps: int,
    pending: bool,
    plan_iterations: int,
    depth: str,
    approved_pending: bool = False,
) -> Reflection:
    """The decision the research follows: the proposal, held to the rules in the table above."""
    if reflection.decision is ReflectionDecision.COMPLETE and approved_pending:
        reflection = Reflection(
            decision=ReflectionDecision.CONTINUE,
            reasoning="COMPLETE refused: a person approved the remaining steps. "
            + reflection.reasoning,
            suggested_changes=reflection.suggested_changes,
        )
    if reflection.decision is ReflectionDecision.COMPLETE and done < min_steps:
        reflection = Reflection(
            decision=ReflectionDecision.CONTINUE if pending else ReflectionDecision.ADJUST,
            reasoning=f"COMPLETE refused: {done} of the {depth} depth's minimum {min_steps} steps done. "
            + reflection.reasoning,
            suggested_changes=reflection.suggested_changes
            or [f"{min_steps - done} more step(s) on uncovered aspects"],
        )
    if reflection.decision is ReflectionDecision.ADJUST and plan_iterations >= MAX_PLAN_ITERATIONS:
        reflection = Reflection(
            decision=ReflectionDecision.CONTINUE if pending else ReflectionDecision.COMPLETE,
            reasoning=f"ADJUST counted as {'CONTINUE' if pending else 'COMPLETE'}: "
            f"the plan was already made {MAX_PLAN_ITERATIONS} times. " + reflection.reasoning,
        )
    if reflection.decision is ReflectionDecision.CONTINUE and not pending:
        # Nothing left to research: replan while below the minimum and plans remain, else finish.
        short = done < min_steps and plan_iterations < MAX_PLAN_ITERATIONS
        reflection = reflection.model_copy(
            update={"decision": ReflectionDecision.ADJUST if short else ReflectionDecision.COMPLETE}
        )
    return reflection
