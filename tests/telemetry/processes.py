"""Processes as a deployment runs them: a worker with its metrics port, the web app
(`python -m starter serve`), a light research started on a worker's queue; and a real OTLP/HTTP
receiver that keeps every span it is sent."""

from __future__ import annotations

import contextlib
import gzip
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from temporalio.client import Client, WorkflowHandle

from tests.support.llm_server import ScriptedLLM
from tests.support.workers import REPO, WorkerProcess, prepare_corpus, worker_env
from tests.telemetry.scrape import free_port, get, wait_for
from workflows.models import Depth, ResearchRequest, ResearchResult
from workflows.research import DeepResearchWorkflow

TOKEN = "alice-token-0123456789"
QUESTION = "How does the with statement use context managers in Python?"


def worker_with_metrics(
    address: str, llm: ScriptedLLM, folder: Path, **extra: str
) -> tuple[WorkerProcess, str]:
    """A worker on a queue of its own serving /metrics and /healthz, once it polls; and their base
    URL. Stop it with `.stop()`."""
    prepare_corpus(folder / "index")
    port = free_port()
    env = worker_env(
        address,
        f"tq-{folder.name[:20]}-{uuid.uuid4().hex[:6]}",
        llm.base_url,
        folder,
        WORKER_METRICS_PORT=str(port),
        **extra,
    )
    worker = WorkerProcess(env, folder / "worker.log").start()
    base = f"http://127.0.0.1:{port}"
    wait_for(f"{base}/healthz", 200)
    return worker, base


async def start_light(
    client: Client, worker: WorkerProcess
) -> WorkflowHandle[DeepResearchWorkflow, ResearchResult]:
    """A light research on WORKER's task queue."""
    return await client.start_workflow(
        DeepResearchWorkflow.run,
        ResearchRequest(query=QUESTION, depth=Depth.LIGHT),
        id=f"research-{uuid.uuid4().hex[:8]}",
        task_queue=worker.env["TEMPORAL_TASK_QUEUE"],
    )


@contextlib.contextmanager
def web_app(env: dict[str, str], log: Path) -> Iterator[str]:
    """The web app on a loopback port with RESEARCH_API_TOKENS set (alice); yields its base URL."""
    port = free_port()
    env = {
        **env,
        "RESEARCH_API_TOKENS": f"alice:{TOKEN}",
        "RESEARCH_DATA_DIR": str(log.parent / "web-data"),  # its own state, not the clone's
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "starter", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while get(f"{base}/api/health")[0] != 200:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the web app did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Collector:
    """Accepts `POST /v1/traces` (OTLP/HTTP, protobuf, plain or gzip) and keeps the spans with the
    name of the service that sent them."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        #: Every export request as received, decoded to protobuf's text form: all a collector sees.
        self.received: list[str] = []
        self.lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                collector.receive(ExportTraceServiceRequest.FromString(body))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def receive(self, request: ExportTraceServiceRequest) -> None:
        with self.lock:
            self.received.append(str(request))
        for resource_spans in request.resource_spans:
            attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    with self.lock:
                        self.spans.append(
                            {
                                "service": attributes.get("service.name"),
                                "scope": scope_spans.scope.name,
                                "name": span.name,
                                "trace_id": span.trace_id.hex(),
                                "span_id": span.span_id.hex(),
                                "parent_id": span.parent_span_id.hex(),
                                "attributes": {
                                    a.key: a.value.string_value for a in span.attributes
                                },
                            }
                        )

    @contextlib.contextmanager
    def running(self) -> Iterator[Collector]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
