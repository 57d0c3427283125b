"""The orchestrator's state machine: which stage may follow which (seed 001).

```
routing ──► clarifying ──► awaiting_answer ──► routing ...   (at most max_clarifications times)
   │                              │ (timeout)
   ▼                              ▼
coordinating ──► background ──► planning ──► researching ──► reflecting ──┐
   │                  │ (simple)    ▲  ▲            ▲      CONTINUE       │
   │                  ▼             │  │            └──────────────────────┤
   │             synthesizing ◄─────┼──┼──── COMPLETE / no steps left ─────┤
   │                  │             │  └───────────── ADJUST ─────────────┘
   ▼                  ▼
 (web mode: planning) completed | cancelled          any stage ──► failed | cancelled
```

A transition outside this table is a bug in the workflow, so it fails the research with a
non-retryable error that names both stages rather than leaving it stuck or silently wrong.
"""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from workflows.models import Stage

#: Stages where the research has gathered something worth synthesizing.
RESEARCH_STAGES = frozenset(
    {Stage.COORDINATING, Stage.BACKGROUND, Stage.PLANNING, Stage.RESEARCHING, Stage.REFLECTING}
)
TERMINAL_STAGES = frozenset({Stage.COMPLETED, Stage.CANCELLED, Stage.FAILED})

TRANSITIONS: dict[Stage, frozenset[Stage]] = {
    Stage.ROUTING: frozenset({Stage.CLARIFYING, Stage.COORDINATING}),
    Stage.CLARIFYING: frozenset({Stage.AWAITING_ANSWER, Stage.COORDINATING}),
    Stage.AWAITING_ANSWER: frozenset({Stage.ROUTING, Stage.COORDINATING}),
    Stage.COORDINATING: frozenset({Stage.BACKGROUND, Stage.PLANNING, Stage.SYNTHESIZING}),
    Stage.BACKGROUND: frozenset({Stage.PLANNING, Stage.SYNTHESIZING}),
    Stage.PLANNING: frozenset({Stage.RESEARCHING, Stage.SYNTHESIZING}),
    Stage.RESEARCHING: frozenset({Stage.REFLECTING, Stage.SYNTHESIZING}),
    Stage.REFLECTING: frozenset({Stage.RESEARCHING, Stage.PLANNING, Stage.SYNTHESIZING}),
    Stage.SYNTHESIZING: frozenset({Stage.COMPLETED, Stage.CANCELLED}),
    Stage.COMPLETED: frozenset(),
    Stage.CANCELLED: frozenset(),
    Stage.FAILED: frozenset(),
}


class IllegalTransition(ApplicationError):
    def __init__(self, current: Stage, target: Stage) -> None:
        super().__init__(
            f"illegal stage transition {current.value} -> {target.value}",
            type="IllegalTransition",
            non_retryable=True,
        )
        self.current = current
        self.target = target


def check_transition(current: Stage, target: Stage) -> None:
    """Raise IllegalTransition unless `target` may follow `current`.

    Failing or cancelling is allowed from every stage that has not ended.
    """
    if current in TERMINAL_STAGES:
        raise IllegalTransition(current, target)
    if target in (Stage.FAILED, Stage.CANCELLED):
        return
    if target not in TRANSITIONS[current]:
        raise IllegalTransition(current, target)
