"""`make dev` (python -m starter.stack dev) stops the dev server and worker it started, whichever
way it is told to stop: a process manager's SIGTERM or a closed terminal's SIGHUP, not only Ctrl-C.
Run on free ports, so it never meets a `make dev` someone left running on 7233."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_make_dev_stops_its_server_and_worker_on_a_signal(sig: signal.Signals, tmp_path: Path) -> None:
    port, ui_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "LLM_", "LANGFUSE_", "TEMPORAL_", "SEARCH_", "RESEARCH_"))}
    env.update(LLM_PROVIDER="offline", SEARCH_PROVIDER="local", RESEARCH_INDEX_DIR=str(tmp_path / "index"),
               RESEARCH_DB_URL=f"sqlite:///{tmp_path / 'library.sqlite'}", PYTHONUNBUFFERED="1")
    log = tmp_path / "stack.log"
    with log.open("wb") as out:
        stack = subprocess.Popen(
            [sys.executable, "-m", "starter.stack", "dev", "--port", str(port), "--ui-port", str(ui_port),
             "--db-file", str(tmp_path / "dev.sqlite")],
            cwd=REPO, env=env, stdout=out, stderr=out,
        )
    started: list[int] = []
    try:
        deadline = time.monotonic() + 90
        while "worker: task queue" not in log.read_text(errors="replace"):
            assert stack.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        started = children(stack.pid)
        assert len(started) == 2, f"expected the dev server and the worker, found {started}"
        assert listening(port) and listening(ui_port)

        stack.send_signal(sig)
        stack.wait(timeout=60)

        assert [pid for pid in started if alive(pid)] == []
        assert not listening(port), f"port {port} still taken"
        assert not listening(ui_port), f"port {ui_port} still taken"
        assert "Traceback" not in log.read_text(errors="replace")
    finally:
        if stack.poll() is None:
            stack.kill()
        for pid in started:  # what a failed run left behind must not outlive the test
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
