"""Reading a worker's /metrics and /healthz as Prometheus and the kubelet do: plain HTTP GETs."""

from __future__ import annotations

import re
import socket
import time
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """Status and body; a refused connection is status 0."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except (urllib.error.URLError, ConnectionError):
        return 0, ""


def wait_for(url: str, status: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while get(url)[0] != status:
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} did not answer {status} within {timeout_s} s")
        time.sleep(0.1)


def total(exposition: str, name: str, **labels: str) -> float:
    """The sum of every sample of NAME whose labels include LABELS (Prometheus text format)."""
    found = 0.0
    for line in exposition.splitlines():
        match = re.match(rf"{re.escape(name)}(\{{(.*)\}})? (\S+)$", line)
        if not match:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            found += float(match.group(3))
    return found
