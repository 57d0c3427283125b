"""llama.cpp's OpenAI-compatible server (as packaged by `llama-cpp-python[server]`) with a real
model, for `make test-models` and the real-model bench: `MODEL` names which (`smollm2`, the
default: SmolLM2-135M-Instruct; `qwen`: Qwen2.5-Coder-1.5B-Instruct Q4_K_M).

`make test-models` builds the server into its own virtualenv (`LLAMA_PYTHON`, default
`.venv-llm/bin/python`) and puts the model's GGUF under `.models/` (`MODEL_GGUF` overrides where
it is read from). The server listens on a free loopback port with an 8192-token window, the size
the issue's reports were measured at.
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


@dataclass(frozen=True)
class Model:
    #: The name the server answers to (`--model_alias`) and the worker asks for (LLM_MODEL).
    name: str
    gguf: str
    #: A light research's time budget: the journeys' `--time-budget` (a research that runs out
    #: of time writes its report from what it has, which is not what the journeys measure).
    time_budget_s: int


MODELS = {
    "smollm2": Model("smollm2-135m-instruct", "SmolLM2-135M-Instruct.Q4_1.gguf", 1500),
    # 1.4-7 tokens a second on 2 shared cores: a light research takes about 20 minutes.
    "qwen": Model("qwen2.5-coder-1.5b-instruct", "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf", 5400),
}
MODEL = MODELS[os.environ.get("MODEL", "smollm2")]
MODEL_GGUF = Path(os.environ.get("MODEL_GGUF", REPO / ".models" / MODEL.gguf))
MODEL_NAME = MODEL.name
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
        return f"{MODEL_GGUF} is missing: `make test-models` puts it there"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def threads_to_use() -> int:
    """One per core the machine's other work leaves free (at most 4, at least 1). llama.cpp's
    threads meet at every layer of every token, so one that waits for a core holds up the other:
    on these 2 cores beside two busy processes, SmolLM2 wrote 3-6 tokens a second with 2 threads
    and 15-19 with 1 (measured 2026-12-02). LLAMA_THREADS overrides."""
    if os.environ.get("LLAMA_THREADS", "").isdigit():
        return max(1, int(os.environ["LLAMA_THREADS"]))
    cores = os.cpu_count() or 1
    busy = round(os.getloadavg()[0]) if hasattr(os, "getloadavg") else 0
    return max(1, min(4, cores - busy))


@contextmanager
def running_llama(log: Path, context: int = CONTEXT) -> Iterator[LlamaServer]:
    """The server, ready to answer, stopped afterwards whatever happens."""
    port = free_port()
    threads = str(threads_to_use())
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
