"""Prometheus metrics from the Temporal SDK's own runtime, the product's counters included.

Why the SDK's exporter and not `prometheus_client`: the SDK's metrics (task slots, schedule-to-start
latency, activity and workflow failures, RPC latency) are produced in its Rust core and can only be
read from its runtime; and the product's counters are recorded through the same runtime's meter
(counters.py), whose workflow meter skips replays, so a research replayed after a worker restart
is not counted twice, which a process-local `prometheus_client` counter incremented from workflow
code would be. One exposition, one naming scheme, no second library.

The core serves its exposition on a loopback port of its own; the worker's health server
(health.py) and the web app's /metrics (starter/web/metrics.py) hand that text on, so a process
has one public port and the health endpoint sits beside the metrics.
"""

from __future__ import annotations

import socket
import urllib.request
from dataclasses import dataclass

from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

#: Seconds a scrape may wait for the core's exposition (it answers from memory, at once).
SCRAPE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class MetricsRuntime:
    """A Temporal runtime that exports Prometheus metrics, and where the core serves them."""

    runtime: Runtime
    url: str

    def exposition(self) -> bytes:
        """The Prometheus text exposition, as the core has it now."""
        with urllib.request.urlopen(self.url, timeout=SCRAPE_TIMEOUT_S) as answer:
            return bytes(answer.read())


_INSTALLED: MetricsRuntime | None = None


def install() -> MetricsRuntime:
    """The process's Temporal runtime with Prometheus export, made the SDK's default so every
    client connected from now on (settings.connect_temporal) records into it. Once per process:
    later calls return the same runtime. Counters end in `_total` and durations are in seconds,
    as Prometheus names them."""
    global _INSTALLED
    if _INSTALLED is None:
        port = _free_loopback_port()
        runtime = Runtime(
            telemetry=TelemetryConfig(
                metrics=PrometheusConfig(
                    bind_address=f"127.0.0.1:{port}",
                    counters_total_suffix=True,
                    durations_as_seconds=True,
                )
            )
        )
        Runtime.set_default(runtime, error_if_already_set=False)
        _INSTALLED = MetricsRuntime(runtime, f"http://127.0.0.1:{port}/metrics")
    return _INSTALLED


def installed() -> MetricsRuntime | None:
    return _INSTALLED


def _free_loopback_port() -> int:
    """A loopback port nobody holds now: the core binds the address it is given and cannot say
    which port it got for port 0."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
