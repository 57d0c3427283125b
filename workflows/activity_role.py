"""What one row of the role table (workflows/roles.py) is: a `Role`, the prompts it asks with,
and the timeouts and retry policies the rows choose from.

Apart from the rows so that what a row means, and how the workflow schedules it (`Role.run`) and
the worker registers it (`Role.define`), reads in one place, and the table reads as a table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum
from typing import Any, Generic, TypeAlias, TypeVar

from pydantic import BaseModel
from temporalio import activity, workflow
from temporalio.common import RetryPolicy

Req = TypeVar("Req", bound=BaseModel)
#: What a role answers: a model, or (the notification targets) a list of keys.
Rep = TypeVar("Rep")


class Tier(str, Enum):
    """Model tier (seed 002): cheap models route and judge, the strongest one writes the report."""

    SIMPLE = "simple"
    ANALYTICAL = "analytical"
    COMPLEX = "complex"


@dataclass(frozen=True)
class Prompt:
    """One prompt file a role asks with (`activities/prompts/<file>.md`), and how an engine asks
    it: which tier's model, how warm, the longest reply, and how long the endpoint may go without
    sending a token once it has begun replying (replies are streamed, so a slow model may write
    for minutes; activities/openai_engine/streaming.py). Low temperatures for decisions (routing at 0.3 per seed 000), a little
    higher where variety helps."""

    file: str
    tier: Tier
    temperature: float
    #: The longest reply the engine asks for (`max_tokens`): what bounds a call's cost before it
    #: is made (workflows/accounting/budget.py). A reply cut off there is continued once (openai engine).
    max_tokens: int = 1000
    silence_timeout_s: float = 60.0


LLM_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=4,
)
SEARCH_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=20),
    maximum_attempts=3,
)
SAVE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=6,
)
#: The most a deployment may let one LLM call take (LLM_CALL_LIMIT_S, settings/llm.py, checks it is
#: at most this; a test checks they agree). The workflow cannot read the deployment's settings,
#: so every LLM activity gets this much plus a minute: the engine's own limits end a call first
#: with a classified error, and a dead worker is noticed by the heartbeat timeout, not by this.
LLM_CALL_LIMIT_MAX = timedelta(hours=1)
LLM_TIMEOUT = LLM_CALL_LIMIT_MAX + timedelta(minutes=1)
#: Activities heartbeat every 5 s while they wait (activities/heartbeats.py): a worker that dies
#: mid-call is noticed after this long instead of after the call's whole start-to-close timeout.
HEARTBEAT_TIMEOUT = timedelta(seconds=20)


@dataclass(frozen=True)
class Role(Generic[Req, Rep]):
    """One activity the research calls."""

    #: The activity name history records: never rename (recorded histories replay by it). An LLM
    #: role's engine method has this name too (activities/engine.py).
    name: str
    input: type[Req]
    output: type[Rep]
    #: What the research does when this role's retries are spent (shown in the README's table).
    fallback: str
    #: The prompts an LLM role asks with: one, or one per kind of request (the background
    #: search's queries and a step's are written with different instructions). None: no LLM.
    asks: tuple[Prompt, ...] = ()
    timeout: timedelta = LLM_TIMEOUT
    retry: RetryPolicy = field(default_factory=lambda: LLM_RETRY)
    #: A failure concerns one item (one page, the stored copy), is expected, and is never fatal
    #: or noted: the caller goes on without it.
    isolated: bool = False
    #: Which calls run as local activities (in the worker that runs the research, recorded as one
    #: marker event, no task queue round trip): short, CPU-light work whose retries need no
    #: separate visibility, such as searching the local index or reading one of its documents.
    #: None: always a regular activity.
    local: Callable[[Req], bool] | None = None
    #: How long all attempts together may take (schedule-to-close); None: the retry policy's
    #: attempts alone bound it.
    window: timedelta | None = None
    #: How long a regular attempt may go without a heartbeat before Temporal retries it on
    #: another worker (the research's activities heartbeat: activities/heartbeats.py); None: it
    #: does not heartbeat, its timeout alone bounds it.
    heartbeat: timedelta | None = field(default_factory=lambda: HEARTBEAT_TIMEOUT)

    @property
    def llm(self) -> bool:
        """An LLM role: admitted against the budgets, its usage counted into `stats`."""
        return bool(self.asks)

    @property
    def prompts(self) -> tuple[str, ...]:
        """The files of the prompts it asks with (keys of `PROMPTS`)."""
        return tuple(p.file for p in self.asks)

    @property
    def max_tokens(self) -> int:
        """The longest reply one call may be asked for (0 for a role without an LLM)."""
        return max((p.max_tokens for p in self.asks), default=0)

    async def run(self, arg: Req, task_queue: str | None = None) -> Rep:
        """This activity, scheduled from a workflow with the row's limits: local where the row
        says so (short, CPU-light work), else regular (on TASK_QUEUE when given: a scholarly
        index's own rate-limited queue, else the research's)."""
        # Called by name: the SDK decodes the result as `self.output`, a `Rep`.
        result: Rep
        if self.local is not None and self.local(arg):
            result = await workflow.execute_local_activity(
                self.name,
                arg,
                result_type=self.output,
                start_to_close_timeout=self.timeout,
                schedule_to_close_timeout=self.window,
                retry_policy=self.retry,
            )
            return result
        result = await workflow.execute_activity(
            self.name,
            arg,
            result_type=self.output,
            task_queue=task_queue,
            start_to_close_timeout=self.timeout,
            schedule_to_close_timeout=self.window,
            heartbeat_timeout=self.heartbeat,
            retry_policy=self.retry,
        )
        return result

    def define(self, fn: Callable[[Req], Awaitable[Rep]]) -> Callable[[Req], Awaitable[Rep]]:
        """`fn` (one parameter, any annotation) as this role's activity: registered under the
        role's name and typed with its input and output models, which the data converter decodes
        by. So one generic function serves every role: the worker's LLM activities, the doubles."""
        (parameter,) = fn.__code__.co_varnames[: fn.__code__.co_argcount]
        fn.__name__ = fn.__qualname__ = self.name
        fn.__annotations__ = {parameter: self.input, "return": self.output}
        return activity.defn(name=self.name)(fn)


#: A role of whatever input and output: for the tables and for what reads only its name and limits.
AnyRole: TypeAlias = Role[Any, Any]
