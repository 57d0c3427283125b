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


def test_the_temporal_service_runs_with_the_dispatch_rate_of_make_dev() -> None:
    """The compose file's Temporal reads our dynamic config file, and it holds what `make dev`
    starts its dev server with (starter/stack.py), in the server's file format."""
    from starter.stack import DEV_SERVER_DYNAMIC_CONFIG

    temporal = yaml.safe_load(COMPOSE.read_text())["services"]["temporal"]
    mounted = {inside: outside for outside, inside, *_ in (volume.split(":") for volume in temporal["volumes"])}
    host_dir = REPO / mounted["/etc/temporal/config/dynamicconfig"]
    config_path = temporal["environment"]["DYNAMIC_CONFIG_FILE_PATH"]
    assert config_path.startswith("config/dynamicconfig/")  # relative to the image's /etc/temporal
    values = yaml.safe_load((host_dir / config_path.removeprefix("config/dynamicconfig/")).read_text())
    assert {key: entries[0]["value"] for key, entries in values.items()} == DEV_SERVER_DYNAMIC_CONFIG
    assert all(entries == [{"value": entries[0]["value"], "constraints": {}}] for entries in values.values())
