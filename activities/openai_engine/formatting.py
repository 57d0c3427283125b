"""How the research's state is written into the prompts: the question, conversation, passages,
plans, evidence, report text.

Plain text the models read well: one block per passage or source under its `[n]` id (the id the
reply must cite), steps numbered with their status and a cut of what was found, `(none)` rather
than an empty slot, so no template ever renders a blank variable.

One rule for untrusted text (activities/prompts/quoting.py): whatever came from a document, a page
or an earlier report, or was written by a model that read them (plans, findings, reports, claims,
the critic's objections), is returned here wrapped by `untrusted()` as `Quoted` text; only the
question as the person asked it, the settings and the counts are `Trusted`. The prompt loader
refuses any other value, so each function below says by its return type which kind it makes.
"""

from __future__ import annotations

from typing import TypedDict

from activities.prompts.quoting import NONE, Quoted, Trusted, joined, trusted, untrusted
from workflows.activity_models import AboutQuestion
from workflows.models import (
    ROUTING_HISTORY,
    Evidence,
    Message,
    Passage,
    Plan,
    PlanStep,
    Source,
    Speaker,
)
from workflows.text.language import name as language_name

__all__ = ["NONE", "Quoted", "Trusted", "trusted", "untrusted"]


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _wrapped(text: str, tag: str, **attributes: object) -> Quoted:
    """`text` wrapped, or `(none)` when it is blank."""
    return untrusted(text, tag, **attributes) if text.strip() else NONE


class About(TypedDict):
    """The prompt values every role about the question takes, spread into `Chat.ask`: its own
    keys, so they can never stand for one of its parameters (`prompt`, `trace`, `describe`)."""

    query: Trusted
    follows_up: Quoted


def about(inp: AboutQuestion) -> About:
    """The question line (what the person typed: the question as meant and as asked, their
    clarifications) and, apart from it and quoted, what a follow-up refers to in the earlier
    research (a point of an earlier report, which may quote a page)."""
    return {
        "query": trusted(inp.question_line()),
        "follows_up": _wrapped(inp.follows_up, "report", of="the earlier research"),
    }


def language(code: str) -> Trusted:
    return trusted(language_name(code))


def _conversation(messages: list[Message]) -> Quoted:
    """The last messages, one a line after its speaker; a message's own lines are indented, so only
    the code starts a line with "User:" or "Assistant:" (an earlier report cannot forge a turn)."""
    lines = [
        f"{'User' if m.role is Speaker.USER else 'Assistant'}: "
        + "\n  ".join(m.content.strip().splitlines())
        for m in messages[-ROUTING_HISTORY:]
    ]
    return _wrapped("\n".join(lines), "conversation")


def _step(step: PlanStep) -> Quoted:
    """A step's title and description (the planner's or a reviewer's words)."""
    return untrusted(f"{step.title}\n{step.description or ''}", "plan")


def _lines(items: list[str], tag: str) -> Quoted:
    """Items one a line as `- item` (objections, notes, headings), wrapped."""
    return _wrapped("\n".join(f"- {item}" for item in items), tag)


def _passages(passages: list[Passage]) -> Quoted:
    return joined(
        untrusted(f"[{p.source_id}] {p.title}\nURL: {p.url}\n{p.text.strip()}", id=p.source_id)
        for p in passages
    )


def _completed_steps(steps: list[PlanStep]) -> Quoted:
    lines = []
    for i, step in enumerate(steps, 1):
        lines.append(f"{i}. {step.title}: {step.description}".rstrip(": "))
        if step.observation:
            lines.append(f"   Found: {_cut(step.observation, 800)}")
    return _wrapped("\n".join(lines), "findings")


def _plan(plan: Plan) -> Quoted:
    lines = [f"Title: {plan.title}"]
    for i, step in enumerate(plan.steps, 1):
        lines.append(f"{i}. [{step.status.value}] {step.title}: {step.description}".rstrip(": "))
        if step.observation:
            lines.append(f"   Found: {_cut(step.observation, 800)}")
    return untrusted("\n".join(lines), "plan")


def _findings(plan: Plan | None) -> Quoted:
    if plan is None:
        return NONE
    blocks = [
        f"### Step {i}: {step.title}\n{step.observation.strip()}"
        for i, step in enumerate(plan.steps, 1)
        if step.observation
    ]
    return _wrapped("\n\n".join(blocks), "findings")


def _step_findings(steps: list[PlanStep]) -> Quoted:
    """Each step's observation under its title."""
    return _wrapped(
        "\n\n".join(f"{s.title}:\n{(s.observation or '').strip()}" for s in steps), "findings"
    )


def _evidence(evidence: list[Evidence]) -> Quoted:
    """The evidence pool grouped by source, each paragraph under its source id."""
    by_source: dict[int, list[str]] = {}
    for item in evidence:
        by_source.setdefault(item.source_id, []).append(item.text.strip())
    return joined(
        untrusted(f"[{n}]\n" + "\n".join(f"- {t}" for t in texts), id=n)
        for n, texts in sorted(by_source.items())
    )


def _source_list(sources: list[Source], origins: dict[int, str] | None = None) -> Quoted:
    """The sources one a line as `[n] Title - URL` (and `(origin)` when given): titles are the pages'."""
    lines = [
        f"[{s.id}] {s.title} - {s.url}" + (f" ({origins[s.id]})" if origins else "")
        for s in sources
    ]
    return _wrapped("\n".join(lines), "source")


def _ids(ids: list[int]) -> str:
    return ", ".join(f"[{n}]" for n in ids) or NONE
