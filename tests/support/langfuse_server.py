"""A stand-in for Langfuse: the prompt-management API and the OpenTelemetry trace intake.

It speaks what the real Langfuse SDK sends: Basic-auth JSON calls under `/api/public/v2/prompts`
and OTLP/HTTP protobuf (gzip-compressed) posts to `/api/public/otel/v1/traces`, which it decodes
into plain spans so tests can check trace grouping, sessions, prompts and usage.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.http_doubles import local_server, send_json, serving


@dataclass
class Span:
    trace_id: str
    name: str
    attributes: dict[str, Any]


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


class FakeLangfuse:
    def __init__(self, public_key: str, secret_key: str) -> None:
        self.auth = "Basic " + base64.b64encode(f"{public_key}:{secret_key}".encode()).decode()
        #: name -> versions, newest last; each a dict in the API's shape.
        self.prompts: dict[str, list[dict[str, Any]]] = {}
        self.spans: list[Span] = []
        self.requests: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.requests.append(("GET", self.path))
                if not self._authorised():
                    return
                url = urlparse(self.path)
                if url.path.startswith("/api/public/v2/prompts/"):
                    name = unquote(url.path.rsplit("/", 1)[1])
                    label = parse_qs(url.query).get("label", ["production"])[0]
                    found = [p for p in fake.prompts.get(name, []) if label in p["labels"]]
                    if found:
                        return self._json(200, found[-1])
                    return self._json(404, {"message": f"Prompt not found: {name}"})
                self._json(404, {"message": "not here"})

            def do_POST(self) -> None:
                fake.requests.append(("POST", self.path))
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if not self._authorised():
                    return
                if self.path.startswith("/api/public/otel/v1/traces"):
                    if self.headers.get("Content-Encoding") == "gzip":
                        body = gzip.decompress(body)
                    fake._ingest(body)
                    data = ExportTraceServiceResponse().SerializeToString()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/x-protobuf")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if self.path.startswith("/api/public/v2/prompts"):
                    created = fake.add_prompt(**json.loads(body))
                    return self._json(200, created)
                self._json(404, {"message": "not here"})

            def _authorised(self) -> bool:
                if self.headers.get("Authorization") == fake.auth:
                    return True
                self._json(401, {"message": "Invalid credentials"})
                return False

            def _json(self, status: int, payload: Any) -> None:
                send_json(self, status, payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = local_server(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def add_prompt(
        self, name: str, prompt: str, labels: list[str] | None = None, config: Any = None, **_: Any
    ) -> dict[str, Any]:
        versions = self.prompts.setdefault(name, [])
        labels = labels or []
        for older in versions:  # a label belongs to one version at a time
            older["labels"] = [label for label in older["labels"] if label not in labels]
        created = {
            "type": "text",
            "name": name,
            "prompt": prompt,
            "version": len(versions) + 1,
            "config": config or {},
            "labels": labels,
            "tags": [],
        }
        versions.append(created)
        return created

    def _ingest(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        Span(
                            trace_id=span.trace_id.hex(),
                            name=span.name,
                            attributes={kv.key: _value(kv.value) for kv in span.attributes},
                        )
                    )

    def generations(self) -> list[Span]:
        return [
            s for s in self.spans if s.attributes.get("langfuse.observation.type") == "generation"
        ]


@contextmanager
def running_langfuse(
    public_key: str = "pk-lf-test", secret_key: str = "sk-lf-test"
) -> Iterator[FakeLangfuse]:
    fake = FakeLangfuse(public_key, secret_key)
    with serving(fake.server):
        yield fake
