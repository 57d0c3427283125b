"""The production worker runs workflow code without Temporal's sandbox (worker.py; with
WORKFLOW_SANDBOX=true, in it, the core passed through: imported once per process instead of once
per research; docs/performance.md), so no sandbox stops a call to the clock, randomness or I/O
made inside the core. The tests' own workers keep the full sandbox; this file keeps the core from
reaching for what the sandbox forbids in the first place."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from worker import SANDBOX

REPO = Path(__file__).resolve().parents[2]
CORE = sorted((REPO / "workflows").rglob("*.py"))

#: What the core may import: deterministic standard-library modules, temporalio, pydantic, itself.
ALLOWED_IMPORTS = {
    "__future__",
    "asyncio",
    "collections",
    "dataclasses",
    "datetime",
    "enum",
    "functools",
    "itertools",
    "math",
    "re",
    "string",
    "typing",
    "unicodedata",
    "json",
    "textwrap",
    "html",
    "urllib",
    "bisect",
    "heapq",
    "operator",
    "pydantic",
    "temporalio",
    "workflows",
}
#: Calls that differ from one run (or replay) to the next; the workflow has its own (workflow.now()).
FORBIDDEN_CALLS = {
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
    ("time", "time"),
    ("time", "monotonic"),
    ("time", "perf_counter"),
    ("time", "sleep"),
    ("asyncio", "sleep"),
    ("uuid", "uuid4"),
    ("uuid", "uuid1"),
}


def test_the_production_worker_passes_the_core_through_the_sandbox() -> None:
    assert "workflows" in SANDBOX.passthrough_modules


def test_the_production_worker_runs_without_the_sandbox_unless_asked() -> None:
    """What keeps the core deterministic in production is this file, the tests' sandboxed workers
    and the replayed histories; WORKFLOW_SANDBOX=true brings the sandbox back (worker.py)."""
    from temporalio.worker import UnsandboxedWorkflowRunner
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

    from settings import Settings
    from worker import workflow_runner

    assert isinstance(workflow_runner(Settings()), UnsandboxedWorkflowRunner)
    sandboxed = workflow_runner(Settings(workflow_sandbox=True))
    assert isinstance(sandboxed, SandboxedWorkflowRunner) and sandboxed.restrictions is SANDBOX


@pytest.mark.parametrize("path", CORE, ids=[p.name for p in CORE])
def test_the_core_imports_only_deterministic_modules(path: Path) -> None:
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert imported <= ALLOWED_IMPORTS, f"{path.name} imports {sorted(imported - ALLOWED_IMPORTS)}"


@pytest.mark.parametrize("path", CORE, ids=[p.name for p in CORE])
def test_the_core_never_reads_the_clock_or_sleeps_outside_temporal(path: Path) -> None:
    calls = [
        (node.func.value.id, node.func.attr)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    ]
    used = {call for call in calls if call in FORBIDDEN_CALLS}
    assert not used, (
        f"{path.name} calls {sorted('.'.join(c) for c in used)}; use workflow.now() / workflow.sleep()"
    )
    names = {
        node.id for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Name)
    }
    assert "open" not in names, f"{path.name} opens files"
