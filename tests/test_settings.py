"""The settings as one contract: sections read by the flat variable names every deployment uses,
and the Temporal connection as Temporal's own client configuration (a TOML profile, the
TEMPORAL_* variables over it), with no secret ever shown."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import ValidationError

from settings import ConfigError, Settings
from settings.loader import config_error, settings, variable_names
from tests.support.shared import REPO

PROFILES = """
[profile.default]
address = "file-host:7233"
namespace = "file-namespace"

[profile.cloud]
address = "research.a1b2c.tmprl.cloud:7233"
namespace = "research.a1b2c"
api_key = "profile-key-that-must-not-show"

[profile.cloud.tls]
server_name = "research.a1b2c.tmprl.cloud"
"""

#: What a person's shell may already hold for Temporal: each test starts without them.
TEMPORAL_VARIABLES = (
    "TEMPORAL_ADDRESS",
    "TEMPORAL_NAMESPACE",
    "TEMPORAL_API_KEY",
    "TEMPORAL_PROFILE",
    "TEMPORAL_CONFIG_FILE",
    "TEMPORAL_TLS",
    "TEMPORAL_TLS_SERVER_NAME",
)


@pytest.fixture
def profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in TEMPORAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "temporal.toml"
    path.write_text(PROFILES)
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(path))
    return path


def test_the_profile_gives_the_connection_and_a_variable_that_is_set_wins(
    profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings(_env_file=None).temporal.connect_config() == {
        "target_host": "file-host:7233",
        "namespace": "file-namespace",
    }
    monkeypatch.setenv("TEMPORAL_ADDRESS", "127.0.0.1:7300")
    assert Settings(_env_file=None).temporal.connect_config() == {
        "target_host": "127.0.0.1:7300",  # the variable, over the profile
        "namespace": "file-namespace",  # the profile, where no variable says otherwise
    }


def test_a_named_profile_brings_its_api_key_and_tls_and_the_variables_adjust_them(
    profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPORAL_PROFILE", "cloud")
    cloud = Settings(_env_file=None).temporal.connect_config()
    assert cloud["target_host"] == "research.a1b2c.tmprl.cloud:7233"
    assert cloud["api_key"] == "profile-key-that-must-not-show"
    tls = cloud["tls"]
    assert not isinstance(tls, bool) and tls.domain == "research.a1b2c.tmprl.cloud"

    monkeypatch.setenv("TEMPORAL_API_KEY", "variable-key")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "research-staging.a1b2c")
    monkeypatch.setenv("TEMPORAL_TLS_SERVER_NAME", "staging.example.org")
    adjusted = Settings(_env_file=None).temporal.connect_config()
    assert adjusted["api_key"] == "variable-key"
    assert adjusted["namespace"] == "research-staging.a1b2c"
    tls = adjusted["tls"]
    assert not isinstance(tls, bool) and tls.domain == "staging.example.org"

    monkeypatch.setenv("TEMPORAL_TLS", "false")
    assert Settings(_env_file=None).temporal.connect_config()["tls"] is False


def test_without_a_profile_or_variables_it_is_the_local_dev_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in TEMPORAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", "/nonexistent/temporal.toml")
    assert Settings(_env_file=None).temporal.connect_config() == {
        "target_host": "localhost:7233",
        "namespace": "default",
    }
    # an API key alone turns TLS on, as the SDK does for Temporal Cloud
    keyed = Settings(_env_file=None, temporal_api_key="k" * 20).temporal.connect_config()
    assert keyed["tls"] is True


def test_a_env_file_reaches_the_connection_too(profiles: Path, tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("TEMPORAL_ADDRESS=dotenv-host:7233\nTEMPORAL_TASK_QUEUE=research-b\n")
    temporal = Settings(_env_file=dotenv).temporal
    assert temporal.connect_config()["target_host"] == "dotenv-host:7233"
    assert temporal.task_queue == "research-b" and temporal.target == "dotenv-host:7233"


def test_a_profile_that_does_not_load_is_one_line_naming_the_variables(
    profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPORAL_PROFILE", "staging")
    temporal = Settings(_env_file=None).temporal
    with pytest.raises(ConfigError) as missing:
        temporal.connect_config()
    assert str(missing.value).startswith("TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE")
    assert "staging" in str(missing.value) and "\n" not in str(missing.value)
    assert temporal.target == "localhost:7233"  # said in messages: it never raises itself

    profiles.write_text('[profile.default]\napi_key = "broken-key-never-shown\n')
    monkeypatch.delenv("TEMPORAL_PROFILE")
    with pytest.raises(ConfigError) as broken:
        Settings(_env_file=None).temporal.connect_config()
    assert "broken-key" not in str(broken.value) and "\n" not in str(broken.value)


def test_no_key_shows_in_a_repr_a_string_a_dump_or_a_log_line(
    profiles: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("TEMPORAL_PROFILE", "cloud")
    keys = {
        "temporal_api_key": "temporal-key-0123456789",
        "openai_api_key": "sk-openai-0123456789",
        "tavily_api_key": "tvly-0123456789",
        "research_api_tokens": "alice:alice-token-0123456789",
        "smtp_password": "smtp-password-0123456789",
    }
    loaded = Settings(_env_file=None, **keys)
    assert loaded.temporal.connect_config()["api_key"] == keys["temporal_api_key"]
    with caplog.at_level(logging.INFO):
        logging.getLogger("settings-test").info("settings %s / %r", loaded, loaded)
        logging.getLogger("settings-test").info("temporal %s", loaded.temporal)
    shown = [
        repr(loaded),
        str(loaded),
        repr(loaded.temporal),
        loaded.model_dump_json(),
        str(loaded.model_dump()),
        caplog.text,
    ]
    for secret in [*keys.values(), "profile-key-that-must-not-show"]:
        assert not any(secret in text for text in shown), secret


def test_sections_read_todays_flat_names_and_the_older_one() -> None:
    loaded = Settings(
        _env_file=None,
        llm_model="llama3.1",
        llm_request_timeout_s=85,  # LLM_SILENCE_TIMEOUT_S's older name
        search_provider="local",
        research_corpus_dir="/corpus",
        research_user="ada",
        standing_max_runs_per_day=48,
        workflow_sandbox="true",
    )
    assert loaded.llm.model == "llama3.1" and loaded.llm.model_for("complex") == "llama3.1"
    assert loaded.llm.silence_timeout_s == 85
    assert loaded.search.provider == "local" and loaded.corpus.folder == Path("/corpus")
    assert loaded.access.user == "ada" and loaded.limits.standing_runs_per_day == 48
    assert loaded.worker.sandbox is True
    assert {"temporal_address", "llm_model", "research_user", "temporal_profile"} <= (
        variable_names()
    )


def test_the_shell_user_is_not_research_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the settings' own variables are read: USER (every shell's) names no section field."""
    monkeypatch.setenv("USER", "root")
    monkeypatch.delenv("RESEARCH_USER", raising=False)
    assert Settings(_env_file=None).access.user == "local"


def test_a_bad_value_is_one_line_naming_its_variable_and_a_secret_is_never_echoed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.cache_clear()
    monkeypatch.setenv("LLM_CALL_LIMIT_S", "nan")
    try:
        with pytest.raises(ConfigError, match=r"^LLM_CALL_LIMIT_S: .*\(got 'nan'\)$"):
            settings()
        monkeypatch.setenv("LLM_CALL_LIMIT_S", "900")
        monkeypatch.setenv("SMTP_PORT", "not-a-port")
        with pytest.raises(ConfigError, match="^SMTP_PORT: "):
            settings()
    finally:
        settings.cache_clear()  # the next test reads its own environment
    with pytest.raises(ValidationError) as refused:
        Settings(_env_file=None, temporal_api_key=1234567890123)
    said = str(config_error(refused.value))
    assert said.startswith("TEMPORAL_API_KEY: ") and "1234567890123" not in said


def test_every_variable_read_is_documented() -> None:
    docs = "".join(page.read_text() for page in (REPO / "docs").glob("*.md"))
    undocumented = sorted(name.upper() for name in variable_names() if name.upper() not in docs)
    assert not undocumented, f"read but in no page of docs/: {undocumented}"
