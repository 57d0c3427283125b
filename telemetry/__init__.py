"""What an operator sees of a running deployment: metrics (metrics.py, counters.py), the worker's
health endpoint (health.py) and OpenTelemetry traces (traces.py). Nothing here is on unless a
setting asks for it (WORKER_METRICS_PORT, OTEL_EXPORTER_OTLP_ENDPOINT); the web app's /metrics is
always there, for callers with a token or on loopback."""
