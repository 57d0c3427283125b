"""The one way every process (worker, CLI, MCP server, web app) reaches Temporal: the SDK's own
client configuration (`temporalio.envconfig`, as samples-python's env_config loads it), with the
pydantic payload converter on both sides.

The connection is a profile of Temporal's TOML config file (TEMPORAL_CONFIG_FILE, else
~/.config/temporalio/temporal.toml; profile TEMPORAL_PROFILE, else `default`), the same file the
Temporal CLI reads, under the variables this project reads with the SDK's names: TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY and the TEMPORAL_TLS* ones. A variable that is set wins over
the profile, field by field; with neither, `localhost:7233` and `default`. The variables come from
the project's settings (the environment and `.env`), so a `.env` reaches the connection too.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field, SecretStr

from settings.base import ConfigError, Section

if TYPE_CHECKING:  # the SDK's client side is imported when connecting (a CLI's start stays quick)
    from temporalio.client import Client
    from temporalio.converter import DataConverter
    from temporalio.envconfig import ClientConfigProfile, ClientConfigTLS, ClientConnectConfig

DEFAULT_ADDRESS = "localhost:7233"
DEFAULT_NAMESPACE = "default"


class TemporalSettings(Section):
    task_queue: str = Field("deep-research", validation_alias="temporal_task_queue")
    address: str | None = Field(None, validation_alias="temporal_address")
    namespace: str | None = Field(None, validation_alias="temporal_namespace")
    #: Temporal Cloud's API key: sent with TLS on (unless TEMPORAL_TLS=false says otherwise).
    api_key: SecretStr | None = Field(None, validation_alias="temporal_api_key")
    profile: str | None = Field(None, validation_alias="temporal_profile")
    config_file: Path | None = Field(None, validation_alias="temporal_config_file")
    #: TLS on (true) or off (false) whatever the profile says; unset, the profile's, else on with
    #: an API key and off without one.
    tls: bool | None = Field(None, validation_alias="temporal_tls")
    tls_server_name: str | None = Field(None, validation_alias="temporal_tls_server_name")
    tls_server_ca_cert_path: Path | None = Field(
        None, validation_alias="temporal_tls_server_ca_cert_path"
    )
    tls_client_cert_path: Path | None = Field(
        None, validation_alias="temporal_tls_client_cert_path"
    )
    tls_client_key_path: Path | None = Field(None, validation_alias="temporal_tls_client_key_path")

    def connect_config(self) -> ClientConnectConfig:
        """`Client.connect`'s keyword arguments: the profile, then the variables over it. Holds
        the API key in clear, so it is made when connecting and never kept on the settings."""
        loaded = self._profile()
        key = self.api_key.get_secret_value() if self.api_key else loaded.api_key
        profile = replace(
            loaded,
            address=self.address or loaded.address or DEFAULT_ADDRESS,
            namespace=self.namespace or loaded.namespace or DEFAULT_NAMESPACE,
            api_key=key or None,
            tls=self._tls(loaded.tls),
        )
        return profile.to_client_connect_config()

    @property
    def target(self) -> str:
        """Where the connection goes, for messages ("cannot reach Temporal at ..."); never raises,
        since it is said when something already went wrong."""
        try:
            return self.connect_config().get("target_host", DEFAULT_ADDRESS)
        except ConfigError:
            return self.address or DEFAULT_ADDRESS

    def _profile(self) -> ClientConfigProfile:
        """The config file's profile alone: the variables are this section's own fields (read
        from the environment and `.env` with every other setting), so the SDK reads none itself."""
        from temporalio.envconfig import ClientConfigProfile

        try:
            return ClientConfigProfile.load(
                self.profile, config_source=self.config_file, disable_env=True
            )
        except (RuntimeError, OSError) as err:  # the SDK's ConfigError is a RuntimeError
            where = self.config_file or "Temporal's default config file"
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise ConfigError(
                f"TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE ({where}): {first}"
            ) from None

    def _tls(self, loaded: ClientConfigTLS | None) -> ClientConfigTLS | None:
        """The profile's TLS with the TEMPORAL_TLS* variables over it; None when neither says
        anything (the SDK then turns TLS on for an API key)."""
        paths = (self.tls_server_ca_cert_path, self.tls_client_cert_path, self.tls_client_key_path)
        if self.tls is None and self.tls_server_name is None and not any(paths):
            return loaded
        from temporalio.envconfig import ClientConfigTLS

        base = loaded or ClientConfigTLS()
        return ClientConfigTLS(
            disabled=base.disabled if self.tls is None else not self.tls,
            server_name=self.tls_server_name or base.server_name,
            server_root_ca_cert=self.tls_server_ca_cert_path or base.server_root_ca_cert,
            client_cert=self.tls_client_cert_path or base.client_cert,
            client_private_key=self.tls_client_key_path or base.client_private_key,
        )


async def connect_temporal(
    temporal: TemporalSettings, connect_timeout: timedelta | None = None
) -> Client:
    """The pydantic converter on both sides, and Temporal's tracing interceptor when this
    process sends traces (telemetry/traces.py)."""
    from temporalio.client import Client

    from telemetry import traces

    return await Client.connect(
        **temporal.connect_config(),
        data_converter=data_converter(),
        connect_timeout=connect_timeout,
        interceptors=traces.client_interceptors(),
    )


@lru_cache(maxsize=1)
def data_converter() -> DataConverter:
    """The pydantic converter on both sides, with one leniency: a payload decoded without a type
    (a workflow's arguments when their count differs from its parameters', as a fresh start's
    does) that is JSON pydantic refuses but Python reads, such as a lone surrogate sent by the
    Temporal CLI, is handed over as Python reads it, so the workflow refuses it in one line
    instead of failing every workflow task while the SDK cannot decode it."""
    import json
    from typing import Any

    from pydantic import ValidationError as PayloadError
    from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
    from temporalio.converter import (
        CompositePayloadConverter,
        DataConverter,
        DefaultPayloadConverter,
        JSONPlainPayloadConverter,
    )

    class LenientJSON(PydanticJSONPlainPayloadConverter):
        def from_payload(self, payload: Any, type_hint: type | None = None) -> Any:
            try:
                return super().from_payload(payload, type_hint)
            except PayloadError as err:
                if type_hint not in (None, Any) or err.errors()[0]["type"] != "json_invalid":
                    raise
                return json.loads(payload.data)

    class PayloadConverter(CompositePayloadConverter):
        def __init__(self) -> None:
            super().__init__(
                *(
                    LenientJSON() if isinstance(c, JSONPlainPayloadConverter) else c
                    for c in DefaultPayloadConverter.default_encoding_payload_converters
                )
            )

    return DataConverter(payload_converter_class=PayloadConverter)
