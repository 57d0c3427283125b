"""The request's options as the web app's forms offer them (the home page's "ask" form and
/standing's): one row of `starter.client.requests.OPTIONS` with a `page` label is one control,
its kind and choices read from `ResearchRequest`'s field, so a new option reaches every form (and
the forms' scripts, which read `data-option` controls) by its row alone. Only the words people
read for a value live here.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from dataclasses import dataclass
from typing import Any

from starter.client.requests import OPTIONS
from workflows.models import ResearchRequest

#: The report languages the forms offer (the API takes any ISO 639 code).
LANGUAGES = [
    ("auto", "the question's language"),
    ("en", "English"),
    ("de", "German"),
    ("fr", "French"),
    ("es", "Spanish"),
    ("it", "Italian"),
    ("pt", "Portuguese"),
    ("nl", "Dutch"),
    ("pl", "Polish"),
    ("ja", "Japanese"),
    ("zh", "Chinese"),
    ("vi", "Vietnamese"),
]
#: The words for a value where the value alone says too little.
WORDS: dict[str, dict[str, str]] = {
    "mode": {
        "deep": "deep: plan, research, reflect, report",
        "web": "web: one quick search step",
        "simple": "simple: a direct answer",
    },
    "review_report": {
        "auto": "when the critic asks",
        "always": "always, before it is final",
        "never": "never",
    },
    "sources": {
        "configured": "Configured",
        "web": "Web",
        "documents": "Your documents",
        "both": "Web and your documents",
        "papers": "Papers",
    },
}
#: A line under a control, where its choices need one.
HELP: dict[str, str] = {
    "sources": "Your documents: those you upload on the home page, seen by you alone.",
    "review_report": "Revised with your feedback and shown to you again, at most 3 review "
    "rounds; the last revision is final.",
    "max_tokens": "Optional: the research stops planning new steps before it would spend more.",
    "max_cost_usd": "Optional: as the token budget, in US dollars at the configured prices.",
}


@dataclass(frozen=True)
class Control:
    """One option on a form: `select` (CHOICES), `checkbox` or `number`."""

    name: str
    label: str
    kind: str
    choices: tuple[tuple[str, str], ...] = ()
    help: str | None = None
    #: The number control's step ("1" for counts, "any" for money).
    step: str = "1"
    #: The choices offered but not to be chosen here (the worker cannot search them).
    disabled: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.name.replace("_", "-")


def controls(
    words: dict[str, dict[str, str]] | None = None,
    unavailable: dict[str, dict[str, str]] | None = None,
) -> list[Control]:
    """Every option a form offers, in OPTIONS' order; WORDS overrides a choice's words (the home
    page says what "configured" searches on this server); UNAVAILABLE's choices, each with why,
    are offered disabled, the why said under the control."""
    chosen = {**WORDS, **(words or {})}
    shown = [
        _control(option.field, option.page, chosen.get(option.field, {}))
        for option in OPTIONS
        if option.page
    ]
    return [_without(c, (unavailable or {}).get(c.name, {})) for c in shown]


def _without(control: Control, why: dict[str, str]) -> Control:
    if not why:
        return control
    said = f"Not available here: {'; '.join(dict.fromkeys(why.values()))}."
    help_line = f"{control.help} {said}" if control.help else said
    return dataclasses.replace(control, disabled=tuple(why), help=help_line)


def _control(name: str, label: str, words: dict[str, str]) -> Control:
    kind = typing.get_args(ResearchRequest.model_fields[name].annotation) or (
        ResearchRequest.model_fields[name].annotation,
    )
    shown = HELP.get(name)
    if bool in kind:
        return Control(name, label, "checkbox", help=shown)
    members = next((k for k in kind if isinstance(k, type) and issubclass(k, enum.Enum)), None)
    if members is not None:
        choices = tuple((m.value, words.get(m.value, m.value)) for m in members)
        return Control(name, label, "select", choices, shown)
    if name == "language":
        return Control(name, label, "select", tuple(LANGUAGES), shown)
    return Control(name, label, "number", help=shown, step="any" if float in kind else "1")


def values(form: dict[str, str]) -> dict[str, Any]:
    """The options a posted form set (a form without JavaScript): a checkbox is true when sent,
    an empty field is the model's default (left out)."""
    given: dict[str, Any] = {}
    for control in controls():
        if control.kind == "checkbox":
            given[control.name] = control.name in form
        elif form.get(control.name, "").strip():
            given[control.name] = form[control.name].strip()
    return given
