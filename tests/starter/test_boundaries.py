"""The lines the layout holds (issue 37), in the style of DeerFlow's test_harness_boundary.py: read
from the code's own imports, so a move that crosses one fails here, not in a review.

- The client (starter/client/) is the only code that talks to Temporal and the library for a
  person, and imports none of the front ends (cli, mcp, web): each front end composes it.
- The front ends do not import each other.
- The deterministic core (workflows/) and the activities import nothing of the starter.
- No module imports itself back through others: no import circles anywhere.
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
    for folder in ("starter", "workflows", "activities"):
        for path in sorted((REPO / folder).rglob("*.py")):
            found[_module(path)] = path
    for name in ("worker", "config"):
        found[name] = REPO / f"{name}.py"
    return found


SOURCES = _sources()


def imports_of(name: str) -> set[str]:
    """The project modules `name` imports (at any depth of its code, lazy imports included)."""
    tree = ast.parse(SOURCES[name].read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in found if m in SOURCES and m != name}


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
