"""The extraction children are shared in turns between lanes (a corpus folder per
user's uploads, the web's pages), so one user's backlog of slow documents never stands in front of
another's document. Real child processes; the order the documents finish in is what is checked."""

from __future__ import annotations

import threading
import time

from activities.web.bounded import ExtractionPool, Limits


def test_another_lanes_document_is_read_before_one_lanes_backlog_drains() -> None:
    pool = ExtractionPool(Limits(memory_mb=512, timeout_s=30, processes=1))
    finished: list[str] = []
    lock = threading.Lock()

    def read(lane: str, label: str, seconds: float) -> None:
        pool.run_now(time.sleep, seconds, lane=lane)
        with lock:
            finished.append(label)

    try:
        pool.run_now(time.sleep, 0, lane="warm-up")  # the child started once
        backlog = [
            threading.Thread(target=read, args=("/uploads/alice", f"alice-{n}", 0.3))
            for n in range(5)
        ]
        for thread in backlog:
            thread.start()
        time.sleep(0.1)  # alice's backlog waits; now bob's one document
        other = threading.Thread(target=read, args=("/uploads/bob", "bob", 0.01))
        other.start()
        for thread in [*backlog, other]:
            thread.join(30)
    finally:
        pool.close()
    assert len(finished) == 6
    assert finished.index("bob") <= 2, finished  # at most the document under way before it
