"""The settings as one object in sections, read once per process from the environment (and `.env`
files), by the flat variable names every deployment already uses.

Every process of a deployment reads the same variables (`make dev` gives its dev server, worker and
web app one environment; Kubernetes one ConfigMap and Secret), so what one process needs to know
of another's settings (the web app: what the worker searches, which model writes) it reads from
its own: nothing is passed between processes.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import AliasChoices, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.sources import EnvSettingsSource

from settings.base import HOME, ConfigError, Section
from settings.llm import LLMSettings
from settings.service import (
    AccessSettings,
    LangfuseSettings,
    LibrarySettings,
    LimitsSettings,
    NotifySettings,
    WebSettings,
    WorkerSettings,
)
from settings.sources import CorpusSettings, CrawlSettings, PapersSettings, SearchSettings
from settings.temporal import TemporalSettings


class Settings(BaseSettings):
    """Built from the environment, or from keyword arguments by the same flat names in lower case
    (`Settings(llm_model="llama3.1", _env_file=None)`, as tests and tools do)."""

    model_config = SettingsConfigDict(
        env_file=(HOME / ".env", ".env"), extra="ignore", allow_inf_nan=False, frozen=True
    )

    temporal: TemporalSettings = Field(default_factory=TemporalSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    papers: PapersSettings = Field(default_factory=PapersSettings)
    corpus: CorpusSettings = Field(default_factory=CorpusSettings)
    crawl: CrawlSettings = Field(default_factory=CrawlSettings)
    library: LibrarySettings = Field(default_factory=LibrarySettings)
    access: AccessSettings = Field(default_factory=AccessSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    notify: NotifySettings = Field(default_factory=NotifySettings)
    langfuse: LangfuseSettings = Field(default_factory=LangfuseSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)

    def __init__(self, **values: Any) -> None:
        """By the flat names, which no signature can list (the pydantic plugin's would offer only
        the sections), or by whole sections; `_env_file=None` reads no `.env`."""
        super().__init__(**values)

    @model_validator(mode="before")
    @classmethod
    def _into_sections(cls, data: Any) -> Any:
        """Flat names go to every section (each takes its own and ignores the rest); a section
        given whole (`temporal=TemporalSettings(...)`) is kept as given."""
        if not isinstance(data, dict):
            return data
        flat = {key.lower(): value for key, value in data.items() if key not in cls.model_fields}
        return {name: data.get(name, flat) for name in cls.model_fields}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, _Variables(settings_cls, env_settings, dotenv_settings)


def variable_names() -> set[str]:
    """Every variable the settings read, in lower case (older names included)."""
    names: set[str] = set()
    for section in Settings.model_fields.values():
        model = section.annotation
        assert isinstance(model, type) and issubclass(model, Section)
        for field in model.model_fields.values():
            alias = field.validation_alias
            if isinstance(alias, str):
                names.add(alias)
            elif isinstance(alias, AliasChoices):
                names.update(choice for choice in alias.choices if isinstance(choice, str))
    return names


class _Variables(PydanticBaseSettingsSource):
    """The sections' variables from the environment over the `.env` files, by their flat names:
    pydantic-settings would look for a section's fields under `LLM__MODEL`."""

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        env: PydanticBaseSettingsSource,
        dotenv: PydanticBaseSettingsSource,
    ) -> None:
        super().__init__(settings_cls)
        assert isinstance(env, EnvSettingsSource) and isinstance(dotenv, EnvSettingsSource)
        self._found = {**dotenv.env_vars, **env.env_vars}

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # every value comes from __call__

    def __call__(self) -> dict[str, Any]:
        known = variable_names()
        return {name: value for name, value in self._found.items() if name in known}


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The process's settings; a value that does not validate raises `ConfigError` in one line."""
    try:
        return Settings()
    except ValidationError as err:
        raise config_error(err) from None


def config_error(err: ValidationError) -> ConfigError:
    """The first problem, naming its variable; the value is shown unless it may be a secret."""
    first = err.errors()[0]
    name = str(first["loc"][-1]).upper() if first["loc"] else "a setting"
    secret = any(word in name for word in ("KEY", "SECRET", "URL", "PASSWORD", "TOKEN"))
    given = "" if secret else f" (got {str(first.get('input'))[:80]!r})"
    return ConfigError(f"{name}: {first['msg']}{given}")
