"""The floors of workflows/, read from the code's own imports: a move that sends an arrow back up
fails here, naming the module and the import.

A part of workflows/ is a top-level module (`workflows/roles.py`) or a top-level package
(`workflows/loop/`). Each part stands on one floor of FLOORS and imports the floors below (and,
on the shapes' floor only, the parts beside it); no two parts import each other, nor several in a
circle. Every import counts: at the top of a module, inside a function, or under `TYPE_CHECKING`.

Outside workflows/, the activities, the library, the starter, the worker, the settings, telemetry
and the benchmarks import only PUBLIC: the words, the shapes, the kit and the modules holding the
workflow classes.
"""

from __future__ import annotations

import ast
from functools import cache
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

from tests.support.shared import REPO

#: Lowest first. A part imports its own floor and the floors below, never above.
FLOORS: tuple[tuple[str, frozenset[str]], ...] = (
    # Pure functions over words (tokens, stems, claim parts, languages, redaction): no shapes.
    ("text", frozenset({"workflows.text"})),
    # What crosses a boundary: the request, the record and what it spent, the status and result,
    # the events, every activity's input and output (a long report's pieces apart), the row that
    # names it and what a row is, the patch ids, the notifier's and the reviser's messages.
    (
        "shapes",
        frozenset(
            {
                "workflows.request",
                "workflows.record",
                "workflows.spending",
                "workflows.models",
                "workflows.events",
                "workflows.activity_models",
                "workflows.report_models",
                "workflows.roles",
                "workflows.activity_role",
                "workflows.patches",
                "workflows.standing_messages",
                "workflows.revising_messages",
            }
        ),
    ),
    # Pure functions over the shapes: citations, verification, evidence, papers, matching.
    ("kit", frozenset({"workflows.kit"})),
    # A research's state and its accounts: parts, stages, budgets, the clock, the call policy.
    ("accounting", frozenset({"workflows.accounting"})),
    # The stages that do the work, none of them importing another.
    ("stages", frozenset({"workflows.loop", "workflows.checks", "workflows.standing"})),
    # What steers the stages: a person's reviews and the critic's loop, a section revised.
    ("steering", frozenset({"workflows.steering", "workflows.revising"})),
    # The research workflow: run() and its signals, queries and updates.
    ("research", frozenset({"workflows.research"})),
)

#: The floors whose parts may import each other (one way: no two parts import each other): the
#: shapes build on one another (models on record on request). On every other floor the parts stand
#: side by side, and what two of them share belongs a floor lower.
SIDEWAYS = frozenset({"shapes"})
#: What the outside may import: the three lowest floors, and the modules of the workflow classes
#: the worker registers and the client starts (the research, the notifier, a section's revision).
PUBLIC = (
    *(part for name, parts in FLOORS if name in {"text", "shapes", "kit"} for part in parts),
    "workflows.research",
    "workflows.standing.notify",
    "workflows.revising.workflow",
)
OUTSIDE = (
    "activities",
    "storage",
    "starter",
    "bench",
    "telemetry",
    "settings",
    "worker.py",
    "config.py",
)


def _module(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module(p): p for p in sorted((REPO / "workflows").rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The module of workflows/ a dotted name lands in (`workflows.accounting.budget.Charge` lands in
    `workflows.accounting.budget`), or None when it is none of them."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


@cache
def imports(path: Path) -> frozenset[str]:
    """The modules of workflows/ that a file imports, at any depth of its code."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            named.update(f"{base}.{alias.name}" for alias in node.names)
    found = {_resolve(n) for n in named if n.startswith("workflows.")}
    return frozenset(m for m in found if m and m not in {"workflows", module})


def part(module: str) -> str:
    return ".".join(module.split(".")[:2])


def floor(module: str) -> int:
    for index, (_, parts) in enumerate(FLOORS):
        if part(module) in parts:
            return index
    raise AssertionError(f"{part(module)} stands on no floor: add it to FLOORS")


def _part_arrows() -> dict[str, set[str]]:
    arrows: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        for target in imports(path):
            if part(target) != part(module) and module != "workflows":
                arrows.setdefault(part(module), set()).add(part(target))
    return arrows


def test_no_two_parts_import_each_other() -> None:
    arrows = _part_arrows()
    both_ways = sorted(
        f"{a} <-> {b}"
        for a, targets in arrows.items()
        for b in targets
        if a < b and a in arrows.get(b, ())
    )
    assert not both_ways, f"parts of workflows/ that import each other: {both_ways}"


def test_the_parts_import_in_one_direction() -> None:
    """No circle through several parts either: the parts sort, lowest first."""
    try:
        tuple(TopologicalSorter(_part_arrows()).static_order())
    except CycleError as circle:
        raise AssertionError(f"parts of workflows/ import in a circle: {circle.args[1]}") from None


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "workflows"))
def test_a_module_imports_only_its_floor_and_below(module: str) -> None:
    own = floor(module)
    wrong = sorted(
        f"{target} (floor {FLOORS[floor(target)][0]})"
        for target in imports(MODULES[module])
        if floor(target) > own
        or (
            floor(target) == own and part(target) != part(module) and FLOORS[own][0] not in SIDEWAYS
        )
    )
    assert not wrong, f"{module} (floor {FLOORS[own][0]}) imports from above or beside: {wrong}"


def _outside() -> list[Path]:
    files: list[Path] = []
    for entry in OUTSIDE:
        root = REPO / entry
        files += [root] if root.is_file() else sorted(root.rglob("*.py"))
    return [f for f in files if imports(f)]


def _public(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in PUBLIC)


@pytest.mark.parametrize("path", _outside(), ids=lambda p: str(p.relative_to(REPO)))
def test_the_outside_imports_only_the_public_floors(path: Path) -> None:
    inner = sorted(m for m in imports(path) if not _public(m))
    assert not inner, f"{path.relative_to(REPO)} reaches inside workflows/: {inner}"
