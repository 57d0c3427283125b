"""The production-shaped stack in docker-compose.yml is valid and scalable."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"


def compose_command() -> list[str] | None:
    """`docker compose` (v2 plugin) or `docker-compose` (v1), whichever this machine has."""
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_docker_compose_config_accepts_the_stack() -> None:
    command = compose_command()
    if command is None:
        reason = "no docker client" if not shutil.which("docker") else "the docker client has no compose plugin"
        pytest.skip(f"cannot run `docker compose config`: {reason} on this machine")
    checked = subprocess.run([*command, "-f", str(COMPOSE), "config"], capture_output=True, text=True, cwd=REPO)
    assert checked.returncode == 0, checked.stderr
    assert "worker" in checked.stdout


def test_the_stack_has_temporal_on_postgresql_a_web_ui_and_scalable_workers() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    assert set(services) >= {"postgresql", "temporal", "temporal-ui", "worker"}
    assert services["temporal"]["environment"]["DB"] == "postgres12"
    worker = services["worker"]
    assert worker["build"] == "."
    # `--scale worker=N` needs workers without fixed names or published ports.
    assert "container_name" not in worker and "ports" not in worker
    assert worker["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"
    assert (REPO / "Dockerfile").read_text().rstrip().endswith('CMD ["python", "worker.py"]')
