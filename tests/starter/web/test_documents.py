"""The user's documents over the JSON API: upload, list, delete, each user's own only;
the refusals (413, 415, 422) in one line; and the `sources` request field (422 for a value that is
not one, and for `web` when no web provider is configured). A real server, real files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.starter.web.conftest import (
    TOKENS,
    WebServer,
    WebWorker,
    one_line_error,
    running_app,
    web_config,
)

QUOKKA = b"# Quokka census\n\nRottnest Island counted 12,000 quokkas in the 2026 census.\n"


@pytest.fixture
def server(web_worker: WebWorker, tmp_path: Path) -> Iterator[WebServer]:
    config = web_config(web_worker, TOKENS, research_data_dir=tmp_path / "data")
    with running_app(config, TOKENS) as running:
        yield running


@pytest.fixture
def local_only(web_worker: WebWorker, tmp_path: Path) -> Iterator[WebServer]:
    config = web_config(
        web_worker, TOKENS, research_data_dir=tmp_path / "data", search_provider="local"
    )
    with running_app(config, TOKENS) as running:
        yield running


async def test_a_document_is_uploaded_listed_and_deleted_by_its_owner_only(
    server: WebServer, tmp_path: Path
) -> None:
    async with server.client("alice") as alice, server.client("bob") as bob:
        uploaded = await alice.post(
            "/api/documents", files={"file": ("quokka.md", QUOKKA, "text/markdown")}
        )
        assert uploaded.status_code == 201, uploaded.text
        doc = uploaded.json()
        assert (doc["name"], doc["size"]) == ("quokka.md", len(QUOKKA))
        assert doc["uploaded_at"].endswith("Z")

        assert (await alice.get("/api/documents")).json() == [doc]
        assert (await bob.get("/api/documents")).json() == []  # never another user's
        one_line_error(await bob.delete(f"/api/documents/{doc['id']}"), 404)
        assert (await alice.get("/api/documents")).json() == [doc]

        assert (await alice.delete(f"/api/documents/{doc['id']}")).status_code == 204
        assert (await alice.get("/api/documents")).json() == []
        one_line_error(await alice.delete(f"/api/documents/{doc['id']}"), 404)
    assert not list((tmp_path / "data").rglob("quokka.md"))


async def test_a_file_name_cannot_leave_the_owners_folder_or_carry_controls(
    server: WebServer, tmp_path: Path
) -> None:
    async with server.client("alice") as alice:
        uploaded = await alice.post(
            "/api/documents",
            files={"file": ("../../../etc/evil\x1b[31m\u202enotes.md", QUOKKA, "text/markdown")},
        )

    assert uploaded.status_code == 201, uploaded.text
    assert uploaded.json()["name"] == "evil[31mnotes.md"
    [stored] = (tmp_path / "data").rglob("*notes.md")
    assert stored.is_relative_to(tmp_path / "data" / "uploads")


@pytest.mark.parametrize(
    ("name", "data", "status", "words"),
    [
        ("big.md", b"#" * (5 * 1024 * 1024 + 1), 413, "larger than 5 MB"),
        ("huge.md", b"#" * (6 * 1024 * 1024), 413, "larger than 5 MB"),
        ("tool.exe", b"MZ\x90\x00", 415, "HTML (.html), PDF (.pdf) or Word (.docx)"),
        ("notes.docx", b"PK\x03\x04", 415, "not a Word document"),
        ("fake.pdf", b"hello", 415, "not a PDF file"),
        ("latin.txt", "caf\u00e9".encode("latin-1"), 415, "not UTF-8 text"),
        ("empty.md", b"  \n", 422, "empty"),
    ],
)
async def test_a_document_that_is_not_taken_is_refused_in_one_line(
    server: WebServer, name: str, data: bytes, status: int, words: str
) -> None:
    async with server.client("alice") as alice:
        refused = await alice.post("/api/documents", files={"file": (name, data)})
        assert words in one_line_error(refused, status)
        assert (await alice.get("/api/documents")).json() == []


async def test_an_upload_without_a_file_is_refused_in_one_line(server: WebServer) -> None:
    async with server.client("alice") as alice:
        message = one_line_error(await alice.post("/api/documents", data={"x": "1"}), 422)
    assert "file" in message


async def test_sources_other_than_the_five_are_refused_in_one_line(server: WebServer) -> None:
    async with server.client("alice") as alice:
        refused = await alice.post(
            "/api/research", json={"question": "What do quokkas eat?", "sources": "everywhere"}
        )
    assert one_line_error(refused, 422) == (
        "invalid sources 'everywhere': use one of configured, web, documents, both, papers"
    )


@pytest.mark.parametrize("sources", ["web", "both"])
async def test_web_sources_without_a_web_provider_are_refused_before_the_research_starts(
    local_only: WebServer, sources: str
) -> None:
    async with local_only.client("alice") as alice:
        refused = await alice.post(
            "/api/research", json={"question": "What do quokkas eat?", "sources": sources}
        )
        assert one_line_error(refused, 422).startswith(
            f"sources {sources}: no web search provider is configured (SEARCH_PROVIDER=local)"
        )
        listed = (await alice.get("/api/research")).json()
    assert all(item["question"] != "What do quokkas eat?" for item in listed)


async def test_a_word_document_is_taken(server: WebServer) -> None:
    """Edges: `.docx` was refused, though the corpus reads Word."""
    import io

    import docx

    document = docx.Document()
    document.add_paragraph("The Quillmoor ferry crosses twice a day.")
    data = io.BytesIO()
    document.save(data)
    async with server.client("alice") as alice:
        taken = await alice.post("/api/documents", files={"file": ("ferry.docx", data.getvalue())})
        assert taken.status_code == 201, taken.text
        assert [d["name"] for d in (await alice.get("/api/documents")).json()] == ["ferry.docx"]


async def test_an_upload_over_5_mb_from_the_page_is_the_styled_error_page(
    server: WebServer,
) -> None:
    """Edges: the page's upload form got raw JSON for a file over 5 MB."""
    async with server.client("alice") as alice:
        refused = await alice.post(
            "/documents", files={"file": ("huge.md", b"#" * (6 * 1024 * 1024))}
        )
    assert refused.status_code == 413
    assert refused.headers["content-type"].startswith("text/html")
    assert "larger than 5 MB" in refused.text and "/static/style.css" in refused.text
