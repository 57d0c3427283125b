"""The project's settings, in one place: what every process (worker, CLI, MCP server, web app)
reads from the environment, in sections (`settings().llm.model`, `settings().temporal.task_queue`),
by the flat variable names the README documents (LLM_MODEL, TEMPORAL_TASK_QUEUE).

- `loader.py`: the `Settings` object and `settings()`, the process's own, read once.
- `temporal.py`: the Temporal connection (the SDK's envconfig profiles) and the payload converter.
- `llm.py`, `sources.py`, `service.py`: the sections, each field with its variable.

Secrets (API keys) are `SecretStr`: they never show in a repr, a log line or an error, and never
travel in workflow inputs, results or history. This package imports nothing of the project's own.
"""

from settings.base import DATA_DIR, HOME, ConfigError
from settings.llm import DEFAULT_MODEL, LLM_CALL_LIMIT_MAX_S, OFFLINE_NOTICE
from settings.loader import Settings, settings
from settings.service import DEFAULT_USER
from settings.temporal import connect_temporal, data_converter

__all__ = [
    "DATA_DIR",
    "DEFAULT_MODEL",
    "DEFAULT_USER",
    "HOME",
    "LLM_CALL_LIMIT_MAX_S",
    "OFFLINE_NOTICE",
    "ConfigError",
    "Settings",
    "connect_temporal",
    "data_converter",
    "settings",
]
