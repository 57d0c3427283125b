"""What the user sees while a research runs: progress lines, the status summary, the prompt.

Everything here writes to stderr, so stdout carries only the report (or the JSON result).
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import threading

from workflows.models import ResearchResult, ResearchStatus, Stage


def say(line: str = "") -> None:
    print(line, file=sys.stderr, flush=True)


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def step_line(status: ResearchStatus) -> str | None:
    """`step i/N: title` for the step being worked on, if any."""
    plan = status.plan
    if plan is None or not plan.steps or status.current_step_index >= len(plan.steps):
        return None
    index = max(status.current_step_index, 0)
    return f"step {index + 1}/{len(plan.steps)}: {plan.steps[index].title}"


class ProgressView:
    """Prints a line for each change between two `status` snapshots."""

    def __init__(self) -> None:
        self.stages_seen = 0
        self.step: str | None = None
        self.plan_key: tuple[int, int] | None = None
        self.sources = 0
        self.reflections = 0
        self.notes = 0
        self.loop_backs = 0

    def show(self, status: ResearchStatus) -> None:
        self._stages([s.value for s in status.stage_history] or [status.stage.value])
        if status.plan is not None:
            key = (status.plan_iterations, len(status.plan.steps))
            if key != self.plan_key:
                self.plan_key = key
                say(f"  plan (iteration {status.plan_iterations}): {status.plan.title}, "
                    f"{len(status.plan.steps)} steps")
        step = step_line(status) if status.stage == Stage.RESEARCHING else None
        if step and step != self.step:
            say(f"  {step}")
        self.step = step or self.step
        if status.sources_count != self.sources:
            self.sources = status.sources_count
            say(f"  sources so far: {self.sources}")
        for reflection in status.reflections[self.reflections:]:
            say(f"  reflection: {reflection.decision.value}: {_clip(reflection.reasoning)}")
        self.reflections = len(status.reflections)
        for loop_back in status.loop_backs[self.loop_backs:]:
            verdict = "accepted" if loop_back.accepted else "declined"
            say(f"  loop-back after step {loop_back.after_step} ({verdict}): "
                f"{_clip(loop_back.query, 100)}")
        self.loop_backs = len(status.loop_backs)
        for note in status.notes[self.notes:]:
            say(f"  note: {_clip(note)}")
        self.notes = len(status.notes)

    def finish(self, result: ResearchResult) -> None:
        """Show the stages the polling missed, then a one-line summary."""
        self._stages([s.value for s in result.stage_history])
        for note in result.notes[self.notes:]:
            say(f"  note: {_clip(note)}")
        stats = result.stats
        say(f"{result.outcome.value}: {len(result.sources)} sources, {stats.llm_calls} LLM calls, "
            f"{stats.searches} searches, {stats.pages_fetched} pages, {stats.duration_s:.1f}s "
            f"(engine {result.engine or '?'}){_spent(result)}")

    def _stages(self, history: list[str]) -> None:
        for stage in history[self.stages_seen:]:
            say(f"» {stage}")
        self.stages_seen = max(self.stages_seen, len(history))


def _spent(result: ResearchResult) -> str:
    """Tokens and cost, against their budgets when the research had some."""
    stats, budget = result.stats, result.budget
    tokens = stats.prompt_tokens + stats.completion_tokens
    if not tokens:
        return ""
    text = f", {tokens:,} tokens"
    if budget and budget.max_tokens:
        text += f" of {budget.max_tokens:,}"
    if stats.cost_usd is not None and stats.cost_usd > 0:
        text += f", ${stats.cost_usd:.4f}"
        if budget and budget.max_cost_usd:
            text += f" of ${budget.max_cost_usd:g}"
    if budget and budget.exhausted:
        text += f" ({budget.exhausted.value} budget spent)"
    return text


def status_summary(workflow_id: str, status: ResearchStatus) -> str:
    lines = [
        f"research {workflow_id}: {status.stage.value}",
        f"  question: {_clip(status.query)}",
        f"  depth {status.depth.value}, mode {status.mode.value}, "
        f"stages: {' > '.join(s.value for s in status.stage_history) or '-'}",
    ]
    if status.pending_question:
        lines.append(f"  waiting for an answer: {status.pending_question}")
        lines.append(f"    answer with: {answer_command(workflow_id)}")
    if status.pending_review:
        lines.append(f"  waiting for a review of the {status.pending_review.value} (round {status.review_rounds})")
        lines.append(f"    review with: python -m starter review {shlex.quote(workflow_id)} "
                     "(--approve | --feedback TEXT | --steps FILE | --cancel)")
    if status.plan is not None:
        lines.append(f"  plan (iteration {status.plan_iterations}): {status.plan.title}")
        step = step_line(status)
        if step:
            lines.append(f"  {step}")
        done = sum(1 for s in status.plan.steps if s.status.value in ("completed", "skipped"))
        lines.append(f"  steps done: {done}/{len(status.plan.steps)}")
    lines.append(f"  sources: {status.sources_count}, clarifications: {status.clarification_count}")
    for reflection in status.reflections:
        lines.append(f"  reflection: {reflection.decision.value}: {_clip(reflection.reasoning)}")
    for note in status.notes:
        lines.append(f"  note: {_clip(note)}")
    return "\n".join(lines)


def answer_command(workflow_id: str) -> str:
    return f'python -m starter answer {shlex.quote(workflow_id)} "<your answer>"'


def result_command(workflow_id: str) -> str:
    return f"python -m starter result {shlex.quote(workflow_id)}"


# --- reading an answer without blocking the event loop -----------------------------------------

def read_line() -> asyncio.Future[str | None]:
    """One line from the terminal (None at end of input), read in a daemon thread.

    Not `asyncio.to_thread`: its executor thread would keep the process alive after Ctrl-C until
    the user pressed Enter (and __main__ leaves with os._exit, so a blocked reader never holds
    up the exit). The prompt itself is printed to stderr by the caller, so stdout stays
    the report even when it is redirected.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def deliver(line: str | None) -> None:
        if not future.done():
            future.set_result(line)

    def read() -> None:
        try:
            line: str | None = input()
        except (EOFError, OSError, ValueError):
            line = None
        try:
            loop.call_soon_threadsafe(deliver, line)
        except RuntimeError:  # the loop is gone: nobody wants the line any more
            pass

    threading.Thread(target=read, name="starter-prompt", daemon=True).start()
    return future
