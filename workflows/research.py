"""`DeepResearchWorkflow`: the orchestrator's state machine as one durable Temporal workflow.

It reads like seed 002's diagram: route (and maybe clarify) → coordinate → background → plan →
for each step: research, then reflect (CONTINUE / ADJUST / COMPLETE) → synthesize. Every LLM call,
search and page read is an activity; the workflow only decides. A crashed worker, a restarted
server or a user who answers the clarification question two days later loses nothing.

Failure policy, in one place (`_call`):
- an activity error that retrying cannot fix (non-retryable: a rejected key, a bad configuration)
  ends the research with that one-line reason;
- a role whose retries are spent takes its documented fallback (routing: research; reflection:
  CONTINUE while steps remain, else COMPLETE; ...) and the fallback is written into `notes`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception
from temporalio.exceptions import TimeoutError as ActivityTimeout

with workflow.unsafe.imports_passed_through():
    from activities import library, llm, search
    from workflows import citations, evidence, followup, verification
    from workflows.models import (
        ANSWER_MAX_CHARS,
        MODE_BUDGET_S,
        OBSERVATION_LIMIT,
        QUERY_MAX_CHARS,
        QUERY_MIN_CHARS,
        ROUTING_HISTORY,
        STEP_LIMITS,
        Claim,
        Clarification,
        Complexity,
        Critique,
        Depth,
        Evidence,
        LoopBack,
        Message,
        Passage,
        Plan,
        PlanStep,
        QueryMode,
        Reflection,
        ReflectionDecision,
        ResearchRequest,
        ResearchResult,
        ResearchStatus,
        RoutingDecision,
        Source,
        Speaker,
        Stage,
        Stats,
        StepStatus,
        TokenCount,
        Verdict,
        VerificationSummary,
    )
    from workflows.activity_models import (
        AboutQuestion,
        ClaimCheck,
        ClarifyInput,
        CoordinateInput,
        CritiqueInput,
        ObserveInput,
        ObserveOutput,
        PlanInput,
        ReadPageInput,
        ReflectInput,
        ReviseClaimsInput,
        RouteInput,
        SaveResearchInput,
        SearchHit,
        SearchInput,
        SynthesizeInput,
        Usage,
        VerifyClaimsInput,
        WriteQueriesInput,
    )
    from workflows.routing import Route, route_without_llm
    from workflows.stages import RESEARCH_STAGES, check_transition

MAX_PLAN_ITERATIONS = 3
#: Agents a step may ask for in a loop-back request (seed 003). Steps are run by the researcher.
LOOP_BACK_AGENTS = frozenset({"researcher"})
#: Non-retryable errors about one reply, not about the configuration: the role's fallback applies
#: instead of ending the research (a cut-off or filtered reply says nothing about the next call).
REPLY_PROBLEMS = frozenset({"LLMReplyTruncated", "LLMContentFiltered", "LLMRefused"})
#: Patch ids (workflow.patched): histories recorded before these features replay without them.
VERIFICATION_PATCH = "claim-verification"
LIBRARY_PATCH = "research-library"
#: Claims per judge call: enough to batch, few enough that one verdict list stays short.
CLAIMS_PER_JUDGE = 12
SEARCH_QUERIES_PER_STEP = 2
HITS_PER_QUERY = 5
PAGES_PER_STEP = 3

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
#: Per role: how long one attempt may take. Synthesis writes the longest text.
LLM_TIMEOUT = timedelta(seconds=90)
SYNTHESIS_TIMEOUT = timedelta(seconds=180)
SEARCH_TIMEOUT = timedelta(seconds=30)
SAVE_TIMEOUT = timedelta(seconds=60)
SAVE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=6,
)
READ_TIMEOUT = timedelta(seconds=45)
#: Activities heartbeat every 5 s while they wait (activities/heartbeats.py): a worker that dies mid-call
#: is noticed after this long instead of after the call's whole start-to-close timeout.
HEARTBEAT_TIMEOUT = timedelta(seconds=20)


@workflow.defn(name="DeepResearchWorkflow")
class DeepResearchWorkflow:
    def __init__(self) -> None:
        self._request = ResearchRequest(query="")
        self._stage = Stage.ROUTING
        self._stage_history: list[Stage] = [Stage.ROUTING]
        self._messages: list[Message] = []
        self._last_agent: str | None = None
        self._clarifications: list[Clarification] = []
        self._pending_question: str | None = None
        self._answer: str | None = None
        self._ignored_signals: list[str] = []
        self._routes: list[Route] = []
        self._depth = Depth.AUTO
        self._complexity: Complexity | None = None
        self._background: list[Passage] = []
        self._plan: Plan | None = None
        self._plan_iterations = 0
        self._current_step_index = 0
        self._reflections: list[Reflection] = []
        self._loop_backs: list[LoopBack] = []
        self._sources: list[Source] = []
        self._read_urls: set[str] = set()
        #: Pages that could not be read: never fetched again, never a source.
        self._unreadable_urls: set[str] = set()
        self._evidence: list[Evidence] = []
        self._verification: VerificationSummary | None = None
        self._critique: Critique | None = None
        self._notes: list[str] = []
        self._stats = Stats()
        self._engine = ""

    # --- the research, top to bottom ------------------------------------------------------------

    @workflow.run
    async def run(self, request: ResearchRequest) -> ResearchResult:
        self._request = request
        self._depth = request.depth
        started = workflow.now()
        query = request.query.strip()
        if not QUERY_MIN_CHARS <= len(query) <= QUERY_MAX_CHARS:
            raise ApplicationError(
                f"the question must be {QUERY_MIN_CHARS} to {QUERY_MAX_CHARS} characters, got {len(query)}",
                type="InvalidRequest",
                non_retryable=True,
            )
        self._messages = [*request.history, Message(role=Speaker.USER, content=query)]
        self._show_progress()

        cancelled = False
        try:
            await self._converse()
            await self._research_within_budget()
        except asyncio.CancelledError:
            self._notes.append("The research was cancelled; the report covers what was gathered until then.")
            if self._stage not in RESEARCH_STAGES:
                self._enter(Stage.CANCELLED)
                return self._result(f"# {query}\n\nThe research was cancelled before it began.\n", [], started)
            cancelled = True
        report, claims = await self._synthesize()
        if workflow.patched(VERIFICATION_PATCH):
            report, claims = await self._check(report, claims, cancelled)
        self._enter(Stage.CANCELLED if cancelled else Stage.COMPLETED)
        result = self._result(report, claims, started)
        if workflow.patched(LIBRARY_PATCH):
            await self._save(result, started)
        return result

    async def _converse(self) -> None:
        """Orchestrator routing: ask back while the question is too vague, within the limit."""
        while True:
            self._enter(Stage.ROUTING)
            route = await self._route()
            self._routes.append(route)
            if route.decision is RoutingDecision.RESEARCH:
                return
            self._enter(Stage.CLARIFYING)
            asked = await self._call(
                llm.clarify, ClarifyInput(messages=self._messages[-ROUTING_HISTORY:]), "clarify"
            )
            if asked is None or not asked.question.strip():
                self._notes.append("A clarification question could not be written; researched the question as asked.")
                return
            if not await self._await_answer(asked.question.strip()):
                return

    async def _route(self) -> Route:
        shortcut = route_without_llm(
            self._messages,
            len(self._clarifications),
            self._request.max_clarifications,
            self._last_agent,
            self._request.reply_shortcut,
        )
        self._last_agent = "orchestrator"
        if shortcut is not None:
            return shortcut
        decided = await self._call(
            llm.route,
            RouteInput(
                messages=self._messages[-ROUTING_HISTORY:],
                clarification_count=len(self._clarifications),
                max_clarifications=self._request.max_clarifications,
                iteration=len(self._routes),
            ),
            "route",
        )
        if decided is None:
            return Route(RoutingDecision.RESEARCH, "Routing failed after its retries: research by default.", "fallback")
        return Route(decided.decision, decided.reasoning, "llm")

    async def _await_answer(self, question: str) -> bool:
        """Wait durably for the `clarification_answer` signal; False when the wait timed out."""
        self._clarifications.append(Clarification(question=question))
        self._messages.append(Message(role=Speaker.ASSISTANT, content=question))
        self._pending_question = question
        self._answer = None
        self._last_agent = "clarification"
        self._enter(Stage.AWAITING_ANSWER)
        timeout = self._request.clarification_timeout_s
        try:
            await workflow.wait_condition(lambda: self._answer is not None, timeout=timedelta(seconds=timeout))
        except asyncio.TimeoutError:
            self._pending_question = None
            self._notes.append(
                f"The clarification question was not answered within {_duration(timeout)}; "
                "the research went ahead with the question as asked."
            )
            return False
        answer = self._answer or ""
        self._pending_question = None
        self._clarifications[-1].answer = answer
        self._messages.append(Message(role=Speaker.USER, content=answer))
        return True

    async def _research_within_budget(self) -> None:
        """Run the research; when the mode's time budget runs out, a durable timer stops it."""
        budget = self._request.time_budget_s or MODE_BUDGET_S[self._request.mode]
        research = asyncio.create_task(self._research())
        try:
            if budget is None:
                await research
                return
            done, _ = await workflow.wait([research], timeout=budget)
        except asyncio.CancelledError:
            await _stop(research)
            raise
        if research in done:
            research.result()
            return
        await _stop(research)
        self._notes.append(
            f"The {self._request.mode.value} mode's time budget of {_duration(budget)} ran out; "
            "the report covers the steps finished by then."
        )

    async def _research(self) -> None:
        self._enter(Stage.COORDINATING)
        direct = await self._coordinate()
        if direct:
            self._enter(Stage.BACKGROUND)
            await self._investigate_background(as_sources=True)
            return
        if self._request.mode is not QueryMode.WEB:
            self._enter(Stage.BACKGROUND)
            await self._investigate_background(as_sources=False)
        self._enter(Stage.PLANNING)
        await self._make_plan(feedback=[])
        while (index := self._next_step()) is not None:
            self._enter(Stage.RESEARCHING)
            findings = await self._research_step(index)
            self._handle_loop_back(index, findings)
            self._enter(Stage.REFLECTING)
            reflection = await self._reflect()
            if reflection.decision is ReflectionDecision.COMPLETE:
                self._skip_pending("the reflector judged the research complete")
                return
            if reflection.decision is ReflectionDecision.ADJUST:
                self._enter(Stage.PLANNING)
                await self._make_plan(feedback=reflection.suggested_changes or [reflection.reasoning])

    # --- stages -------------------------------------------------------------------------------

    async def _coordinate(self) -> bool:
        """Classify the question; True when it gets a direct answer instead of a research plan."""
        mode = self._request.mode
        if mode is QueryMode.WEB:
            self._depth = Depth.LIGHT
            return False
        if mode is QueryMode.SIMPLE:
            self._depth = Depth.LIGHT
            return True
        classification = await self._call(
            llm.coordinate,
            CoordinateInput(**self._about(), messages=self._messages[-ROUTING_HISTORY:]),
            "coordinate",
        )
        if classification is None:
            if self._depth is Depth.AUTO:
                self._depth = Depth.MEDIUM
            return False
        self._complexity = classification.complexity
        if self._depth is Depth.AUTO:
            if classification.is_simple:
                self._depth = Depth.LIGHT
                return True
            self._depth = (
                classification.recommended_depth
                if classification.recommended_depth is not Depth.AUTO
                else Depth.MEDIUM
            )
        return False

    async def _investigate_background(self, as_sources: bool) -> None:
        """A quick search before planning (no page reads). For a direct answer, its hits are the sources."""
        queries = await self._queries(WriteQueriesInput(**self._about(), max_queries=2))
        hits = await self._search_all(queries)
        self._background = []
        for hit in hits[:PAGES_PER_STEP * 2]:
            source_id = self._add_source(hit.url, hit.title, hit.provider) if as_sources else 0
            self._background.append(Passage(source_id=source_id, title=hit.title, url=hit.url, text=hit.snippet))

    async def _make_plan(self, feedback: list[str]) -> None:
        low, high = self._step_limits()
        completed = [s for s in (self._plan.steps if self._plan else []) if s.status is StepStatus.COMPLETED]
        self._plan_iterations += 1
        background = "\n".join(f"- {p.title}: {p.text}" for p in self._background)
        draft = await self._call(
            llm.plan,
            PlanInput(
                **self._about(),
                background=background,
                completed_steps=completed,
                feedback=feedback,
                min_steps=max(0, low - len(completed)),
                max_steps=max(0, high - len(completed)),
                iteration=self._plan_iterations,
            ),
            "plan",
        )
        room = max(0, high - len(completed))
        new_steps = [
            PlanStep(title=s.title.strip(), description=s.description.strip())
            for s in (draft.steps if draft else [])
            if s.title.strip() and s.title.strip().lower() not in {c.title.lower() for c in completed}
        ][:room]
        if not new_steps and not completed:
            new_steps = [PlanStep(title=self._request.query.strip()[:200], description="Research the question as asked.")]
        title = draft.title if draft and draft.title.strip() else f"Research: {self._request.query.strip()[:80]}"
        self._plan = Plan(
            title=title,
            thought=draft.thought if draft else "The planner was unavailable; one step researches the question as asked.",
            iteration=self._plan_iterations,
            steps=[*completed, *new_steps],
        )

    async def _research_step(self, index: int) -> ObserveOutput:
        assert self._plan is not None
        step = self._plan.steps[index]
        step.status = StepStatus.IN_PROGRESS
        self._current_step_index = index
        self._show_progress()
        queries = await self._queries(WriteQueriesInput(**self._about(), step=step, max_queries=SEARCH_QUERIES_PER_STEP))
        hits = await self._search_all(queries)
        passages = await self._read_best(hits, focus=f"{step.title}. {step.description} {self._research_query()}")
        findings = await self._call(
            llm.observe, ObserveInput(**self._about(), step=step, passages=passages), "observe"
        )
        if findings is None:
            findings = ObserveOutput(observation="The researcher could not write an observation for this step.", source_ids=[])
        known = {p.source_id for p in passages}
        step.observation = findings.observation[:OBSERVATION_LIMIT]
        step.source_ids = [n for n in findings.source_ids if n in known]
        self._evidence = evidence.merge(
            self._evidence, evidence.supporting_evidence(step.observation, step.source_ids, passages)
        )
        step.status = StepStatus.COMPLETED
        return findings

    def _handle_loop_back(self, index: int, findings: ObserveOutput) -> None:
        """A step that needs more work asks for it (seed 003). The request lives only in this
        step's findings, so it is cleared by construction once handled."""
        if not findings.needs_more or self._plan is None:
            return
        agent = (findings.suggested_agent or "").strip().lower()
        query = (findings.suggested_query or "").strip()
        _, high = self._step_limits()
        if agent not in LOOP_BACK_AGENTS:
            reason = f"unknown agent {agent or '(none)'!r}; known: {', '.join(sorted(LOOP_BACK_AGENTS))}"
        elif not query:
            reason = "no query was suggested"
        elif len(self._plan.steps) >= high:
            reason = f"the plan already has the {self._depth.value} depth's maximum of {high} steps"
        elif any(s.title.lower() == query.lower() for s in self._plan.steps):
            reason = "a step with that query is already in the plan"
        else:
            reason = "appended as a new step"
            self._plan.steps.append(
                PlanStep(title=query[:200], description=f"Requested by step {index + 1}: {self._plan.steps[index].title}", origin="loop_back")
            )
        accepted = reason == "appended as a new step"
        if not accepted:
            workflow.logger.warning("Loop-back request after step %d refused: %s", index + 1, reason)
        self._loop_backs.append(LoopBack(after_step=index + 1, agent=agent, query=query, accepted=accepted, reason=reason))

    async def _reflect(self) -> Reflection:
        assert self._plan is not None
        low, _ = self._step_limits()
        done = sum(1 for s in self._plan.steps if s.status is StepStatus.COMPLETED)
        pending = self._next_step() is not None
        decided = await self._call(
            llm.reflect,
            ReflectInput(
                **self._about(),
                plan=self._plan,
                completed_steps=done,
                min_steps=low,
                sources_count=len(self._sources),
            ),
            "reflect",
        )
        if decided is None:
            decision = ReflectionDecision.CONTINUE if pending else ReflectionDecision.COMPLETE
            reflection = Reflection(decision=decision, reasoning="Reflection failed after its retries: fallback.")
        else:
            reflection = Reflection(
                decision=decided.decision, reasoning=decided.reasoning, suggested_changes=decided.suggested_changes
            )
        if reflection.decision is ReflectionDecision.COMPLETE and done < low:
            reflection = Reflection(
                decision=ReflectionDecision.CONTINUE if pending else ReflectionDecision.ADJUST,
                reasoning=f"COMPLETE refused: {done} of the {self._depth.value} depth's minimum {low} steps done. "
                + reflection.reasoning,
                suggested_changes=reflection.suggested_changes or [f"{low - done} more step(s) on uncovered aspects"],
            )
        if reflection.decision is ReflectionDecision.ADJUST and self._plan_iterations >= MAX_PLAN_ITERATIONS:
            reflection = Reflection(
                decision=ReflectionDecision.CONTINUE if pending else ReflectionDecision.COMPLETE,
                reasoning=f"ADJUST counted as {'CONTINUE' if pending else 'COMPLETE'}: "
                f"the plan was already made {MAX_PLAN_ITERATIONS} times. " + reflection.reasoning,
            )
        if reflection.decision is ReflectionDecision.CONTINUE and not pending:
            # Nothing left to research: replan while below the minimum and plans remain, else finish.
            short = done < low and self._plan_iterations < MAX_PLAN_ITERATIONS
            reflection = reflection.model_copy(
                update={"decision": ReflectionDecision.ADJUST if short else ReflectionDecision.COMPLETE}
            )
        self._reflections.append(reflection)
        return reflection

    async def _synthesize(self) -> tuple[str, list[Claim]]:
        self._enter(Stage.SYNTHESIZING)
        steps = self._plan.steps if self._plan else []
        try:
            report = await self._call(
                llm.synthesize,
                SynthesizeInput(
                    **self._about(),
                    plan=self._plan,
                    sources=self._sources,
                    passages=self._background if self._plan is None else [],
                    notes=self._notes,
                    evidence=self._evidence,
                ),
                "synthesize",
                timeout=SYNTHESIS_TIMEOUT,
            )
        except asyncio.CancelledError:
            self._notes.append("The research was cancelled while the report was being written.")
            report = None
        if report is None:
            self._notes.append("The synthesizer was unavailable; the report lists the step observations as found.")
            return citations.fallback_report(self._request.query.strip(), steps, self._sources, self._notes), []
        self._engine = report.engine
        markdown, dropped = citations.drop_unresolved(report.markdown, self._sources)
        if dropped:
            self._notes.append(f"Removed citations to unknown sources: {', '.join(f'[{n}]' for n in dropped)}.")
        return markdown, citations.keep_resolved_claims(report.claims, self._sources)

    # --- trust: verified claims, the critic, the library --------------------------------------

    async def _check(self, report: str, claims: list[Claim], cancelled: bool) -> tuple[str, list[Claim]]:
        """Verify every cited sentence against its evidence, then let the critic score the report.

        A cancelled research ends now rather than paying for checks; its claims stay unverified.
        """
        if not self._request.verify or cancelled:
            why = "verification was turned off" if not self._request.verify else "the research was cancelled"
            self._verification = VerificationSummary(enabled=False, method=why, claims=len(claims),
                                                     unverified=len(claims))
            return report.rstrip() + f"\n\n*Claims were not verified ({why}).*\n", claims
        report, claims = await self._verify(report)
        self._critique = await self._critic(report)
        return report, claims

    async def _verify(self, report: str) -> tuple[str, list[Claim]]:
        """Seed 002's citation-aware synthesis, second half: each cited sentence becomes a claim;
        a cheap lexical check catches citations pointing at unrelated sources, the judge decides
        the rest; unsupported sentences are rewritten once and re-checked, and what is still
        unsupported leaves the report. Partly supported sentences stay, marked."""
        sentences = verification.cited_sentences(report)
        texts = [s.text for s in sentences]
        claims = [Claim(text=s.claim, source_ids=list(s.source_ids)) for s in sentences]
        method = await self._judge(claims, range(len(claims)))
        unsupported = [i for i, c in enumerate(claims) if c.verdict is Verdict.UNSUPPORTED]
        if unsupported:
            rewrites = await self._revise(claims, unsupported)
            for i, sentence in rewrites.items():
                report = verification.replace_sentence(report, texts[i], sentence)
                texts[i] = sentence
            await self._judge(claims, list(rewrites))
        for i, claim in enumerate(claims):
            if claim.verdict is Verdict.UNSUPPORTED:
                report = verification.remove_sentence(report, texts[i])
                claim.removed = True
            elif claim.verdict is Verdict.PARTIAL:
                report = verification.mark_partial(report, texts[i])
        still_cited = {n for sentence in verification.cited_sentences(report) for n in sentence.source_ids}
        report = verification.drop_unused_sources(report, still_cited)
        self._verification = verification.summarize(claims, method=method)
        return report.rstrip() + "\n\n" + verification.verification_note(self._verification) + "\n", claims

    async def _judge(self, claims: list[Claim], which: Iterable[int]) -> str:
        """Verdicts for `claims[i]`, i in `which`: the lexical check first, the judge for the rest.
        Returns the method, as the summary names it."""
        pool = self._evidence_pool()
        undecided: list[int] = []
        for i in which:
            claim = claims[i]
            check = verification.lexical_check(claim.text, [e.text for e in pool if e.source_id in claim.source_ids])
            if check.verdict is Verdict.UNSUPPORTED:
                claims[i] = claim.model_copy(update={"verdict": Verdict.UNSUPPORTED, "reason": check.reason,
                                                     "checked_by": "lexical"})
            else:
                undecided.append(i)
        batches = [undecided[k:k + CLAIMS_PER_JUDGE] for k in range(0, len(undecided), CLAIMS_PER_JUDGE)]
        answers = await asyncio.gather(*(
            self._call(llm.verify_claims, VerifyClaimsInput(
                **self._about(),
                claims=[ClaimCheck(index=i, text=claims[i].text, source_ids=claims[i].source_ids) for i in batch],
                evidence=[e for e in pool if any(e.source_id in claims[i].source_ids for i in batch)],
                sources=[s for s in self._sources if any(s.id in claims[i].source_ids for i in batch)],
            ), "verify_claims")
            for batch in batches
        ))
        method = "lexical"
        for answer in answers:
            if answer is None:
                continue
            method = "lexical" if answer.checked_by == "lexical" else "lexical+judge"
            for verdict in answer.verdicts:
                claims[verdict.index] = claims[verdict.index].model_copy(update={
                    "verdict": Verdict(verdict.verdict.value), "reason": verdict.reason[:500],
                    "checked_by": answer.checked_by})
        return method

    async def _revise(self, claims: list[Claim], which: list[int]) -> dict[int, str]:
        """Rewrite unsupported sentences once (bounded: a rewrite is checked, never rewritten again).
        A rewrite must be one sentence citing only what the claim cited. Updates `claims`;
        returns the new sentence per rewritten claim."""
        pool = self._evidence_pool()
        answer = await self._call(llm.revise_claims, ReviseClaimsInput(
            **self._about(),
            claims=[ClaimCheck(index=i, text=claims[i].text, source_ids=claims[i].source_ids) for i in which],
            reasons=[claims[i].reason for i in which],
            evidence=[e for e in pool if any(e.source_id in claims[i].source_ids for i in which)],
        ), "revise_claims")
        rewritten: dict[int, str] = {}
        for rewrite in answer.rewrites if answer else []:
            parsed = verification.cited_sentences(rewrite.text)
            i = rewrite.index
            if i not in which or i in rewritten or len(parsed) != 1:
                continue
            if not set(parsed[0].source_ids) <= set(claims[i].source_ids):
                continue
            claims[i] = Claim(text=parsed[0].claim, source_ids=list(parsed[0].source_ids), original=claims[i].text)
            rewritten[i] = rewrite.text.strip()
        return rewritten

    async def _critic(self, report: str) -> Critique | None:
        assert self._verification is not None
        steps = self._plan.steps if self._plan else []
        scored = await self._call(llm.critique, CritiqueInput(
            **self._about(),
            report_markdown=report,
            verification=self._verification,
            sources_count=len(self._sources),
            steps_completed=sum(1 for s in steps if s.status is StepStatus.COMPLETED),
            steps_planned=len(steps),
        ), "critique")
        if scored is None:
            return None
        return Critique.model_validate(scored.model_dump(exclude={"usage"}))

    def _evidence_pool(self) -> list[Evidence]:
        """The evidence a claim may rest on: the pool gathered by the steps, and for a direct answer
        (no plan) the search snippets that were its sources."""
        direct = [Evidence(source_id=p.source_id, position=0, text=p.text) for p in self._background if p.source_id]
        return [*self._evidence, *direct]

    async def _save(self, result: ResearchResult, started: datetime) -> None:
        """Keep the research in the library. A library that cannot be reached costs the user the
        stored copy, not the research: the result still returns, with a note."""
        info = workflow.info()
        saved = await self._call(library.save_research, SaveResearchInput(
            workflow_id=info.workflow_id, run_id=info.run_id, started_at=started,
            finished_at=workflow.now(), result=result,
        ), "save_research", timeout=SAVE_TIMEOUT, retry=SAVE_RETRY, isolated=True)
        if saved is None:
            result.notes.append("The research could not be saved to the research library; "
                                "`python -m starter result ID` still shows it while Temporal keeps it.")

    # --- research tools -------------------------------------------------------------------------

    async def _queries(self, request: WriteQueriesInput) -> list[str]:
        written = await self._call(llm.write_queries, request, "write_queries")
        queries = [q.strip() for q in (written.queries if written else []) if q.strip()]
        fallback = f"{request.step.title} {request.topic_text()}" if request.step else request.topic_text()
        return queries[: request.max_queries] or [fallback[:400]]

    async def _search_all(self, queries: list[str]) -> list[SearchHit]:
        """Search every query concurrently; hits merged in rank order, one per URL."""
        results = await asyncio.gather(
            *(
                self._call(search.search, SearchInput(query=q, max_results=HITS_PER_QUERY), "search",
                           timeout=SEARCH_TIMEOUT, retry=SEARCH_RETRY)
                for q in queries
            )
        )
        self._stats.searches += len(queries)
        merged: list[SearchHit] = []
        seen: set[str] = set()
        for rank in range(HITS_PER_QUERY):
            for result in results:
                if result is not None and rank < len(result.hits) and result.hits[rank].url not in seen:
                    seen.add(result.hits[rank].url)
                    merged.append(result.hits[rank])
        return merged

    async def _read_best(self, hits: list[SearchHit], focus: str) -> list[Passage]:
        """Read the best unread sources concurrently; a page that fails is skipped, never fatal.
        A URL already read in this research is not fetched again: its snippet stands in."""
        fresh = [h for h in hits if h.url not in self._read_urls][:PAGES_PER_STEP]
        seen_before = [h for h in hits if h.url in self._read_urls and h.url not in self._unreadable_urls][:PAGES_PER_STEP]
        self._read_urls.update(h.url for h in fresh)
        pages = await asyncio.gather(
            *(
                self._call(search.read_page, ReadPageInput(url=h.url, focus=focus[:1000]), "read_page",
                           timeout=READ_TIMEOUT, retry=SEARCH_RETRY, isolated=True)
                for h in fresh
            )
        )
        passages = []
        for hit, page in zip(fresh, pages):
            self._stats.pages_fetched += 1
            if page is None or page.error or not page.text.strip():
                workflow.logger.info("Skipped %s: %s", hit.url, page.error if page else "read failed")
                self._unreadable_urls.add(hit.url)
                continue
            source_id = self._add_source(hit.url, page.title or hit.title, hit.provider)
            passages.append(Passage(source_id=source_id, title=page.title or hit.title, url=hit.url, text=page.text))
        for hit in seen_before:
            source_id = self._add_source(hit.url, hit.title, hit.provider)
            passages.append(Passage(source_id=source_id, title=hit.title, url=hit.url, text=hit.snippet))
        return passages

    def _add_source(self, url: str, title: str, provider: str) -> int:
        for source in self._sources:
            if source.url == url:
                return source.id
        source = Source(id=len(self._sources) + 1, url=url, title=title or url, provider=provider)
        self._sources.append(source)
        return source.id

    async def _call(
        self,
        activity: Any,
        arg: BaseModel,
        role: str,
        *,
        timeout: timedelta = LLM_TIMEOUT,
        retry: RetryPolicy = LLM_RETRY,
        isolated: bool = False,
    ) -> Any:
        """Run one activity; None when its retries are spent (the caller applies its fallback).

        `isolated`: a failure concerns only this item (one page) and is expected, so it is never
        fatal and not noted; the caller simply goes on without it.
        """
        is_llm = activity in llm.LLM_ACTIVITIES
        try:
            result = await workflow.execute_activity(
                activity, arg, start_to_close_timeout=timeout, heartbeat_timeout=HEARTBEAT_TIMEOUT,
                retry_policy=retry,
            )
        except ActivityError as err:
            if is_cancelled_exception(err):
                raise asyncio.CancelledError() from err
            cause = err.cause
            if is_llm:
                self._account(role, _usage_of_failure(cause), succeeded=False)
            message = cause.message if isinstance(cause, ApplicationError) else str(cause or err)
            if (
                isinstance(cause, ApplicationError)
                and cause.non_retryable
                and not isolated
                and cause.type not in REPLY_PROBLEMS
            ):
                raise ApplicationError(f"{role}: {message}", type=cause.type, non_retryable=True) from None
            if not isolated:
                self._notes.append(f"{role} failed ({message.splitlines()[0][:200]}); a fallback was used.")
            return None
        if is_llm:
            self._account(role, getattr(result, "usage", None), succeeded=True)
        return result

    def _account(self, role: str, usage: Usage | None, *, succeeded: bool) -> None:
        """Add what one role call cost over all its attempts: completions served, retries, tokens.

        A result without a usage record (an old history, a test double) counts as one call.
        """
        stats = self._stats
        if usage is None:
            if not succeeded:
                return
            usage = Usage(requests=1)
        stats.llm_calls += usage.requests
        stats.llm_calls_by_role[role] = stats.llm_calls_by_role.get(role, 0) + usage.requests
        if usage.attempt > 1:
            stats.llm_retries += usage.attempt - 1
            stats.llm_retries_by_role[role] = stats.llm_retries_by_role.get(role, 0) + usage.attempt - 1
        stats.prompt_tokens += usage.prompt_tokens
        stats.completion_tokens += usage.completion_tokens
        if usage.prompt_tokens or usage.completion_tokens:
            tokens = stats.tokens_by_role.setdefault(role, TokenCount())
            tokens.prompt_tokens += usage.prompt_tokens
            tokens.completion_tokens += usage.completion_tokens

    # --- bookkeeping ----------------------------------------------------------------------------

    def _about(self) -> dict[str, Any]:
        """What the research is about, as the typed fields of `AboutQuestion`: the question as
        asked, what a follow-up refers to, and the user's clarifications."""
        query = self._request.query.strip()
        return {
            "query": query,
            "follows_up": followup.context(query, self._request.history),
            "clarifications": [c.answer for c in self._clarifications if c.answer],
        }

    def _research_query(self) -> str:
        return AboutQuestion(**self._about()).topic_text()

    def _step_limits(self) -> tuple[int, int]:
        """The plan's minimum and maximum step counts: web mode is one step, else the depth's."""
        if self._request.mode is QueryMode.WEB:
            return 1, 1
        return STEP_LIMITS[self._depth if self._depth is not Depth.AUTO else Depth.MEDIUM]

    def _next_step(self) -> int | None:
        """Routing priority after a step (seed 003): in-progress, then pending, then done."""
        if self._plan is None:
            return None
        for wanted in (StepStatus.IN_PROGRESS, StepStatus.PENDING):
            for i, step in enumerate(self._plan.steps):
                if step.status is wanted:
                    return i
        return None

    def _skip_pending(self, why: str) -> None:
        for step in self._plan.steps if self._plan else []:
            if step.status in (StepStatus.PENDING, StepStatus.IN_PROGRESS):
                step.status = StepStatus.SKIPPED
                step.description = f"{step.description} (skipped: {why})".strip()

    def _enter(self, stage: Stage) -> None:
        if stage is self._stage:
            return
        check_transition(self._stage, stage)
        self._stage = stage
        self._stage_history.append(stage)
        if stage in (Stage.SYNTHESIZING, Stage.CANCELLED) and self._plan:
            self._skip_pending("the research ended before this step")
        workflow.upsert_memo({"stage": stage.value})
        self._show_progress()

    def _show_progress(self) -> None:
        """What the Temporal Web UI shows under "Current details"."""
        lines = [f"**Stage:** {self._stage.value}"]
        if self._pending_question:
            lines.append(f"**Waiting for an answer:** {self._pending_question}")
            lines.append('Answer with signal `clarification_answer` and a JSON string, e.g. `"the 2024 paper"`.')
        if self._plan:
            done = sum(1 for s in self._plan.steps if s.status is StepStatus.COMPLETED)
            lines.append(f"**Plan** (iteration {self._plan_iterations}): {done}/{len(self._plan.steps)} steps done")
            for i, step in enumerate(self._plan.steps):
                lines.append(f"{i + 1}. [{step.status.value}] {step.title}")
        lines.append(f"**Sources:** {len(self._sources)}")
        if self._reflections:
            last = self._reflections[-1]
            lines.append(f"**Last reflection:** {last.decision.value}: {last.reasoning[:200]}")
        workflow.set_current_details("\n\n".join(lines))

    def _result(self, report: str, claims: list[Claim], started: datetime) -> ResearchResult:
        self._stats.duration_s = round((workflow.now() - started).total_seconds(), 3)
        return ResearchResult(
            query=self._request.query.strip(),
            outcome=self._stage,
            report_markdown=report,
            sources=self._sources,
            claims=claims,
            clarifications=self._clarifications,
            plan=self._plan,
            plan_iterations=self._plan_iterations,
            reflections=self._reflections,
            stage_history=self._stage_history,
            stats=self._stats,
            depth=self._depth,
            mode=self._request.mode,
            engine=self._engine,
            loop_backs=self._loop_backs,
            evidence=self._evidence,
            verification=self._verification,
            critique=self._critique,
            follow_up_of=self._request.follow_up_of,
            notes=self._notes,
        )

    # --- the outside world talks to the research ------------------------------------------------

    @workflow.signal(name="clarification_answer")
    def clarification_answer(self, answer: Any = None) -> None:
        """The user's answer, as a JSON string. A signal when nothing is pending, or one that is
        not a non-empty string, is recorded in `ignored_signals` and otherwise ignored."""
        problem = self._answer_problem(answer)
        if problem:
            self._ignored_signals.append(f"clarification_answer ignored: {problem}")
            workflow.logger.warning("clarification_answer ignored: %s", problem)
            return
        self._answer = str(answer).strip()

    @workflow.update(name="answer_clarification")
    def answer_clarification(self, answer: str) -> str:
        self._answer = answer.strip()
        return "answer accepted"

    @answer_clarification.validator
    def _validate_answer(self, answer: str) -> None:
        problem = self._answer_problem(answer)
        if problem:
            raise ValueError(problem)

    def _answer_problem(self, answer: Any) -> str | None:
        if self._pending_question is None or self._answer is not None:
            return "no clarification question is pending"
        if not isinstance(answer, str):
            return f"the answer must be a JSON string, got {type(answer).__name__}"
        if not answer.strip():
            return "the answer is empty"
        if len(answer) > ANSWER_MAX_CHARS:
            return f"the answer is longer than {ANSWER_MAX_CHARS} characters"
        return None

    @workflow.query(name="status")
    def status(self) -> ResearchStatus:
        return ResearchStatus(
            query=self._request.query.strip(),
            stage=self._stage,
            stage_history=self._stage_history,
            pending_question=self._pending_question,
            clarification_count=len(self._clarifications),
            plan=self._plan,
            current_step_index=self._current_step_index,
            plan_iterations=self._plan_iterations,
            reflections=self._reflections,
            sources_count=len(self._sources),
            depth=self._depth,
            mode=self._request.mode,
            loop_backs=self._loop_backs,
            ignored_signals=self._ignored_signals,
            notes=self._notes,
        )


def _usage_of_failure(cause: BaseException | None) -> Usage | None:
    """What a failed LLM activity spent: its failure's details (retries ran out or the error was
    permanent) or, when it timed out, its last heartbeat's."""
    if isinstance(cause, ApplicationError):
        details = cause.details
    elif isinstance(cause, ActivityTimeout):
        details = cause.last_heartbeat_details
    else:
        return None
    for item in reversed(list(details or ())):
        if isinstance(item, dict):
            try:
                return Usage.model_validate(item)
            except ValueError:
                continue
    return None


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


def _duration(seconds: float) -> str:
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{int(seconds // 3600)} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{seconds:g} s"
