"""`make bench`: what Langfuse costs a research, up or down.

Four real worker processes run the same light research against the OpenAI-protocol test server:
without Langfuse, with the Langfuse stand-in up, with Langfuse refusing connections, and with a
Langfuse that accepts connections and never answers. Prints the median of several runs each
(after one warm-up run, which builds the corpus index and opens connections).
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import sys
import tempfile
import threading
from pathlib import Path

RUNS = 7


def hanging_server() -> int:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def hold() -> None:  # every connection accepted and kept open, never answered
        while True:
            held.append(server.accept()[0])

    threading.Thread(target=hold, daemon=True).start()
    port: int = server.getsockname()[1]  # an IPv4 socket's name is (host, port)
    return port


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def main() -> None:
    from temporalio.testing import WorkflowEnvironment

    from settings import data_converter
    from tests.e2e.test_llm_research import research, start_worker, worker_env
    from tests.support.langfuse_server import running_langfuse
    from tests.support.llm_server import running_llm

    env = await WorkflowEnvironment.start_local(
        data_converter=data_converter(),
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        dev_server_log_level="error",
    )
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_llm() as llm,
        running_langfuse("pk-bench", "sk-bench") as lf,
    ):
        setups = {
            "no Langfuse": {},
            "Langfuse up": {"LANGFUSE_HOST": lf.url},
            "Langfuse refusing connections": {"LANGFUSE_HOST": f"http://127.0.0.1:{closed_port()}"},
            "Langfuse never answering": {"LANGFUSE_HOST": f"http://127.0.0.1:{hanging_server()}"},
        }
        workers = {}
        for name, extra in setups.items():
            keys = (
                {"LANGFUSE_PUBLIC_KEY": "pk-bench", "LANGFUSE_SECRET_KEY": "sk-bench"}
                if extra
                else {}
            )
            folder = Path(tmp) / name.replace(" ", "-")
            folder.mkdir()
            workers[name] = start_worker(worker_env(env, folder, llm, **extra, **keys), folder)
        try:
            for name, worker in workers.items():
                first = (await research(env.client, worker))[
                    3
                ]  # includes building the corpus index
                times = [(await research(env.client, worker))[3] for _ in range(RUNS)]
                print(
                    f"{name:32} first {first:.2f} s, then median {statistics.median(times):.2f} s, "
                    f"max {max(times):.2f} s over {RUNS} light researches"
                )
        finally:
            for worker in workers.values():
                worker.stop()
            await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
