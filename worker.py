"""One worker process: the research workflow and every activity, configured from the environment.

Run as many as you like against the same task queue (`docker compose up --scale worker=N`).
SIGTERM or SIGINT stops polling, lets running activities finish (up to WORKER_SHUTDOWN_GRACE_S,
20 s by default) and exits. WORKER_METRICS_PORT: /metrics and /healthz (telemetry/health.py).
`--no-engine-notice`: the offline engine is not announced here (`make demo` runs the starter in
the same terminal, and the starter announces it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities import pricing, tracing
from activities.library import save_research
from activities.llm import LLM_ACTIVITIES
from activities.notify import deliver_notification, mail, notification_targets
from activities.pages import read_page
from activities.paper_indexes import paper_indexes
from activities.papers_search import search_papers
from activities.pricing import PriceError
from activities.providers.scholarly import configured_indexes, rate_of
from activities.providers.strategies import check_search_config
from activities.revisions import save_revision
from activities.search import search
from activities.standing import owner_running, previous_run
from activities.web import bounded
from settings import (
    OFFLINE_NOTICE,
    ConfigError,
    Settings,
    connect_temporal,
    settings,
)
from telemetry import metrics, traces
from telemetry.counters import ProductMetrics
from telemetry.health import HealthServer
from workflows.activity_models import papers_task_queue
from workflows.research import DeepResearchWorkflow
from workflows.revising.workflow import ReviseSectionWorkflow
from workflows.standing.notify import NotifyWorkflow

#: Every activity the research workflow schedules, and the notifier's (`search_papers` runs on
#: each scholarly index's own task queue, not the research's: `build_paper_workers`).
ACTIVITIES: list[Callable[..., Any]] = [
    *LLM_ACTIVITIES,
    search,
    search_papers,
    paper_indexes,
    read_page,
    save_research,
    previous_run,
    owner_running,
    notification_targets,
    deliver_notification,
    save_revision,
]

#: The sandbox re-imports every module a workflow uses that is not passed through, once per
#: workflow run: for this package that is ~20 modules and their ~60 pydantic models built again
#: for every research, about 80 ms of worker CPU each (docs/performance.md). The deterministic core
#: is passed through instead, imported once per process. What that gives up: the sandbox's checks
#: (no `datetime.now()`, `random`, I/O) no longer run on calls made inside `workflows/` in
#: production. They still run in the tests, whose workers use the full sandbox on the same code
#: (tests/workflow), and the core's imports are held to temporalio, pydantic and the standard
#: library by tests/workflow/test_rules.py.
SANDBOX = SandboxRestrictions.default.with_passthrough_modules("workflows")


def workflow_runner(config: Settings) -> WorkflowRunner:
    """No sandbox by default (WORKFLOW_SANDBOX=true for one): with the core passed through, the
    sandbox checked nothing our code calls, yet it was a fifth of the worker's CPU (measured:
    every activation compiles and runs its entry code anew, inside the import hooks). What keeps
    workflow code deterministic is unchanged: the tests' workers run the full sandbox on the same
    code, tests/workflow/test_sandbox.py holds the core to deterministic imports and calls, and
    the recorded histories replay."""
    if config.worker.sandbox:
        return SandboxedWorkflowRunner(restrictions=SANDBOX)
    return UnsandboxedWorkflowRunner()


def build_worker(client: Client, config: Settings) -> Worker:
    return Worker(
        client,
        task_queue=config.temporal.task_queue,
        workflows=[DeepResearchWorkflow, NotifyWorkflow, ReviseSectionWorkflow],
        activities=[a for a in ACTIVITIES if a is not search_papers],
        workflow_runner=workflow_runner(config),
        max_concurrent_activities=config.worker.max_concurrent_activities,
        max_concurrent_workflow_tasks=config.worker.max_concurrent_workflow_tasks,
        graceful_shutdown_timeout=timedelta(seconds=config.worker.shutdown_grace_s),
        interceptors=[ProductMetrics()],
    )


def build_paper_workers(client: Client, config: Settings) -> list[Worker]:
    """One worker per index of SCHOLARLY_PROVIDERS on the index's own task queue, running only
    `search_papers`, which sets the queue's dispatch rate to the index's published one: the
    Temporal server keeps it for every worker that polls the queue (activities/providers/scholarly/)."""
    workers = []
    for index in configured_indexes(config):
        rate = rate_of(index, config)
        workers.append(
            Worker(
                client,
                task_queue=papers_task_queue(config.temporal.task_queue, index),
                activities=[search_papers],
                max_concurrent_activities=rate.concurrency,
                max_task_queue_activities_per_second=rate.searches_per_second,
                graceful_shutdown_timeout=timedelta(seconds=config.worker.shutdown_grace_s),
                interceptors=[ProductMetrics()],
            )
        )
    return workers


async def main() -> int:
    try:
        config = settings()
        pricing.table(config.llm.prices)
        check_search_config(config)
        configured_indexes(config)
        config.temporal.connect_config()  # a Temporal profile that does not load: said here
    except (ConfigError, PriceError) as err:  # a configuration error: say it once, plainly
        print(f"error: {err}", file=sys.stderr)
        return 2
    except ApplicationError as err:
        print(f"error: {err.message}", file=sys.stderr)
        return 2
    if warning := mail.clear_text_login_warning(config):
        print(warning, file=sys.stderr)
    if config.llm.engine == "offline" and "--no-engine-notice" not in sys.argv[1:]:
        print(OFFLINE_NOTICE, file=sys.stderr)
    traces.configure("deep-research-worker")
    health = None
    if config.worker.metrics_port:  # before connecting: the client records into this runtime
        health = health_server(config)
        if health is None:
            return 2
    try:
        client = await connect_temporal(config.temporal)
    except (RuntimeError, ValueError):  # refused, or a malformed address
        print(
            f"error: cannot reach Temporal at {config.temporal.target} (start one with `make dev`)",
            file=sys.stderr,
        )
        return 2
    worker = build_worker(client, config)
    await run_until_stopped(worker, config, health, build_paper_workers(client, config))
    # The last spans leave now, once, not after every call (bounded if the collector is down).
    await asyncio.to_thread(tracing.flush_all)
    await asyncio.to_thread(traces.flush)
    bounded.close_pool()
    return 0


async def run_until_stopped(
    worker: Worker,
    config: Settings,
    health: HealthServer | None,
    others: list[Worker] | None = None,
) -> None:
    """Poll until SIGTERM or SIGINT, then drain. The health endpoint says "not polling" from the
    signal on, while the running activities still get WORKER_SHUTDOWN_GRACE_S to finish. OTHERS
    (the scholarly indexes' workers) run beside WORKER and drain at the same time, not in turn."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if health is not None:
        health.polling = lambda: worker.is_running and not stop.is_set()
        health.start()
    print(start_line(config), file=sys.stderr, flush=True)
    try:
        async with contextlib.AsyncExitStack() as running:
            for each in [worker, *(others or [])]:
                await running.enter_async_context(each)
            await stop.wait()
            print("worker: shutting down", file=sys.stderr, flush=True)
            await asyncio.gather(*(each.shutdown() for each in [worker, *(others or [])]))
    finally:
        if health is not None:
            health.close()


def health_server(config: Settings) -> HealthServer | None:
    """The metrics runtime and the server of /metrics and /healthz, or None (said in one line)
    when the port cannot be had."""
    port = config.worker.metrics_port or 0
    try:
        return HealthServer("0.0.0.0", port, metrics.install(), polling=lambda: False)
    except OSError as err:
        print(
            f"error: WORKER_METRICS_PORT: cannot listen on port {port}: {err.strerror or err}",
            file=sys.stderr,
        )
        return None


def start_line(config: Settings) -> str:
    """What this worker serves and searches: a report citing the wrong documents is traced back to
    the folder named here, not to a guess at which environment the worker was started from."""
    line = (
        f"worker: task queue {config.temporal.task_queue!r} on {config.temporal.target}, "
        f"engine {config.llm.engine}, search {config.search.provider} ({config.search.strategy}), "
        f"langfuse {'on' if tracing.langfuse_for(config) else 'off'}"
    )
    if config.worker.metrics_port:
        line += f", metrics and health on port {config.worker.metrics_port}"
    if traces.endpoint():
        line += ", traces on (OTLP)"
    providers = [
        config.search.provider,
        *(n.strip() for n in config.search.fallback_providers.split(",")),
    ]
    if "local" in providers:
        folder = config.corpus.folder
        line += (
            f", corpus {folder.expanduser().resolve()}"
            if folder
            else ", corpus the Python documentation (RESEARCH_CORPUS_DIR unset)"
        )
    return line


def _exit(code: int) -> None:
    """Leave without the interpreter's finalization: the Temporal SDK's Rust runtime keeps threads
    that may call back into Python while it finalizes, and then the process aborts (seen as exit 134
    in about 4 of 10 starts that could not reach Temporal, after the one-line error was printed)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit(asyncio.run(main()))
