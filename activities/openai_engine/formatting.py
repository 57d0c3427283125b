"""How the research's state is written into the prompts: conversation, passages, plans, evidence.

Plain text the models read well: one block per passage or source under its `[n]` id (the id the
reply must cite), steps numbered with their status and a cut of what was found, `(none)` rather
than an empty slot, so no template ever renders a blank variable.

Text that came from documents is untrusted: a page may contain "ignore your instructions and ...".
So every such text is wrapped in `<source id="n">...</source>` (findings and reports, which quote
sources, in `<findings>` / `<report>`), and a page cannot close the wrapper early: any of these
tags inside the text loses its `<` (becomes `‹`). Each prompt that carries such text says that
what is inside is data, never instructions (see DATA_RULE in the prompt files).
"""

from __future__ import annotations

import re

from workflows.models import ROUTING_HISTORY, Evidence, Message, Passage, Plan, PlanStep, Speaker

NONE = "(none)"
_TAGS = re.compile(r"<(\s*/?\s*(?:source|findings|report)\b)", re.I)


def untrusted(text: str, tag: str = "source", **attributes: object) -> str:
    """`text` wrapped as data: its own tags defused, so a page cannot end the wrapper."""
    attrs = "".join(f' {k}="{str(v).replace(chr(34), chr(39))}"' for k, v in attributes.items())
    body = _TAGS.sub(lambda m: "\u2039" + m.group(1), text.strip())
    return f"<{tag}{attrs}>\n{body}\n</{tag}>"


def _conversation(messages: list[Message]) -> str:
    lines = [
        f"{'User' if m.role is Speaker.USER else 'Assistant'}: {m.content.strip()}"
        for m in messages[-ROUTING_HISTORY:]
    ]
    return "\n".join(lines) or NONE


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _passages(passages: list[Passage]) -> str:
    blocks = [untrusted(f"[{p.source_id}] {p.title}\nURL: {p.url}\n{p.text.strip()}", id=p.source_id)
              for p in passages]
    return "\n\n".join(blocks) or NONE


def _completed_steps(steps: list[PlanStep]) -> str:
    lines = []
    for i, step in enumerate(steps, 1):
        lines.append(f"{i}. {step.title}: {step.description}".rstrip(": "))
        if step.observation:
            lines.append(f"   Found: {untrusted(_cut(step.observation, 800), 'findings')}")
    return "\n".join(lines) or NONE


def _plan(plan: Plan) -> str:
    lines = [f"Title: {plan.title}"]
    for i, step in enumerate(plan.steps, 1):
        lines.append(f"{i}. [{step.status.value}] {step.title}: {step.description}".rstrip(": "))
        if step.observation:
            lines.append(f"   Found: {untrusted(_cut(step.observation, 800), 'findings')}")
    return "\n".join(lines)


def _findings(plan: Plan | None) -> str:
    if plan is None:
        return NONE
    blocks = [
        f"### Step {i}: {step.title}\n{untrusted(step.observation, 'findings')}"
        for i, step in enumerate(plan.steps, 1)
        if step.observation
    ]
    return "\n\n".join(blocks) or NONE


def _evidence(evidence: list[Evidence]) -> str:
    """The evidence pool grouped by source, each paragraph under its source id."""
    by_source: dict[int, list[str]] = {}
    for item in evidence:
        by_source.setdefault(item.source_id, []).append(item.text.strip())
    blocks = [untrusted(f"[{n}]\n" + "\n".join(f"- {t}" for t in texts), id=n) for n, texts in sorted(by_source.items())]
    return "\n\n".join(blocks) or NONE


def _ids(ids: list[int]) -> str:
    return ", ".join(f"[{n}]" for n in ids) or NONE
