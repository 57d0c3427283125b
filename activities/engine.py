"""What an engine is: one async method per LLM role, named after the role's activity, taking the
role's input model and returning its output model.

The methods are not typed out here: the rows of workflows/roles.py are the list. `missing` checks
an engine against them (tests/workflow/test_roles.py runs it on both engines, so a row without
its methods fails), and the LLM activities (activities/llm.py) call `method(engine, role)` on
whichever engine the worker is configured with: `activities/offline_engine/` or
`activities/openai_engine/`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, cast, get_type_hints

from pydantic import BaseModel

from workflows.activity_models import LLMOutput
from workflows.activity_role import Role
from workflows.roles import LLM_ROLES

#: An engine's method for one LLM role: a coroutine (the offline engine's runs in a thread of its
#: own under `asyncio.run`), whose output, as every LLM role's, carries what the call cost.
RoleMethod = Callable[[BaseModel], Coroutine[Any, Any, LLMOutput]]


class Engine(Protocol):
    """An engine; its role methods are checked against the rows by `missing`."""

    #: "offline" or "openai": the offline engine serves no tokens, so its calls count themselves.
    name: str


def method(engine: Engine, role: Role[Any, Any]) -> RoleMethod:
    """The engine's method for `role`."""
    # Looked up by the role's name: `missing` checks each engine's methods against the rows.
    return cast(RoleMethod, getattr(engine, role.name))


def missing(engine: type) -> list[str]:
    """What `engine` lacks against the rows, one line per LLM role: no async method of its own
    under the role's name, or one typed with other models than the role's input and output."""
    found = []
    for role in LLM_ROLES:
        fn = vars(engine).get(role.name)
        if not inspect.iscoroutinefunction(fn):
            found.append(f"{engine.__name__} has no async method {role.name}")
            continue
        hints = get_type_hints(fn)
        takes = [hints.get(p) for p in list(inspect.signature(fn).parameters)[1:]]
        if takes != [role.input] or hints.get("return") is not role.output:
            found.append(
                f"{engine.__name__}.{role.name} is not ({role.input.__name__}) -> {role.output.__name__}"
            )
    return found
