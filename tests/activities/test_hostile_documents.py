"""The documents folder is as untrusted as the web: hostile files, made in the tests, cost that file
only, never the worker's memory, the index's availability or the terminal.

- a Word file of half a million empty paragraphs is read as a stream (flat memory); a part with
  too many elements is refused, a long text cut;
- text whose parsing is quadratic is abandoned at the extraction child's time limit;
- a FIFO (any file that is not a regular one) is refused at once, and neither a lock of the index
  nor a write transaction is held while a file is read;
- a file over CORPUS_MAX_FILE_BYTES is refused by its size, a binary one as not text;
- a file swapped for a symlink after the folder was listed is not read;
- control characters and bidi overrides never reach titles, headings or text;
- a file name with a newline cannot forge a line of output.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from activities.corpus import LocalCorpus, binary, index
from activities.corpus.documents import UnreadableDocument
from activities.corpus.reader import display_name, read_source
from activities.web import bounded
from activities.web.bounded import ExtractionPool, Limits
from settings import settings
from settings.sources import CorpusSettings
from tests.conftest import REPO
from tests.support.documents import make_docx, with_part

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#: What must never reach a title, a heading or a text: C0 (but tab and newline), DEL, C1, bidi.
UNSAFE = "".join(
    map(
        chr,
        [
            *range(0, 9),
            *range(11, 32),
            *range(127, 160),
            *range(0x202A, 0x202F),
            *range(0x2066, 0x206A),
        ],
    )
)


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nThe heron waits in the reeds.\n")
    return docs


def _names(urls: Iterator[str]) -> list[str]:
    return [url.rsplit("/", 1)[-1] for url in urls]


def _skips(corpus: LocalCorpus) -> list[tuple[str, str]]:
    return [(Path(path).name, why) for path, why in corpus.skipped()]


def _empty_paragraphs(count: int) -> bytes:
    xml = f'<?xml version="1.0"?><w:document xmlns:w="{_W}"><w:body>{"<w:p/>" * count}</w:body></w:document>'
    return with_part(make_docx([("p", "placeholder")]), "word/document.xml", xml.encode())


# --- Word: a stream, never a tree ---------------------------------------------------------------


def test_a_word_file_of_empty_paragraphs_is_read_as_a_stream_with_flat_memory(
    tmp_path: Path,
) -> None:
    bomb = tmp_path / "bomb.docx"
    bomb.write_bytes(_empty_paragraphs(500_000))  # 3 MiB of XML in a file of a few KiB
    assert bomb.stat().st_size < 64 * 1024
    # A fresh interpreter reads it and reports how far its peak RSS rose above the RSS it had
    # before (Linux: writing 5 to clear_refs resets the peak to the current RSS).
    probe = textwrap.dedent(
        """
        import re, sys
        from pathlib import Path
        from activities.corpus.binary import UnreadableDocument, docx_document
        from tests.support.documents import make_docx
        def rss(field):
            return int(re.search(field + r":\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))
        path = Path(sys.argv[1])
        docx_document(path, make_docx([("p", "warm up")]))
        data = path.read_bytes()
        Path("/proc/self/clear_refs").write_text("5")
        before = rss("VmRSS")
        try:
            docx_document(path, data)
            outcome = "read"
        except UnreadableDocument as err:
            outcome = str(err)
        print((rss("VmHWM") - before) // 1024)
        print(outcome)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(bomb)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    growth, outcome = done.stdout.splitlines()
    print(f"500,000 empty Word paragraphs: peak RSS {growth} MiB above the RSS before")
    assert outcome == "the Word document has no text"
    assert int(growth) < 30  # as a tree, about 70 MiB (and 2.5-5.8 GB for 50 MiB of them)


def test_a_word_part_with_too_many_elements_is_refused_and_a_long_text_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(binary, "MAX_DOCX_ELEMENTS", 10_000)
    with pytest.raises(
        UnreadableDocument, match="word/document.xml has more than 10,000 XML elements"
    ):
        binary.docx_document(tmp_path / "many.docx", _empty_paragraphs(20_000))

    monkeypatch.setattr(binary, "MAX_DOCX_CHARS", 5_000)
    long = binary.docx_document(
        tmp_path / "long.docx", make_docx([("p", f"Paragraph {n} " + "x" * 90) for n in range(500)])
    )
    assert "Paragraph 0 " in long.body and "Paragraph 499" not in long.body
    assert len(long.body) < 6_000


def test_a_word_bomb_in_the_folder_is_skipped_and_the_rest_searched(tmp_path: Path) -> None:
    docs = _folder(tmp_path)
    (docs / "bomb.docx").write_bytes(_empty_paragraphs(200_000))
    corpus = LocalCorpus(docs, tmp_path / "index")

    assert _names(h.url for h in corpus.search("heron reeds")) == ["good.md"]
    assert _skips(corpus) == [("bomb.docx", "the Word document has no text")]


# --- text: parsed in the child, with its time limit ---------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"), [("comments.md", "<!--" * 50_000), ("tags.html", "<a " * 30_000)]
)
def test_text_that_is_slow_to_parse_is_abandoned_at_the_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    quick = ExtractionPool(Limits(timeout_s=0.5, processes=1))
    monkeypatch.setattr(bounded, "pool", lambda: quick)
    try:
        docs = _folder(tmp_path)
        (docs / name).write_text(
            text
        )  # quadratic for the markdown and HTML parsers: tens of seconds
        corpus = LocalCorpus(docs, tmp_path / "index")

        assert _names(h.url for h in corpus.search("heron reeds")) == ["good.md"]
        assert _skips(corpus) == [(name, "reading it took longer than 0.5 s")]
    finally:
        quick.close()


# --- FIFOs, locks and transactions --------------------------------------------------------------


@pytest.mark.parametrize("name", ["pipe.md", "pipe.pdf", "pipe.docx"])
def test_a_fifo_in_the_folder_is_refused_without_waiting_for_a_writer(
    tmp_path: Path, name: str
) -> None:
    docs = _folder(tmp_path)
    fifo = docs / name
    os.mkfifo(fifo)
    corpus = LocalCorpus(docs, tmp_path / "index")
    done: list[index.IndexChanges] = []
    indexing = threading.Thread(target=lambda: done.append(corpus.refresh()), daemon=True)
    indexing.start()
    indexing.join(30)
    if indexing.is_alive():  # stuck in open(): give it a writer, so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert done, "indexing waited for a writer of the FIFO"

    assert [(Path(p).name, why) for p, why in done[0].skipped] == [
        (name, "not a regular file (a FIFO)")
    ]
    assert _names(h.url for h in corpus.search("heron reeds")) == ["good.md"]


def test_neither_a_lock_nor_a_transaction_is_held_while_a_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _folder(tmp_path)
    corpus = LocalCorpus(docs, tmp_path / "index", refresh_interval_s=0)
    assert corpus.search("heron")  # this process's first refresh is done
    (docs / "slow.md").write_text("# Slow\n\nThe bittern booms at dusk.\n")
    reading, release = threading.Event(), threading.Event()
    read_documents = index.read_documents

    def slow(root: Path, path: Path, max_bytes: int) -> list:
        reading.set()
        release.wait(30)
        return read_documents(root, path, max_bytes)

    monkeypatch.setattr(index, "read_documents", slow)
    refreshing = threading.Thread(target=corpus.refresh, daemon=True)
    refreshing.start()
    try:
        assert reading.wait(30)
        found: list = []
        searching = threading.Thread(
            target=lambda: found.append(corpus.search("heron reeds")), daemon=True
        )
        searching.start()
        searching.join(10)
        assert found and _names(h.url for h in found[0]) == [
            "good.md"
        ]  # it did not wait for the refresh
        other = sqlite3.connect(corpus.index_path, timeout=0.5, isolation_level=None)
        other.execute(
            "BEGIN IMMEDIATE"
        )  # another process may write: "database is locked" otherwise
        other.execute("ROLLBACK")
        other.close()
    finally:
        release.set()
        refreshing.join(30)
    assert _names(h.url for h in corpus.search("bittern dusk")) == ["slow.md"]


# --- size and content ---------------------------------------------------------------------------


def test_a_file_over_the_byte_cap_is_refused_by_its_size(tmp_path: Path) -> None:
    docs = _folder(tmp_path)
    corpus = LocalCorpus(docs, tmp_path / "index")
    assert corpus.max_file_bytes == settings().corpus.max_file_bytes
    assert CorpusSettings.model_fields["max_file_bytes"].default == 5 * 1024 * 1024
    with (docs / "sparse.txt").open("wb") as sparse:
        sparse.truncate(corpus.max_file_bytes + 1)  # no disk used
    (docs / "notes.md").write_text("# Notes\n\n" + "The wren sings at dawn. " * 60)

    assert _names(h.url for h in corpus.search("heron reeds")) == ["good.md"]
    assert _skips(corpus) == [
        ("sparse.txt", "5,242,881 bytes, more than CORPUS_MAX_FILE_BYTES (5,242,880)")
    ]
    small = LocalCorpus(docs, tmp_path / "small-index", max_file_bytes=1024)
    assert small.search("wren dawn") == []
    assert [name for name, _ in _skips(small)] == ["notes.md", "sparse.txt"]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("zeros.txt", bytes(4096)),
        ("nul.md", b"# Title\n\nThe egret\x00 fishes."),
        ("controls.txt", bytes(range(1, 9)) * 500),
        ("random.html", bytes((n * 7919 + 13) % 256 for n in range(8192))),
    ],
)
def test_binary_content_is_refused_as_not_text(tmp_path: Path, name: str, content: bytes) -> None:
    docs = _folder(tmp_path)
    (docs / name).write_bytes(content)
    corpus = LocalCorpus(docs, tmp_path / "index")

    assert corpus.search("egret fishes") == []
    assert _skips(corpus) == [(name, "binary content (NUL bytes or control characters), not text")]


# --- symlinks -----------------------------------------------------------------------------------


def test_a_file_swapped_for_a_symlink_after_the_listing_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nThe vault code is ocelot.\n")
    docs = _folder(tmp_path)
    notes = docs / "notes.md"
    notes.write_text("# Notes\n\nNothing here.\n")
    (docs / "alias.md").symlink_to(docs / "good.md")  # a link within the folder is read
    corpus = LocalCorpus(docs, tmp_path / "index")
    listing = corpus._scan

    def list_then_swap() -> Iterator[tuple[str, tuple[int, int]]]:
        found = list(listing())
        notes.unlink()
        notes.symlink_to(secret)  # between the listing and the read
        yield from found

    monkeypatch.setattr(corpus, "_scan", list_then_swap)
    corpus.refresh()

    assert corpus.search("vault code ocelot") == []
    assert _skips(corpus) == [("notes.md", "a link to a file outside the folder")]
    assert sorted(_names(h.url for h in corpus.search("heron reeds"))) == ["alias.md", "good.md"]


@pytest.mark.parametrize("swapped", ["file", "folder"])
def test_what_is_opened_is_checked_not_what_was_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("The vault code is ocelot.")
    docs = _folder(tmp_path)
    if swapped == "file":
        (docs / "notes.md").symlink_to(outside / "secret.md")
        path = docs / "notes.md"
    else:
        (docs / "sub").symlink_to(outside)
        path = docs / "sub" / "secret.md"
    # As if the link appeared after the path was resolved: only the descriptors can tell.
    monkeypatch.setattr(os.path, "realpath", os.path.abspath)

    with pytest.raises(UnreadableDocument, match="a symlink where a file or folder was"):
        read_source(docs, path, 1024)
    assert read_source(docs, docs / "good.md", 1024).startswith(b"# Good")


# --- what reaches reports and terminals ---------------------------------------------------------


def test_control_characters_and_bidi_overrides_never_reach_titles_headings_or_text(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "esc.md").write_text(
        "# Harbour \x1b]0;owned\x07report\u202e\n\n## Tides \x1b[2J\u2066now\u2069\n\n"
        "The \x1b[31mkraken\x1b[0m surfaces at\x07 dawn\x9b2J.\x0b\n"
    )
    (docs / "esc.docx").write_bytes(
        make_docx(
            [
                ("heading 1", "Lighthouse \u202etxt.exe"),
                ("p", "The \x9b2Jlantern\x85 turns at night."),
            ],
            title="Keeper\u202e log\u2067",
        )
    )
    corpus = LocalCorpus(docs, tmp_path / "index")

    texts = []
    for query in ("kraken surfaces dawn", "lantern turns night"):
        [hit] = corpus.search(query)
        page = corpus.read(hit.url, query, 2000)
        assert page is not None
        texts += [hit.title, hit.snippet, page.title, page.text]
    assert [t for t in texts if any(c in UNSAFE for c in t)] == []
    assert not any(debris in t for t in texts for debris in ("owned", "2J", "31m"))
    assert (texts[0], texts[4]) == ("Harbour report", "Keeper log")
    assert "Tides now" in texts[3] and "Lighthouse txt.exe" in texts[7]


def test_a_file_name_cannot_forge_a_line_of_output(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    docs = _folder(tmp_path)
    name = "evil\n  skipped  forged.md: \x1b[2Jok \u202egnp.md"
    (docs / name).write_bytes(bytes(64))
    corpus = LocalCorpus(docs, tmp_path / "index")

    with caplog.at_level(logging.WARNING, logger="activities.corpus.index"):
        corpus.refresh()
    [(path, why)] = corpus.skipped()

    assert Path(path).name == name  # stored as it is; shown escaped
    assert (
        display_name(path, corpus.corpus_dir)
        == "evil\\n  skipped  forged.md: \\x1b[2Jok \\u202egnp.md"
    )
    assert display_name(path).endswith(
        "/docs/evil\\n  skipped  forged.md: \\x1b[2Jok \\u202egnp.md"
    )
    assert "\n" not in why
    [record] = caplog.records
    assert "\n" not in record.getMessage() and "\x1b" not in record.getMessage()
