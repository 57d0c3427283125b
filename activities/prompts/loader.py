"""The role prompts: files in the repository, optionally managed in Langfuse.

Each prompt's front matter names its variables and declares each one `(trusted)` or `(quoted)`.
The engine fills a prompt only through `checked` (each value of its variable's kind: quoted text
only wrapped, quoting.py) and `stated` (the data rule put first when a Langfuse edit dropped it).

The files under `activities/prompts/` are the source of truth for a fresh install and the fallback
whenever Langfuse is not configured, unreachable or serves something unusable. With Langfuse
configured, each role's prompt labelled `production` is fetched, cached by the Langfuse client
(stale copies are served while a background refresh runs), and used instead of the file, so a team
can tune prompts without a deploy. `python -m starter prompts push` creates or updates them from
the files.

The fetch is blocking HTTP, so it runs in a thread with a short timeout and no client-side
retries, and a call waits for it at most `LANGFUSE_PROMPT_WAIT_S` (0.5 s): a failed or slow fetch
means the file is used and Langfuse is left alone for `OUTAGE_BACKOFF_S`, so an outage never slows
a research down.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from temporalio.exceptions import ApplicationError

from activities.prompts.quoting import DATA_RULE, Quoted, Trusted, states_data_rule
from workflows.roles import PROMPTS

log = logging.getLogger(__name__)

PROMPTS_DIR = Path(__file__).parent
#: The prompt files the rows of workflows/roles.py name (a test checks each is here, and no other).
ROLES = tuple(sorted(PROMPTS))

#: The Langfuse label whose version research uses.
LABEL = "production"
#: How long a fetched prompt is fresh; after that it is refreshed in the background.
CACHE_TTL_S = 60
#: A research call waits this long for Langfuse's prompt before using the file
#: (LANGFUSE_PROMPT_WAIT_S; a Langfuse far from the worker may need more).
WAIT_S = 0.5
#: The fetch itself gives up after this (it may go on in the background after WAIT_S).
FETCH_TIMEOUT_S = 2
#: After a failed fetch, Langfuse is not asked again for this long (the files are used).
OUTAGE_BACKOFF_S = 60.0

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
#: A front matter variable line: `- name (trusted): description` or `- name (quoted): description`.
_VARIABLE = re.compile(r"^-\s+(\w+)\s*(?:\((trusted|quoted)\))?\s*:")


@dataclass(frozen=True)
class Prompt:
    """A role's prompt: its template and where it came from (for tracing)."""

    role: str
    variables: tuple[str, ...]
    template: str
    #: Each variable's kind, from the front matter: "trusted" or "quoted" (see quoting.py).
    kinds: dict[str, str] = field(default_factory=dict, compare=False)
    #: Langfuse version when it came from Langfuse; None for the repository file.
    version: int | None = None
    #: The Langfuse prompt object, for linking generations to it (None for the file).
    client: Any = None

    @property
    def source(self) -> str:
        return "langfuse" if self.version is not None else "file"

    def placeholders(self) -> set[str]:
        return {m.group(1) for m in _PLACEHOLDER.finditer(self.template)}

    def render(self, values: dict[str, Any]) -> str:
        """One pass of `{{name}}` substitution, so text inside a value (a page that happens to
        contain `{{x}}`) is never substituted again. A placeholder without a value is a bug in the
        prompt or the engine, not a flaky call: non-retryable."""
        missing = sorted(self.placeholders() - set(values))
        if missing:
            raise ApplicationError(
                f"prompt {self.role} uses {', '.join(missing)} but the engine does not supply them",
                type="PromptError",
                non_retryable=True,
            )
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), self.template)


def checked(role: str, values: dict[str, Any]) -> None:
    """Refuse `values` unless each is of the kind the prompt file declares for it: a quoted
    variable takes only wrapped text (`Quoted`), a trusted one only `Trusted` text or a number,
    and a variable declared without a kind takes nothing. A wrong kind is a bug in the engine or
    the prompt, not a flaky call: non-retryable."""
    kinds = load_prompt(role).kinds
    for name, value in values.items():
        kind = kinds.get(name)
        if kind == "quoted":
            fits = isinstance(value, Quoted)
        elif kind == "trusted":
            fits = isinstance(value, (Trusted, int, float)) and not isinstance(
                value, (Quoted, bool)
            )
        else:
            raise ApplicationError(
                f"prompt {role} declares no kind for {name}: a variable is marked (trusted) "
                "or (quoted) in the front matter",
                type="PromptError",
                non_retryable=True,
            )
        if not fits:
            how = "wrapped by untrusted()" if kind == "quoted" else "trusted() text or a number"
            raise ApplicationError(
                f"prompt {role} takes {name} as {kind} text: only {how}",
                type="PromptError",
                non_retryable=True,
            )


def stated(prompt: Prompt, rendered: str) -> str:
    """The rendered prompt, stating the data rule: a template without it (a Langfuse edit that
    dropped it) gets it put first, so quoted text never reaches a model without the rule."""
    return rendered if states_data_rule(prompt.template) else f"{DATA_RULE}\n\n{rendered}"


@cache
def load_prompt(role: str) -> Prompt:
    """Parse `prompts/<role>.md`: a `---` front matter (role, purpose, variables) and the template.

    The front matter is a small YAML subset read by hand (no YAML dependency): the variables are
    the `- name: description` lines under `variables:`.
    """
    text = (PROMPTS_DIR / f"{role}.md").read_text(encoding="utf-8")
    kinds: dict[str, str] = {}
    template = text
    if text.startswith("---\n"):
        front, _, template = text[4:].partition("\n---\n")
        in_variables = False
        for line in front.splitlines():
            if not line.startswith((" ", "-")):
                in_variables = line.strip() == "variables:"
            elif in_variables and (declared := _VARIABLE.match(line.strip())):
                kinds[declared.group(1)] = declared.group(2) or ""
    return Prompt(role=role, variables=tuple(kinds), template=template.strip() + "\n", kinds=kinds)


class PromptBook:
    """Where the engine gets each role's prompt: Langfuse when configured and healthy, else the file."""

    def __init__(self, langfuse: Any | None, wait_s: float = WAIT_S) -> None:
        self._langfuse = langfuse
        self._wait_s = wait_s
        self._quiet_until = 0.0
        self._unusable: set[tuple[str, int | None]] = set()
        #: Roles Langfuse has no production prompt for, until when (checked again after the TTL).
        self._unmanaged: dict[str, float] = {}
        self._fetching: dict[str, asyncio.Future[Any]] = {}

    async def get(self, role: str, values: dict[str, Any]) -> tuple[Prompt, str]:
        """The prompt and its rendering. A Langfuse prompt that needs values this role does not
        have is reported once and the file is used, so a bad edit in Langfuse never fails a run."""
        local = load_prompt(role)
        managed = await self._fetch(role)
        if managed is not None:
            try:
                return managed, managed.render(values)
            except ApplicationError as err:
                if (role, managed.version) not in self._unusable:
                    self._unusable.add((role, managed.version))
                    log.warning(
                        "Langfuse prompt %s v%s is unusable (%s); using the file",
                        role,
                        managed.version,
                        err.message,
                    )
        return local, local.render(values)

    async def _fetch(self, role: str) -> Prompt | None:
        """Langfuse's production prompt, if it arrives within the book's wait. A fetch still
        running then goes on in its thread (filling Langfuse's cache for later calls) while this
        call uses the file, and Langfuse is left alone for OUTAGE_BACKOFF_S: a hanging Langfuse
        costs a worker one wait per back-off period, never a wait per call."""
        now = time.monotonic()
        if (
            self._langfuse is None
            or now < self._quiet_until
            or now < self._unmanaged.get(role, 0.0)
        ):
            return None
        from langfuse.api import NotFoundError

        fetching = self._fetching.get(role)
        if fetching is None:
            fetching = asyncio.ensure_future(
                asyncio.to_thread(
                    self._langfuse.get_prompt,
                    role,
                    label=LABEL,
                    cache_ttl_seconds=CACHE_TTL_S,
                    max_retries=0,
                    fetch_timeout_seconds=max(FETCH_TIMEOUT_S, math.ceil(self._wait_s)),
                )
            )
            self._fetching[role] = fetching
            fetching.add_done_callback(lambda done: self._fetched(role, done))
        try:
            fetched = await asyncio.wait_for(asyncio.shield(fetching), self._wait_s)
        except NotFoundError:  # this role is not managed in Langfuse: the file, without a warning
            self._unmanaged[role] = time.monotonic() + CACHE_TTL_S
            return None
        except Exception as err:  # noqa: BLE001 - slow or failing: use the file for a while
            self._quiet_until = time.monotonic() + OUTAGE_BACKOFF_S
            log.warning(
                "Langfuse prompt %s unavailable (%s); using the repository's prompts for %.0f s",
                role,
                type(err).__name__ if str(err) else "no answer in time",
                OUTAGE_BACKOFF_S,
            )
            return None
        if getattr(fetched, "is_fallback", False) or not isinstance(
            getattr(fetched, "prompt", None), str
        ):
            return None
        local = load_prompt(role)
        return Prompt(
            role=role,
            variables=local.variables,
            template=fetched.prompt,
            kinds=local.kinds,
            version=fetched.version,
            client=fetched,
        )

    def _fetched(self, role: str, done: asyncio.Future[Any]) -> None:
        if self._fetching.get(role) is done:
            del self._fetching[role]
        if not done.cancelled():
            done.exception()  # retrieved here, so a fetch nobody waited for is not reported as lost


# --- prompts push ------------------------------------------------------------------------------------


def push_prompts(langfuse: Any) -> list[str]:
    """Create or update each role's prompt in Langfuse from the files, labelled `production`.

    Idempotent: a prompt whose production text and variables already match the file is left
    alone, so pushing twice creates no new versions. Returns one line per role.
    """
    from langfuse.api import NotFoundError

    lines = []
    for role in ROLES:
        local = load_prompt(role)
        config = {"variables": list(local.variables), "source": f"activities/prompts/{role}.md"}
        try:
            current = langfuse.api.prompts.get(role, label=LABEL)
        except NotFoundError:
            current = None
        if (
            current is not None
            and current.prompt == local.template
            and (current.config or {}) == config
        ):
            lines.append(f"{role}: unchanged (version {current.version})")
            continue
        created = langfuse.create_prompt(
            name=role,
            prompt=local.template,
            type="text",
            labels=[LABEL],
            config=config,
            commit_message="pushed from the repository's prompt files",
        )
        verb = "created" if current is None else "updated to"
        lines.append(f"{role}: {verb} version {created.version}")
    return lines
