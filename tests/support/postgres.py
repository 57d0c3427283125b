"""A throwaway PostgreSQL cluster for the library tests, or the exact reason there is none.

Finds the server binaries (PATH, Debian's /usr/lib/postgresql/*/bin); when they are missing and
the test run is root on a Debian-like machine, installs them with apt (CI machines start without
them, and the package registry is reachable). PostgreSQL refuses to run as root, so as root the
cluster runs as the `postgres` user the package creates. Listens on 127.0.0.1 at a free port,
trust authentication, data in a temporary folder; stopped at the end of the session.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

APT_TIMEOUT_S = 600


def _bin_dir() -> Path | None:
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _install() -> str | None:
    """Try apt; None when it worked, else why not."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "PostgreSQL is not installed and this run cannot install it (needs root and apt-get)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "postgresql"]
    try:
        if (
            subprocess.run(command, env=env, capture_output=True, timeout=APT_TIMEOUT_S).returncode
            != 0
        ):
            subprocess.run(
                ["apt-get", "update", "-q"], env=env, capture_output=True, timeout=APT_TIMEOUT_S
            )
            done = subprocess.run(
                command, env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S
            )
            if done.returncode != 0:
                return f"apt-get install postgresql failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
    except subprocess.TimeoutExpired:
        return f"apt-get install postgresql took more than {APT_TIMEOUT_S} s"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def postgres_cluster() -> Iterator[str | None]:
    """Yields a SQLAlchemy URL of an empty database, or None after setting `reason`."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        problem = _install()
        bin_dir = _bin_dir()
        if bin_dir is None:
            postgres_cluster.reason = problem or "PostgreSQL was installed but initdb is not found"  # type: ignore[attr-defined]
            yield None
            return
    as_user: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            postgres_cluster.reason = (
                "running as root without runuser: PostgreSQL cannot be started"  # type: ignore[attr-defined]
            )
            yield None
            return
        as_user = ["runuser", "-u", "postgres", "--"]
    with tempfile.TemporaryDirectory(prefix="pg-") as tmp:
        data, sockets = Path(tmp) / "data", Path(tmp) / "run"
        sockets.mkdir()
        if as_user:
            shutil.chown(tmp, "postgres")
            shutil.chown(sockets, "postgres")
        port = _free_port()

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*as_user, *args], capture_output=True, text=True, timeout=120, cwd=tmp
            )

        steps = [
            run(
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
            ),
            run(
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(Path(tmp) / "log"),
                "-w",
                "start",
                "-o",
                f"-h 127.0.0.1 -p {port} -k {sockets} -F",
            ),
        ]
        failed = next((s for s in steps if s.returncode != 0), None)
        if failed is not None:
            postgres_cluster.reason = (
                f"PostgreSQL did not start: {(failed.stderr.strip().splitlines() or ['?'])[-1]}"  # type: ignore[attr-defined]
            )
            yield None
            return
        try:
            run(
                str(bin_dir / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                "library",
            )
            yield f"postgresql://postgres@127.0.0.1:{port}/library"
        finally:
            run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
