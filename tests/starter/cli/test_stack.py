"""`make dev` (python -m starter.cli.stack dev) starts the dev server, the worker and the web app, prints
the web app's URL, and stops all three whichever way it is told to stop: a process manager's SIGTERM
or a closed terminal's SIGHUP, not only Ctrl-C. Run on free ports, so it never meets a `make dev`
someone left running on 7233 or 8000."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
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
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_make_dev_serves_the_web_app_and_stops_everything_on_a_signal(
    sig: signal.Signals, tmp_path: Path
) -> None:
    port, ui_port, web_port = free_port(), free_port(), free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "LLM_", "LANGFUSE_", "TEMPORAL_", "SEARCH_", "RESEARCH_"))
    }
    env.update(
        LLM_PROVIDER="offline",
        SEARCH_PROVIDER="local",
        RESEARCH_INDEX_DIR=str(tmp_path / "index"),
        RESEARCH_DB_URL=f"sqlite:///{tmp_path / 'library.sqlite'}",
        PYTHONUNBUFFERED="1",
    )
    # A shell where the virtualenv is not active: no .venv/bin on PATH.
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = os.pathsep.join(
        part
        for part in env.get("PATH", os.defpath).split(os.pathsep)
        if part and Path(part).resolve() != Path(sys.executable).parent.resolve()
    )
    log = tmp_path / "stack.log"
    with log.open("wb") as out:
        stack = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "starter.cli.stack",
                "dev",
                "--port",
                str(port),
                "--ui-port",
                str(ui_port),
                "--web-port",
                str(web_port),
                "--db-file",
                str(tmp_path / "dev.sqlite"),
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=out,
        )
    started: list[int] = []
    try:
        deadline = time.monotonic() + 90
        while not all(
            line in log.read_text(errors="replace")
            for line in ("worker: task queue", "dev: web app on", "dev: worker running")
        ):
            assert stack.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        started = children(stack.pid)
        assert len(started) == 3, (
            f"expected the dev server, the worker and the web app, found {started}"
        )
        assert listening(port) and listening(ui_port) and listening(web_port)
        url = re.search(r"dev: web app on (http://\S+)", log.read_text(errors="replace"))
        assert url and url[1] == f"http://127.0.0.1:{web_port}/", log.read_text(errors="replace")
        with urllib.request.urlopen(url[1] + "api/health", timeout=10) as answer:
            assert json.loads(answer.read()) == {"ok": True, "temporal": True}
        # The command it suggests runs when pasted into this shell, where the virtualenv is not
        # active and TEMPORAL_ADDRESS is not set: the hint carries it (this stack is not on 7233).
        hint = re.search(r"dev: worker running; try `([^`]+)`", log.read_text(errors="replace"))
        assert hint and hint[1].startswith(
            f"TEMPORAL_ADDRESS=127.0.0.1:{port} {Path(sys.executable).parent / 'deep-research'} "
            "research "
        ), hint
        pasted = subprocess.run(
            ["/bin/sh", "-c", hint[1] + " --detach"],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert pasted.returncode == 0 and pasted.stdout.startswith("research-"), pasted.stderr

        stack.send_signal(sig)
        stack.wait(timeout=60)

        assert [pid for pid in started if alive(pid)] == []
        assert not listening(port), f"port {port} still taken"
        assert not listening(ui_port), f"port {ui_port} still taken"
        assert not listening(web_port), f"port {web_port} still taken"
        assert "Traceback" not in log.read_text(errors="replace")
    finally:
        if stack.poll() is None:
            stack.kill()
        for pid in started:  # what a failed run left behind must not outlive the test
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_make_dev_takes_the_next_free_port_when_the_web_port_is_in_use() -> None:
    from starter.cli.stack import free_web_port

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert free_web_port(port) > port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    assert free_web_port(free) == free


def test_a_port_in_use_is_refused_in_one_line_not_shared() -> None:
    """Another Temporal server on the port would take this run's tasks."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        for command in ("demo", "dev"):
            done = subprocess.run(
                [sys.executable, "-m", "starter.cli.stack", command, "--port", str(port)],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 2, done
            assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1, done.stderr
            assert "already in use" in done.stderr and "--share" in done.stderr


def test_share_uses_the_server_on_the_port_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    from starter.cli import stack

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert stack.own_server("dev", port, share=True) is False
        with pytest.raises(stack.Refused):
            stack.own_server("demo", port, share=False)
    assert stack.own_server("dev", port, share=True) is True  # nothing listens any more
    said = capsys.readouterr().err.splitlines()
    assert (
        said[0] == f"dev: using the Temporal server already listening on localhost:{port} (--share)"
    )
    assert said[1].startswith(f"demo: error: localhost:{port} is already in use") and len(said) == 2


def test_with_tokens_the_demo_research_belongs_to_a_token_user(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A research of `local` would answer 404 to every signed-in user."""
    from starter.cli import stack

    monkeypatch.setenv("RESEARCH_API_TOKENS", "alice:alice-token-0123456789abcdef")
    monkeypatch.delenv("RESEARCH_USER", raising=False)
    assert stack.token_user() == "alice"
    assert "belongs to alice" in " ".join(
        stack.demo_epilogue(3, 0, 8233, "demo-1", "alice").split()
    )
    monkeypatch.setenv("RESEARCH_USER", "alice")
    assert stack.token_user() is None
    monkeypatch.delenv("RESEARCH_API_TOKENS")
    assert stack.token_user() is None


def test_hints_after_the_demo_carry_temporal_address_on_a_port_not_the_default() -> None:
    """`make demo ARGS='--port 7300'` printed `show ID`, which then failed
    ("cannot reach Temporal at localhost:7233")."""
    from starter.cli import stack

    moved = stack.demo_epilogue(3, 0, 8300, "demo-1", port=7300)
    commands = [line.strip() for line in moved.splitlines() if line.startswith("    ")]
    assert commands and all(c.startswith("TEMPORAL_ADDRESS=127.0.0.1:7300 ") for c in commands)
    usual = stack.demo_epilogue(3, 0, 8233, "demo-1")
    assert "TEMPORAL_ADDRESS" not in usual


def test_the_library_is_the_projects_whatever_folder_the_cli_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`history` from another folder read (and created) an empty
    `.data/research.sqlite` there instead of the library `make dev` and the web app use."""
    from settings import HOME, Settings

    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESEARCH_", "TEMPORAL_"))}
    run = subprocess.run(
        [str(Path(sys.executable).parent / "deep-research"), "history", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / ".data").exists()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RESEARCH_DB_URL", raising=False)
    assert Settings().library.db_url == f"sqlite:///{HOME / '.data/research.sqlite'}"


def test_make_demo_writes_nothing_of_its_own_to_standard_output() -> None:
    """Edges: `make demo > report.md` kept make's own command lines above the report.
    PY=/bin/true runs the recipes with nothing behind them: what is left on stdout is make's."""
    run = subprocess.run(
        ["make", "--no-print-directory", "demo", "PY=/bin/true"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
