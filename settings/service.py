"""How the service runs for its people: the library, who may use it, what each may take, how they
hear of results, and the worker's own capacity."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr

from settings.base import DATA_DIR, Section

#: RESEARCH_USER's default: the CLI's and the MCP server's user, a name no web user may take.
DEFAULT_USER = "local"


class LibrarySettings(Section):
    """Where finished research is kept, and the folder the web app and the worker share (the web
    app's state and the users' uploads, which the worker searches)."""

    db_url: str = Field(
        f"sqlite:///{DATA_DIR / 'research.sqlite'}", validation_alias="research_db_url"
    )
    data_dir: Path = Field(DATA_DIR, validation_alias="research_data_dir")


class AccessSettings(Section):
    """Who the research belongs to and who may reach the web app (starter/web/identity/)."""

    #: Who owns the research started from the CLI, the MCP server, or the web app without tokens.
    user: str = Field(DEFAULT_USER, validation_alias="research_user")
    #: Comma-separated NAME:TOKEN pairs; unset, there is one user (RESEARCH_USER) and the app may
    #: only listen on a loopback address.
    api_tokens: SecretStr | None = Field(None, validation_alias="research_api_tokens")
    #: The users of RESEARCH_API_TOKENS whose token reads the web app's /metrics (a scraper's),
    #: comma-separated; unset, only a caller on the same machine reads it.
    metrics_users: str = Field("", validation_alias="research_metrics_users")
    #: Signs the web app's session cookies; unset, the key is derived from RESEARCH_API_TOKENS.
    #: Every replica behind one load balancer needs the same value.
    session_secret: SecretStr | None = Field(None, validation_alias="research_session_secret")
    #: Sign-in with the team's OpenID Connect provider (starter/web/identity/oidc.py, docs/oidc.md), beside
    #: or instead of the tokens: the issuer URL (discovery at /.well-known/openid-configuration),
    #: the client registered there (redirect URI: RESEARCH_PUBLIC_URL + /auth/callback), the
    #: claim that names the user, and who may sign in (`NAME` or `group:NAME`, comma-separated).
    oidc_issuer: str | None = Field(None, validation_alias="research_oidc_issuer")
    oidc_client_id: str | None = Field(None, validation_alias="research_oidc_client_id")
    oidc_client_secret: SecretStr | None = Field(
        None, validation_alias="research_oidc_client_secret"
    )
    oidc_user_claim: str = Field("email", validation_alias="research_oidc_user_claim")
    oidc_allowed: str = Field("", validation_alias="research_oidc_allowed")
    oidc_groups_claim: str = Field("groups", validation_alias="research_oidc_groups_claim")
    #: Host names the web app answers to without access control, besides localhost and the
    #: loopback addresses (comma-separated; DNS rebinding protection, starter/web/guard/shield.py).
    allowed_hosts: str = Field("", validation_alias="research_allowed_hosts")


class WebSettings(Section):
    """The web app's own capacity (docs/web-app.md: Limits): connections it holds at once (503
    beyond); upload bytes it holds in memory at once in all, and uploads at once per user; report
    pages rendered at once, in all and per user (a user's further renders wait behind everyone
    else's); `POST /api/check` at once in all and per user (starter/web/services/checks.py: each
    is a child process with CPU work of seconds to minutes)."""

    max_connections: int = Field(500, ge=1, validation_alias="web_max_connections")
    uploads_in_flight_mb: int = Field(64, ge=6, validation_alias="web_uploads_in_flight_mb")
    uploads_per_user: int = Field(2, ge=1, validation_alias="web_uploads_per_user")
    renders: int = Field(2, ge=1, validation_alias="web_renders")
    renders_per_user: int = Field(1, ge=1, validation_alias="web_renders_per_user")
    checks: int = Field(3, ge=1, validation_alias="web_checks")
    checks_per_user: int = Field(2, ge=1, validation_alias="web_checks_per_user")


class LimitsSettings(Section):
    """What each user may take, through any client, so no one user can take the service: their
    documents (bytes and files, 507 beyond; the text the index keeps of them, read by the worker),
    research running at once and started in a minute (429 with Retry-After), standing research,
    and the runs a day all of a user's schedules may start together (starter/client/standing.py;
    at most one run a minute each, whatever the spec)."""

    upload_quota_mb: int = Field(100, ge=1, validation_alias="upload_quota_mb")
    upload_quota_files: int = Field(100, ge=1, validation_alias="upload_quota_files")
    #: A PDF's text can be far larger than its file: a document past it is skipped, with the reason.
    upload_quota_text_chars: int = Field(
        50_000_000, ge=1000, validation_alias="upload_quota_text_chars"
    )
    running_per_user: int = Field(10, ge=1, validation_alias="research_running_per_user")
    starts_per_minute: int = Field(20, ge=1, validation_alias="research_starts_per_minute")
    standing_per_user: int = Field(20, ge=1, validation_alias="standing_max_per_user")
    standing_runs_per_day: int = Field(1440, ge=1, validation_alias="standing_max_runs_per_day")


class NotifySettings(Section):
    """Notifications (activities/notify/, docs/standing-research.md): webhook
    URLs that get every event of every user, comma-separated; the key their bodies are signed with
    (X-Research-Signature); private and loopback receivers only with WEBHOOK_ALLOW_PRIVATE=1.
    Email as a second channel: every event to NOTIFY_EMAIL_TO (comma-separated) through this SMTP
    server (SMTP_STARTTLS: upgrade the connection; SMTP_USER / SMTP_PASSWORD: log in)."""

    webhooks: str = Field("", validation_alias="research_webhooks")
    webhook_secret: SecretStr | None = Field(None, validation_alias="research_webhook_secret")
    webhook_allow_private: bool = Field(False, validation_alias="webhook_allow_private")
    #: Where people open the web app: the links in notifications (and the OIDC redirect) point under it.
    public_url: str = Field("http://127.0.0.1:8000", validation_alias="research_public_url")
    smtp_host: str | None = Field(None, validation_alias="smtp_host")
    smtp_port: int = Field(587, ge=1, le=65535, validation_alias="smtp_port")
    smtp_user: str | None = Field(None, validation_alias="smtp_user")
    smtp_password: SecretStr | None = Field(None, validation_alias="smtp_password")
    smtp_from: str = Field("deep-research@localhost", validation_alias="smtp_from")
    smtp_starttls: bool = Field(True, validation_alias="smtp_starttls")
    email_to: str = Field("", validation_alias="notify_email_to")


class LangfuseSettings(Section):
    """Prompt management and tracing (activities/tracing.py); everything works without them."""

    public_key: str | None = Field(None, validation_alias="langfuse_public_key")
    secret_key: SecretStr | None = Field(None, validation_alias="langfuse_secret_key")
    host: str | None = Field(None, validation_alias="langfuse_host")
    #: How long a research call waits for Langfuse's prompt before using the file (PromptBook).
    prompt_wait_s: float = Field(0.5, gt=0, le=30, validation_alias="langfuse_prompt_wait_s")


class WorkerSettings(Section):
    """The worker's capacity (docs/performance.md). Activities are mostly waiting on an LLM or a
    search over HTTP, as coroutines, so a slot costs almost nothing; 20 slots capped a worker at
    20 calls in flight (80 calls/s at 250 ms a call) and pushed activities off eager dispatch,
    through the server. The CPU-heavy parts have their own limits (EXTRACT_PROCESSES,
    CRAWL_CONCURRENCY). Workflow tasks are short CPU work that shares one GIL: more slots do not
    make them faster (measured: 10 and 50 alike)."""

    max_concurrent_activities: int = Field(100, ge=1, validation_alias="max_concurrent_activities")
    max_concurrent_workflow_tasks: int = Field(
        10, ge=1, validation_alias="max_concurrent_workflow_tasks"
    )
    #: Run workflow code in Temporal's sandbox (worker.py says what it costs and what it checks).
    sandbox: bool = Field(False, validation_alias="workflow_sandbox")
    #: The worker's /metrics (Prometheus) and /healthz on this port, every interface (telemetry/);
    #: unset, neither is served.
    metrics_port: int | None = Field(None, ge=1, le=65535, validation_alias="worker_metrics_port")
    #: Seconds a stopping worker lets its running activities finish before it cancels them (they
    #: are then retried on another worker). Kubernetes: the longest activity, 3,660 s (docs/team.md).
    shutdown_grace_s: float = Field(
        20.0, ge=0, le=24 * 3600, validation_alias="worker_shutdown_grace_s"
    )
