"""Each user's documents within their quota (507 in one line beyond, another
user unaffected), and a file name too long for a file system refused in one line with nothing left
on disk. A real server, real files."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from activities.corpus import uploads
from tests.starter.web.conftest import (
    TOKENS,
    WebServer,
    WebWorker,
    one_line_error,
    running_app,
    web_config,
)

KIB = 1024


@pytest.fixture
def server(web_worker: WebWorker, tmp_path: Path) -> Iterator[WebServer]:
    config = web_config(
        web_worker,
        TOKENS,
        research_data_dir=tmp_path / "data",
        upload_quota_mb=1,
        upload_quota_files=4,
    )
    with running_app(config, TOKENS) as running:
        yield running


def _on_disk(tmp_path: Path) -> list[Path]:
    return [p for p in (tmp_path / "data").rglob("*") if p.is_file() and p.name != ".lock"]


@pytest.mark.parametrize("letter", ["😀", "漢", "ア"])
async def test_a_name_too_long_for_a_file_system_is_422_and_nothing_stays_behind(
    server: WebServer, tmp_path: Path, letter: str
) -> None:
    name = letter * (256 // len(letter.encode()) + 3) + ".md"  # under 120 characters for CJK, emoji
    async with server.client("alice") as alice:
        response = await alice.post(
            "/api/documents", files={"file": (name, b"# Notes\n\nkept\n", "text/markdown")}
        )
        assert "too long" in one_line_error(response, 422)
        assert (await alice.get("/api/documents")).json() == []
    assert _on_disk(tmp_path) == []


async def test_one_users_documents_stop_at_their_quota_and_anothers_are_taken(
    server: WebServer, tmp_path: Path
) -> None:
    """1 MB and 4 files each: 300 KB documents are taken three times, the fourth is 507; a
    small fifth-file check after; bob uploads meanwhile."""
    body = b"# Part\n\n" + b"quokka census words " * (300 * KIB // 20)
    async with server.client("alice") as alice, server.client("bob") as bob:
        taken = [
            await alice.post("/api/documents", files={"file": (f"p{i}.md", body, "text/markdown")})
            for i in range(3)
        ]
        assert [r.status_code for r in taken] == [201, 201, 201]
        over = await alice.post("/api/documents", files={"file": ("p4.md", body, "text/markdown")})
        assert "MB" in one_line_error(over, 507)
        small = await alice.post(
            "/api/documents", files={"file": ("s.md", b"# S\n", "text/markdown")}
        )
        assert small.status_code == 201
        fifth = await alice.post(
            "/api/documents", files={"file": ("t.md", b"# T\n", "text/markdown")}
        )
        assert "documents" in one_line_error(fifth, 507)
        other = await bob.post("/api/documents", files={"file": ("b.md", body, "text/markdown")})
        assert other.status_code == 201, other.text
        assert len((await alice.get("/api/documents")).json()) == 4


def test_what_a_dead_upload_left_behind_is_removed_by_the_next_upload(tmp_path: Path) -> None:
    root = tmp_path / "uploads"
    mine = uploads.owner_folder(root, "alice")
    dead = mine / "0123456789ab"
    dead.mkdir(parents=True)
    partial = dead / ".part-0123456789ab"
    partial.write_bytes(b"x" * 1000)
    old = time.time() - uploads.STALE_PART_S - 60
    os.utime(partial, (old, old))
    fresh = mine / "ba9876543210"  # an upload under way now: kept
    fresh.mkdir()
    (fresh / ".part-ba9876543210").write_bytes(b"y")
    uploads.save(root, "alice", "notes.md", b"# Notes\n")
    assert not dead.exists()
    assert (fresh / ".part-ba9876543210").exists()


def test_the_web_app_removes_what_dead_uploads_left_when_it_starts(
    web_worker: WebWorker, tmp_path: Path
) -> None:
    root = uploads.uploads_root(tmp_path / "data")
    dead = uploads.owner_folder(root, "bob") / "00112233aabb"
    dead.mkdir(parents=True)
    partial = dead / ".part-00112233aabb"
    partial.write_bytes(b"z" * 4096)
    old = time.time() - uploads.STALE_PART_S - 5
    os.utime(partial, (old, old))
    with running_app(web_config(web_worker, TOKENS, research_data_dir=tmp_path / "data"), TOKENS):
        assert not dead.exists()
