"""The lines the layout holds, in the style of DeerFlow's test_harness_boundary.py: read from the
code's own imports, so a move that crosses one fails here, not in a review.

- The client (starter/client/) is the only code that talks to Temporal and the library for a
  person, and imports none of the front ends (cli, mcp, web): each front end composes it. No
  front-end module imports `temporalio` or `storage` (any submodule) itself, but the few of
  OWN_DOORS, each for a reason of its own.
- The front ends do not import each other.
- The deterministic core (workflows/) and the activities import nothing of the starter.
- No module imports itself back through others: no import circles anywhere (the starter, the core,
  the activities, the library, telemetry, the benchmarks, the settings).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.shared import REPO

FRONT_ENDS = ("starter.cli", "starter.mcp", "starter.web")


def _module(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    found = {}
    folders = ("starter", "workflows", "activities", "storage", "telemetry", "bench", "settings")
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*.py")):
            found[_module(path)] = path
    for name in ("worker", "config"):
        if (REPO / f"{name}.py").exists():
            found[name] = REPO / f"{name}.py"
    return found


SOURCES = _sources()


def all_imports_of(name: str) -> set[str]:
    """Every module `name` names in an import, its own project's or not (at any depth of its
    code, lazy imports included)."""
    tree = ast.parse(SOURCES[name].read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def imports_of(name: str) -> set[str]:
    """The project modules `name` imports."""
    return {m for m in all_imports_of(name) if m in SOURCES and m != name}


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize("name", sorted(n for n in SOURCES if _under(n, "starter.client")))
def test_the_client_imports_no_front_end(name: str) -> None:
    crossing = sorted(m for m in imports_of(name) if any(_under(m, f) for f in FRONT_ENDS))
    assert not crossing, f"{name} imports front-end code: {crossing}"


@pytest.mark.parametrize("front", FRONT_ENDS)
def test_a_front_end_imports_no_other_front_end(front: str) -> None:
    others = [f for f in FRONT_ENDS if f != front]
    crossing = sorted(
        (n, m)
        for n in SOURCES
        if _under(n, front)
        for m in imports_of(n)
        if any(_under(m, o) for o in others)
    )
    # the CLI's `serve` and `mcp` commands start the other front ends: their one door each
    allowed = {
        ("starter.cli.main", "starter.mcp"),
        ("starter.cli.main", "starter.mcp.server"),
        ("starter.cli.main", "starter.web.serve"),
    }
    assert not set(crossing) - allowed, crossing


#: Front-end modules that may reach Temporal or the library themselves, each for a reason of its
#: own; everything else goes through starter.client.
OWN_DOORS = {
    # a local tool of the CLI, no person's research: it starts a dev server, then waits for its
    # worker to poll (before any Session exists)
    "starter.cli.stack": "the dev stack: asks the dev server it started whether a worker polls",
    # the web app's own table, which no other audience reads:
    "starter.web.identity.sessions": "the web's revoked sessions (storage/web_tables.py)",
}


def _outside_world(module: str) -> bool:
    return _under(module, "temporalio") or _under(module, "storage")


@pytest.mark.parametrize("front", FRONT_ENDS)
def test_a_front_end_reaches_temporal_and_the_library_only_through_the_client(front: str) -> None:
    crossing = sorted(
        (n, m)
        for n in SOURCES
        if _under(n, front) and n not in OWN_DOORS
        for m in all_imports_of(n)
        if _outside_world(m)
    )
    assert not crossing, crossing


def test_every_own_door_is_a_front_end_module_that_uses_it() -> None:
    stale = [
        n
        for n in OWN_DOORS
        if n not in SOURCES or not any(_outside_world(m) for m in all_imports_of(n))
    ]
    assert not stale, f"allowed but missing or not needing it: {stale}"


def test_the_core_and_the_activities_import_nothing_of_the_starter() -> None:
    crossing = sorted(
        (n, m)
        for n in SOURCES
        if _under(n, "workflows") or _under(n, "activities")
        for m in imports_of(n)
        if _under(m, "starter")
    )
    assert not crossing, crossing


def test_no_import_circles() -> None:
    graph = {n: {m for m in imports_of(n) if m in SOURCES} for n in SOURCES}
    # a package's __init__ naming its own modules is not a circle through them
    for name in graph:
        graph[name] = {m for m in graph[name] if not _under(name, m) and not _under(m, name)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert not circles, circles
