"""The production-shaped stack in docker-compose.yml is valid and scalable, and its web app never
starts open to the network."""

from __future__ import annotations

import os
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
        reason = (
            "no docker client"
            if not shutil.which("docker")
            else "the docker client has no compose plugin"
        )
        pytest.skip(f"cannot run `docker compose config`: {reason} on this machine")
    env = {**os.environ, "RESEARCH_API_TOKENS": "alice:a-token-of-enough-length"}
    checked = subprocess.run(
        [*command, "-f", str(COMPOSE), "config"], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert checked.returncode == 0, checked.stderr
    assert "worker" in checked.stdout and "web" in checked.stdout
    # Without tokens compose refuses the stack, saying what to set (an .env beside the file would set it).
    if not (REPO / ".env").exists():
        env.pop("RESEARCH_API_TOKENS")
        refused = subprocess.run(
            [*command, "-f", str(COMPOSE), "config"],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
        )
        assert refused.returncode != 0 and "set NAME:TOKEN pairs" in refused.stderr


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


def test_the_web_service_runs_the_app_of_the_worker_image_behind_tokens() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    web, worker = services["web"], services["worker"]
    assert web["build"] == worker["build"] == "."  # the same image
    assert web["command"] == [
        "python",
        "-m",
        "starter",
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
    ]
    assert web["ports"] == ["8000:8000"]
    assert web["depends_on"]["temporal"]["condition"] == "service_healthy"
    env = web["environment"]
    # Required, not defaulted: compose refuses to start the stack open on a non-loopback host.
    assert env["RESEARCH_API_TOKENS"].startswith("${RESEARCH_API_TOKENS:?")
    assert env["RESEARCH_SESSION_SECRET"] == "${RESEARCH_SESSION_SECRET:-}"
    # One Temporal, task queue and library for the app and the workers.
    for name in (
        "TEMPORAL_ADDRESS",
        "TEMPORAL_NAMESPACE",
        "TEMPORAL_TASK_QUEUE",
        "RESEARCH_DB_URL",
        "LLM_PRICES",
    ):
        assert env[name] == worker["environment"][name], name
    assert "RESEARCH_API_TOKENS" not in worker["environment"]


def test_the_image_ships_the_web_app_and_its_files() -> None:
    """The Dockerfile copies what `python -m starter serve` needs, and `pip install .` keeps the
    pages and static files (package data), so an installed copy serves them too."""
    import tomllib

    dockerfile = (REPO / "Dockerfile").read_text()
    packages = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]["find"]["include"]
    for package in (p.rstrip("*") for p in packages):  # every package `pip install .` installs
        assert f"COPY {package} ./{package}" in dockerfile, f"the image lacks {package}/"
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]
    shipped = package_data["starter.web"]
    web = REPO / "starter" / "web"
    data = [
        path for path in web.rglob("*") if path.is_file() and path.suffix not in (".py", ".pyc")
    ]
    assert {p.parent.name for p in data} == {"templates", "static"}
    for path in data:
        relative = path.relative_to(web)
        assert any(relative.match(pattern) for pattern in shipped), (
            f"{relative} is not package data"
        )
    exports = REPO / "starter" / "exports"
    assert [p for p in exports.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")] == []


def test_the_temporal_service_runs_with_the_dispatch_rate_of_make_dev() -> None:
    """The compose file's Temporal reads our dynamic config file, and it holds what `make dev`
    starts its dev server with (starter/cli/stack.py), in the server's file format."""
    from starter.cli.stack import DEV_SERVER_DYNAMIC_CONFIG

    temporal = yaml.safe_load(COMPOSE.read_text())["services"]["temporal"]
    mounted = {
        inside: outside
        for outside, inside, *_ in (volume.split(":") for volume in temporal["volumes"])
    }
    host_dir = REPO / mounted["/etc/temporal/config/dynamicconfig"]
    config_path = temporal["environment"]["DYNAMIC_CONFIG_FILE_PATH"]
    assert config_path.startswith("config/dynamicconfig/")  # relative to the image's /etc/temporal
    values = yaml.safe_load(
        (host_dir / config_path.removeprefix("config/dynamicconfig/")).read_text()
    )
    assert {
        key: entries[0]["value"] for key, entries in values.items()
    } == DEV_SERVER_DYNAMIC_CONFIG
    assert all(
        entries == [{"value": entries[0]["value"], "constraints": {}}]
        for entries in values.values()
    )


def _published(port: str | int | dict[str, object]) -> tuple[str, str]:
    """(host address, host port) of one `ports:` entry; a bare address means every interface."""
    if isinstance(port, dict):
        return str(port.get("host_ip") or "0.0.0.0"), str(port.get("published") or "")
    parts = str(port).split(":")
    if len(parts) == 3:
        return parts[0], parts[1]
    return "0.0.0.0", parts[0] if len(parts) == 2 else ""


def test_only_the_web_app_is_published_beyond_this_hosts_loopback() -> None:
    """Temporal's frontend and Web UI have no authentication and show every
    user's research; the compose file never publishes them on another interface."""
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name, service in services.items():
        for port in service.get("ports", []):
            host, _ = _published(port)
            if name == "web":
                continue
            assert host in ("127.0.0.1", "::1", "[::1]"), (name, port)
    assert [_published(p)[1] for p in services["web"]["ports"]] == ["8000"]
    assert "never publish them" in COMPOSE.read_text()


def test_the_web_app_and_the_workers_share_one_data_volume() -> None:
    """Uploads written by the web app are the ones the workers search."""
    compose = yaml.safe_load(COMPOSE.read_text())
    web, worker = compose["services"]["web"], compose["services"]["worker"]
    data_dir = worker["environment"]["RESEARCH_DATA_DIR"]
    assert web["environment"]["RESEARCH_DATA_DIR"] == data_dir
    mounts = {
        name: {v.split(":")[1]: v.split(":")[0] for v in service.get("volumes", [])}
        for name, service in (("web", web), ("worker", worker))
    }
    assert mounts["web"][data_dir] == mounts["worker"][data_dir]
    assert (
        mounts["web"][data_dir] in compose["volumes"]
    )  # a named volume, not a folder per container


def test_the_workers_get_the_notification_settings() -> None:
    """The workers deliver notifications, so they are the ones that need them."""
    worker = yaml.safe_load(COMPOSE.read_text())["services"]["worker"]["environment"]
    for name in (
        "RESEARCH_WEBHOOKS",
        "RESEARCH_WEBHOOK_SECRET",
        "RESEARCH_PUBLIC_URL",
        "SMTP_HOST",
        "SMTP_PORT",
        "SMTP_USER",
        "SMTP_PASSWORD",
        "SMTP_STARTTLS",
        "NOTIFY_EMAIL_TO",
    ):
        assert str(worker[name]).startswith(f"${{{name}:-"), name
