"""`DeepResearchWorkflow`: the orchestrator's state machine as one durable Temporal workflow.

It reads like seed 002's diagram: route (and maybe clarify) → coordinate → background → plan →
for each step: research, then reflect (CONTINUE / ADJUST / COMPLETE) → synthesize → check → save.
Every LLM call, search and page read is an activity; the workflow only decides. A crashed worker,
a restarted server or a user who answers the clarification question two days later loses nothing.

Where to read on (the floors are in workflows/__init__.py): `workflows/accounting/stages.py` (the
transition table), `workflows/accounting/state.py` and `workflows/accounting/parts.py` (everything
the research keeps, in parts), `workflows/roles.py` (every activity, its timeout, retry and
fallback), `workflows/accounting/calls.py` (the failure policy), and one module per stage group:
`conversation`, `planning`, `researching`, `reflection`, `reporting`, `checking`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import CancelledError as TemporalCancelledError
from temporalio.exceptions import FailureError

from workflows import patches
from workflows.accounting import budget, model_use
from workflows.accounting.stages import RESEARCH_STAGES, begin, enter
from workflows.accounting.state import ResearchState
from workflows.accounting.timekeeping import ResearchClock, time_budget
from workflows.activity_models import CoordinateOutput
from workflows.checks.checking import check
from workflows.checks.reporting import finished, save, synthesize
from workflows.events import Event
from workflows.loop import approved, intake
from workflows.loop.conversation import answer_problem, converse
from workflows.loop.planning import (
    classifies,
    classify,
    coordinate,
    investigate_background,
    make_plan,
)
from workflows.loop.reflection import reflect
from workflows.loop.researching import handle_loop_back, research_wave
from workflows.models import (
    Claim,
    Message,
    QueryMode,
    RefinementAction,
    ReflectionDecision,
    ResearchResult,
    ResearchStatus,
    ReviewTarget,
    Speaker,
    Stage,
    StepStatus,
)
from workflows.standing import admission, notices
from workflows.standing_messages import NoticeKind
from workflows.steering import refining
from workflows.steering.reviews import (
    plan_review_wanted,
    report_review_wanted,
    review_plan,
    review_problem,
    review_report,
)
from workflows.text import language, without_controls

#: Independent steps researched at the same time, at most (pages read at once: 3 per step).
MAX_STEPS_AT_ONCE = 4


@workflow.defn(name="DeepResearchWorkflow")
class DeepResearchWorkflow:
    def __init__(self) -> None:
        self.state = ResearchState()
        #: This run continues a research handed over by continue-as-new.
        self.resumed = False
        #: The time budget's clock over this run's stretches of research, and its waves of steps.
        self.clock = ResearchClock()
        self.waves = 0
        #: The coordinator's classification, made alongside the first routing call (1-tuple).
        self.classified: tuple[CoordinateOutput | None] | None = None
        #: Announces waits for a person (set when the research begins).
        self.watcher: notices.Watcher | None = None

    # --- the research, top to bottom (seed 002's diagram; stages.py has the table) ---------------

    @workflow.run
    async def run(self, request: RawValue, resume: ResearchState | None = None) -> ResearchResult:
        """`request` (a `ResearchRequest`) is decoded here, not by the SDK: a start from another
        client that does not validate, or cannot even be decoded (a lone surrogate from the
        Temporal CLI), fails the research at once with one line instead of every workflow task.
        `resume` is the state a previous run of this research handed over when it continued as
        new (a long research keeps its history short; see `_continue_as_new`)."""
        state = self._begin(request, resume)
        self.watcher = notices.Watcher(state)
        asyncio.create_task(self.watcher.run())  # noqa: RUF006 - ends with the research
        try:
            return await self._research_to_the_end(state)
        except FailureError as err:
            if not isinstance(err, TemporalCancelledError):
                await notices.send(state, NoticeKind.FAILED, error=notices.failure_text(err))
            raise

    async def _research_to_the_end(self, state: ResearchState) -> ResearchResult:
        """The research, from routing to its result (`run` adds the failure's notice)."""
        cancelled = False
        if not self.resumed and (
            why := await admission.skipped(state.request.standing_id, state.request.owner)
        ):
            return self._skipped(why)  # a scheduled run with its owner at the running limit
        try:
            if not self.resumed:
                self.classified = await converse(
                    state, self._classify_alongside()
                )  # routing -> clarifying -> ...
            await self.clock.guarded(
                self.state, self._research()
            )  # coordinating -> background -> planning -> steps
        except asyncio.CancelledError:
            state.writeup.notes.append(
                "The research was cancelled; the report covers what was gathered until then."
            )
            if state.stage not in RESEARCH_STAGES:
                return self._cancelled_before_research()
            cancelled = True
        report, claims, cancelled = await self._report(
            cancelled
        )  # synthesizing -> verifying -> ...
        partial = budget.partial_line(state.ledger.budget, state.ledger.spending)
        if partial:
            report = f"{partial}\n\n{report}"
        report = model_use.settled(state.ledger.stats, state.writeup.notes, report)
        enter(state, Stage.CANCELLED if cancelled else Stage.COMPLETED)
        state.writeup.notes.extend(approved.unrun_notes(state))
        return await self._finish(report, claims)

    async def _research(self) -> None:
        """Classify, look around, plan (and have the plan reviewed), then the steps; a resumed
        run goes straight on with the steps, a direct answer has none."""
        if self.resumed or not await self._prepare():
            await self._steps()

    def _classify_alongside(self) -> Callable[[], Awaitable[CoordinateOutput | None]] | None:
        """The coordinator's call, to run with the first routing call (one LLM call fewer to wait
        for when the question is clear; wasted when it is not)."""
        if classifies(self.state.request):
            return lambda: classify(self.state)
        return None

    async def _prepare(self) -> bool:
        """True for a direct answer (a simple question), which needs no plan."""
        state = self.state
        enter(state, Stage.COORDINATING)
        if await coordinate(state, self.classified):
            enter(state, Stage.BACKGROUND)
            await investigate_background(state, as_sources=True)
            return True
        if state.request.mode is not QueryMode.WEB:
            enter(state, Stage.BACKGROUND)
            await investigate_background(state, as_sources=False)
        enter(state, Stage.PLANNING)
        await make_plan(state, feedback=[])
        await self._review_plan()
        return False

    async def _steps(self) -> None:
        """The steps, wave after wave, each reflected on (seed 002's loop); the plan's steps and
        the steps a refinement adds alike."""
        state = self.state
        while wave := self._next_wave():
            if self._time_to_continue_as_new():
                await self._continue_as_new()
            self.waves += 1
            enter(state, Stage.RESEARCHING)
            found = await research_wave(state, wave)
            for index, findings in zip(wave, found, strict=False):
                handle_loop_back(state, index, findings)
            enter(state, Stage.REFLECTING)
            reflection = await reflect(state, judged=wave)
            if reflection.decision is ReflectionDecision.COMPLETE:
                state.inquiry.skip_pending("the reflector judged the research complete")
                return
            if reflection.decision is ReflectionDecision.ADJUST:
                enter(state, Stage.PLANNING)
                kept = approved.kept_at_replan(state)  # a person's approved steps stay the plan
                await make_plan(
                    state,
                    feedback=reflection.suggested_changes or [reflection.reasoning],
                    keep=kept,
                )
                if kept:
                    added = state.inquiry.steps_planned() - state.inquiry.steps_done() - len(kept)
                    note = approved.kept_note(kept, added, state.inquiry.steps_done())
                    state.writeup.notes.append(note)
                await self._review_plan(replan=True)

    async def _report(self, cancelled: bool) -> tuple[str, list[Claim], bool]:
        """Write the report, then (seed 001) verify and criticise it, refine it while the critic
        objects and passes are left, and have a person review it when asked. Returns the report,
        its claims, and whether the research ended cancelled (by Temporal or the reviewer)."""
        state = self.state
        report, claims = await synthesize(state)
        if cancelled or not state.request.verify:
            report, claims = await check(state, report, claims, cancelled)
            return report, claims, cancelled
        try:
            report, claims = await self._verify(report, claims)
            while refining.wants_refinement(state):
                report, claims = await self._refine()
            report = refining.with_open_issues(state, report)
            if report_review_wanted(state):
                report, claims = await review_report(state, report, claims, self._verify)
        except asyncio.CancelledError:
            state.writeup.notes.append(
                "The research was cancelled while its report was being checked; "
                "it stands as it was."
            )
            return report, claims, True
        return report, claims, state.stage is Stage.CANCELLED

    async def _verify(self, report: str, claims: list[Claim]) -> tuple[str, list[Claim]]:
        enter(self.state, Stage.VERIFYING)
        return await check(self.state, report, claims, cancelled=False)

    async def _refine(self) -> tuple[str, list[Claim]]:
        """One pass of the refining loop: research what is missing through the wave loop, or
        rewrite with the critic's issues."""
        state = self.state
        issues, suggestion = refining.critic_issues(state)
        can_research = self.clock.can_research_more(self.state)
        refinement = refining.begin_pass(state, issues, can_research)
        if refinement.action is RefinementAction.REWRITE:
            report, claims = await synthesize(state, feedback=[*issues, *suggestion])
        else:
            await self.clock.guarded(self.state, self._research_missing(issues))
            report, claims = await synthesize(state)
        return await self._verify(report, claims)

    async def _research_missing(self, issues: list[str]) -> None:
        enter(self.state, Stage.PLANNING)
        await make_plan(self.state, feedback=issues)
        await self._steps()

    # --- starting, ending, continuing as new -----------------------------------------------------

    def _begin(self, raw: RawValue, resume: ResearchState | None) -> ResearchState:
        request = intake.valid_request(raw)
        if resume is not None:
            self.state = resume
            self.resumed = True
            return resume
        state = self.state
        query = request.query.strip()
        state.request = request
        state.inquiry.depth = request.depth
        # Temporal's own start time of the research (from its start event, so replay-safe): what its
        # visibility list shows, and so what the library and the web app's list sort and page by.
        state.started_at = workflow.info().workflow_start_time
        intake.check_question(query)
        state.conversation.messages = [*request.history, Message(role=Speaker.USER, content=query)]
        state.language = language.choose(request.language, query)
        state.ledger.budget = budget.limits(
            request.max_tokens, request.max_cost_usd, time_budget(self.state)
        )
        if request.max_tokens is not None or request.max_cost_usd is not None:
            spending = state.ledger.spending
            spending.afforded_report = workflow.patched(patches.REPORT_AS_AFFORDED)
        begin(state)
        return state

    def _cancelled_before_research(self) -> ResearchResult:
        state = self.state
        enter(state, Stage.CANCELLED)
        report = f"# {state.question}\n\nThe research was cancelled before it began.\n"
        result = state.result(report, [], state.started_at or workflow.now(), workflow.now())
        finished(state, result)
        return result

    def _skipped(self, why: str) -> ResearchResult:
        """A scheduled run that did not go ahead: cancelled, saying WHY, nothing researched or
        stored (the next run compares with the last run that was)."""
        state = self.state
        enter(state, Stage.CANCELLED)
        state.writeup.notes.append(why)
        report = f"# {state.question}\n\n{why}\n"
        result = state.result(report, [], state.started_at or workflow.now(), workflow.now())
        finished(state, result)
        return result

    async def _finish(self, report: str, claims: list[Claim]) -> ResearchResult:
        state = self.state
        report = await notices.compare_with_previous(state, report, claims)
        started = state.started_at or workflow.now()
        result = state.result(report, claims, started, workflow.now())
        await save(state, result, started)
        finished(state, result)
        await self._announce_end(result)
        return result

    async def _announce_end(self, result: ResearchResult) -> None:
        """research.completed, and standing.changed when a standing research's run found changes."""
        state, watcher = self.state, self.watcher
        assert watcher is not None
        await watcher.idle()
        if result.outcome is Stage.COMPLETED:
            await notices.send(state, NoticeKind.COMPLETED, outcome=result.outcome.value)
        elif result.outcome is Stage.CANCELLED and workflow.patched(patches.CANCELLED_NOTICE):
            await notices.send(state, NoticeKind.CANCELLED, outcome=result.outcome.value)
        if state.changes is not None and state.changes.changed:
            await notices.send(state, NoticeKind.CHANGED, changes=state.changes)

    def _time_to_continue_as_new(self) -> bool:
        """At a step boundary: when Temporal suggests it (the history grew long), or after the
        request's `steps_per_run` waves (an operator's cap, and how the tests force it)."""
        if workflow.info().is_continue_as_new_suggested():
            return True
        per_run = self.state.request.steps_per_run
        return per_run is not None and self.waves >= per_run

    async def _continue_as_new(self) -> None:
        """Hand the research over to a fresh run of itself: its state as the second argument,
        after every signal and update handler has finished (none is lost in between). The
        research time spent so far goes with it, so the time budget runs on, not over."""
        state = self.state
        await workflow.wait_condition(workflow.all_handlers_finished)
        self.clock.count(self.state)
        state.runs += 1
        workflow.continue_as_new(args=[state.request, state])

    def _next_wave(self) -> list[int]:
        """The steps to research now: the next step, and the pending steps after it that the plan
        marks independent, researched at the same time (then reflected on together, in order)."""
        state = self.state
        index = state.inquiry.next_step()
        if index is None:
            return []
        wave = [index]
        plan = state.inquiry.plan
        if plan and plan.steps[index].independent:
            for later in range(index + 1, len(plan.steps)):
                step = plan.steps[later]
                if (
                    len(wave) >= MAX_STEPS_AT_ONCE
                    or not step.independent
                    or step.status is not StepStatus.PENDING
                ):
                    break
                wave.append(later)
        return budget.affordable(state, wave)  # under a budget: the steps it can pay for at once

    async def _review_plan(self, replan: bool = False) -> None:
        if plan_review_wanted(self.state, replan):
            await review_plan(self.state)

    # --- budgets: tokens and cost from inside, time from outside ---------------------------------

    # --- the outside world talks to the research ------------------------------------------------

    @workflow.signal(name="clarification_answer")
    def clarification_answer(self, answer: Any = None) -> None:
        """The user's answer, as a JSON string. A signal when nothing is pending, or one that is
        not a non-empty string, is recorded in `ignored_signals` and otherwise ignored."""
        problem = answer_problem(self.state.conversation, answer)
        if problem:
            self.state.conversation.ignore_signal(
                f"clarification_answer ignored: {problem}", self.state.events
            )
            workflow.logger.warning("clarification_answer ignored: %s", problem)
            return
        self.state.conversation.answer = without_controls(str(answer)).strip()

    @workflow.update(name="answer_clarification")
    def answer_clarification(self, answer: str) -> str:
        self.state.conversation.answer = without_controls(answer).strip()
        return "answer accepted"

    @answer_clarification.validator
    def _validate_answer(self, answer: str) -> None:
        problem = answer_problem(self.state.conversation, answer)
        if problem:
            raise ValueError(problem)

    @workflow.signal(name="plan_review")
    def plan_review(self, payload: Any = None) -> None:
        """A person's word on the pending plan: a JSON object, e.g. `{"decision": "approve"}`."""
        self._take_review(ReviewTarget.PLAN, payload)

    @workflow.signal(name="report_review")
    def report_review(self, payload: Any = None) -> None:
        """A person's word on the pending report: a JSON object, e.g. `{"decision": "approve"}`."""
        self._take_review(ReviewTarget.REPORT, payload)

    @workflow.update(name="review")
    def review(self, payload: dict[str, Any]) -> str:
        """Answers whichever review is pending (`python -m starter review`); refuses what a
        signal would only record."""
        answer, _ = review_problem(self.state, None, payload)
        self.state.oversight.review_answer = answer
        if answer is not None and answer.steps:
            count = len(answer.steps)
            return f"approve accepted: your {count} step{'s' * (count != 1)} run as you wrote them"
        return f"{answer.decision.value if answer else '?'} accepted"

    @review.validator
    def _validate_review(self, payload: dict[str, Any]) -> None:
        _, problem = review_problem(self.state, None, payload)
        if problem:
            raise ValueError(problem)

    def _take_review(self, target: ReviewTarget, payload: Any) -> None:
        answer, problem = review_problem(self.state, target, payload)
        if problem:
            self.state.conversation.ignore_signal(
                f"{target.value}_review ignored: {problem}", self.state.events
            )
            workflow.logger.warning("%s_review ignored: %s", target.value, problem)
            return
        self.state.oversight.review_answer = answer

    @workflow.query(name="status")
    def status(self) -> ResearchStatus:
        return self.state.status()

    @workflow.query(name="events")
    def events(self, since: int = 0) -> list[Event]:
        """The events with `seq > since`, oldest first (gapless; a first seq above `since + 1`
        means the ones between were dropped: the workflow keeps the last 500)."""
        return self.state.events.after(since)
