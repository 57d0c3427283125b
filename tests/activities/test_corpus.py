"""The `local` search provider as a researcher meets it: real documents in, ranked hits and
relevant passages out, whatever the query text, with nothing read that is not in the corpus;
Markdown, text, HTML, PDF and Word files made in the tests; a folder that changes; broken files.

A real corpus: the Rust Book beside the repository (read in place, never copied). The default
corpus, this interpreter's documentation, is in test_corpus_stdlib.py; hostile files in
test_hostile_documents.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from activities.corpus import LocalCorpus, open_corpus
from activities.corpus import index as corpus_index
from activities.corpus.index import IndexChanges
from tests.conftest import REPO, RUST_BOOK
from tests.support.documents import make_docx, make_pdf
from workflows.models import SNIPPET_LIMIT

HOSTILE_QUERIES = [
    "",
    "   ",
    '"unbalanced',
    "foo AND (bar",
    "NEAR(",
    "NEAR(ownership borrowing, 2)",
    "*",
    "-x",
    "ownership -borrowing",
    "title:ownership",
    "body : ^ownership*",
    "OR AND NOT",
    "🙂",
    "所有権とは",
    "naïve café ownership",
    "'); DROP TABLE docs; --",
    "\x00",
    "a" * 5000,
    " ".join(f"word{i}" for i in range(500)),
]


needs_rust_book = pytest.mark.skipif(not RUST_BOOK.is_dir(), reason=f"{RUST_BOOK} is not there")


def _name(url: str) -> str:
    return url.rsplit("/", 1)[-1]


@pytest.fixture(scope="module")
def rust_book(tmp_path_factory: pytest.TempPathFactory) -> LocalCorpus:
    if not RUST_BOOK.is_dir():
        pytest.skip(f"{RUST_BOOK} is not there")
    return LocalCorpus(RUST_BOOK, tmp_path_factory.mktemp("rust-index"))


# --- a real documentation folder --------------------------------------------------------------


def test_ownership_question_finds_the_ownership_chapters_first(rust_book: LocalCorpus) -> None:
    hits = rust_book.search("ownership borrowing references", limit=5)

    assert len(hits) == 5
    assert _name(hits[0].url).startswith("ch04-"), [h.url for h in hits]
    assert [_name(h.url)[:7] for h in rust_book.search("ownership", limit=2)] == [
        "ch04-01",
        "ch04-00",
    ]
    first = hits[0]
    assert first.title == "References and Borrowing"  # the file's first heading
    assert "ownership" in first.snippet.lower() or "borrow" in first.snippet.lower()


def test_hits_are_file_urls_inside_the_corpus_with_short_clean_snippets(
    rust_book: LocalCorpus,
) -> None:
    hits = rust_book.search("how do threads share state with a mutex", limit=8)

    assert hits
    root = RUST_BOOK.resolve()
    for hit in hits:
        assert hit.provider == "local"
        assert hit.url.startswith("file://")
        path = Path(hit.url.removeprefix("file://"))
        assert path.parent == root and path.suffix == ".md"
        assert hit.title and not hit.title.startswith("#")
        assert 0 < len(hit.snippet) <= SNIPPET_LIMIT
        assert "{{#" not in hit.snippet and "<Listing" not in hit.snippet  # mdBook markup is gone
    assert any(_name(h.url) == "ch16-03-shared-state.md" for h in hits[:3])


def test_the_provenance_note_is_not_part_of_the_corpus(rust_book: LocalCorpus) -> None:
    hits = rust_book.search("licence Apache copyright blob commit provenance", limit=50)

    assert all(_name(h.url) != "SOURCE.md" for h in hits)
    assert rust_book.read((RUST_BOOK / "SOURCE.md").resolve().as_uri(), "licence", 500) is None
    assert rust_book.description == f"{RUST_BOOK.resolve()} (112 documents)"


def test_same_query_same_hits_and_limit_respected(rust_book: LocalCorpus) -> None:
    assert rust_book.search("closures capture environment", 4) == rust_book.search(
        "closures capture environment", 4
    )
    assert len(rust_book.search("closures capture environment", 2)) == 2
    assert rust_book.search("closures", 0) == []


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_any_query_text_is_searched_as_text(rust_book: LocalCorpus, query: str) -> None:
    hits = rust_book.search(query)

    assert isinstance(hits, list)
    assert all(len(h.snippet) <= SNIPPET_LIMIT for h in hits)


@pytest.mark.parametrize("query", ["", "   ", "the and of", "what is it", "*", "🙂", "-"])
def test_queries_without_content_words_find_nothing(rust_book: LocalCorpus, query: str) -> None:
    assert rust_book.search(query) == []


def test_reading_a_hit_gives_the_passages_about_the_focus(rust_book: LocalCorpus) -> None:
    url = rust_book.search("references and borrowing")[0].url

    page = rust_book.read(url, "rules of mutable references", 1200)

    assert page is not None
    assert page.url == url and page.title == "References and Borrowing"
    assert len(page.text) <= 1200
    assert "mutable reference" in page.text
    short = rust_book.read(url, "dangling references", 300)
    assert short is not None and 0 < len(short.text) <= 300


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        (RUST_BOOK / "ch04-02-references-and-borrowing.md").as_uri() + "/../../../../../etc/passwd",
        (RUST_BOOK.resolve() / ".." / ".." / ".." / "main" / "pyproject.toml").as_uri(),
        (REPO / "pyproject.toml").as_uri(),
        "https://doc.rust-lang.org/book/ch04-02-references-and-borrowing.html",
        "ch04-02-references-and-borrowing.md",
        "",
        "file:",
        "file://",
    ],
)
def test_reading_anything_but_a_corpus_document_gives_none(
    rust_book: LocalCorpus, url: str
) -> None:
    assert rust_book.read(url, "passwords", 1000) is None


@needs_rust_book
def test_threads_searching_a_fresh_index_all_see_the_whole_corpus(tmp_path: Path) -> None:
    corpus = LocalCorpus(RUST_BOOK, tmp_path / "index")
    assert not (tmp_path / "index").exists()  # nothing is indexed until it is used

    with ThreadPoolExecutor(8) as pool:
        results = list(
            pool.map(lambda _: corpus.search("trait objects dynamic dispatch"), range(16))
        )

    assert results[0] and all(r == results[0] for r in results)


@needs_rust_book
def test_two_processes_building_one_index_agree(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import json, sys
        from pathlib import Path
        from activities.corpus import LocalCorpus
        corpus = LocalCorpus(Path(sys.argv[1]), Path(sys.argv[2]))
        hits = corpus.search("pattern matching match arms")
        print(json.dumps([h.url for h in hits]))
        """
    )
    command = [sys.executable, "-c", script, str(RUST_BOOK), str(tmp_path / "index")]
    workers = [
        subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [w.communicate(timeout=120) for w in workers]

    assert all(w.returncode == 0 for w in workers), outputs
    urls = [json.loads(out) for out, _ in outputs]
    assert urls[0] and urls[0] == urls[1]
    assert len(list((tmp_path / "index").glob("*.sqlite"))) == 1


@needs_rust_book
def test_open_corpus_shares_one_instance_per_folder_and_index(tmp_path: Path) -> None:
    one = open_corpus(RUST_BOOK, tmp_path / "a")
    assert open_corpus(RUST_BOOK.resolve(), tmp_path / "a") is one
    assert open_corpus(RUST_BOOK, tmp_path / "b") is not one
    assert open_corpus(None, tmp_path / "a") is not one


# --- a folder that changes --------------------------------------------------------------------


def test_changed_added_and_deleted_files_are_seen_on_the_next_search(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "animals.md").write_text("# Animals\n\nThe zebra grazes on the savanna.\n")
    (docs / "plants.txt").write_text("Ferns reproduce with spores, not seeds.\n")
    (docs / "notes.csv").write_text("zebra,ferns\n")  # not a document type
    corpus = LocalCorpus(docs, tmp_path / "index", refresh_interval_s=0)

    assert [_name(h.url) for h in corpus.search("zebra")] == ["animals.md"]
    assert corpus.search("ferns spores")[0].title == "plants.txt"
    assert corpus.search("quokka") == []

    (docs / "animals.md").write_text("# Animals\n\nThe zebra grazes; the quokka smiles.\n")
    os.utime(docs / "animals.md", ns=(1, 10**18))  # a new mtime even on coarse file systems
    (docs / "plants.txt").unlink()
    (docs / "sub").mkdir()
    (docs / "sub" / "birds.md").write_text("Kestrels hover before they dive.\n")

    assert [_name(h.url) for h in corpus.search("quokka")] == ["animals.md"]
    assert corpus.search("ferns spores") == []
    assert corpus.read((docs / "plants.txt").as_uri(), "ferns", 500) is None
    hit = corpus.search("kestrel hover")[0]
    assert hit.url == (docs / "sub" / "birds.md").resolve().as_uri() and hit.title == "birds.md"
    assert corpus.description.endswith("(2 documents)")


def test_a_document_read_carries_the_fingerprint_of_its_whole_text(tmp_path: Path) -> None:
    """A standing research tells a changed document (another fingerprint) from the same bytes
    under another name (the same one), whatever part of it a step read."""
    docs = tmp_path / "docs"
    docs.mkdir()
    text = "# Builds\n\nCompile times fell 12% in 1.80.\n\nThe cache is reused more.\n"
    (docs / "builds.md").write_text(text)
    (docs / "builds copy.md").write_text(text)
    (docs / "builds new.md").write_text(text.replace("12%", "15%"))
    corpus = LocalCorpus(docs, tmp_path / "index", refresh_interval_s=0)

    first = corpus.read((docs / "builds.md").as_uri(), "compile times", 500)
    other_focus = corpus.read((docs / "builds.md").as_uri(), "cache", 20)
    copy = corpus.read((docs / "builds copy.md").as_uri(), "cache", 500)
    changed = corpus.read((docs / "builds new.md").as_uri(), "compile times", 500)
    assert first and other_focus and copy and changed
    assert len(first.digest) == 64 and first.digest == other_focus.digest == copy.digest
    assert changed.digest != first.digest


def test_after_a_change_a_search_ranks_as_a_fresh_index_would(tmp_path: Path) -> None:
    """Ranking reuses word counts and section words between searches (ranking.Memo); a changed
    folder, or an index another process updated, must not be ranked with the old ones."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, body in [
        ("kettles.md", "A kettle boils water; the kettle whistles when steam escapes."),
        ("teapots.md", "A teapot steeps leaves; steam rises from the teapot's spout."),
        ("mugs.md", "A mug holds tea; steam curls above the mug on cold mornings."),
    ]:
        (docs / name).write_text(f"# {name[:-3].title()}\n\n{body}\n")
    corpus = LocalCorpus(docs, tmp_path / "index", refresh_interval_s=0)
    corpus.search("steam escapes from the kettle")

    (docs / "kettles.md").write_text(
        "# Kettles\n\nCopper kettles tarnish; polish them with lemon.\n"
    )
    os.utime(docs / "kettles.md", ns=(1, 10**18))
    (docs / "steam.md").write_text(
        "# Steam\n\nSteam escapes from a kettle's spout as water boils.\n"
    )
    query = "steam escapes from the kettle"
    seen = [(h.url, h.snippet) for h in corpus.search(query)]
    fresh = LocalCorpus(docs, tmp_path / "fresh-index", refresh_interval_s=0)
    assert seen == [(h.url, h.snippet) for h in fresh.search(query)]
    assert _name(seen[0][0]) == "steam.md"

    other = LocalCorpus(docs, tmp_path / "index", refresh_interval_s=0)  # another worker, one index
    (docs / "steam.md").unlink()
    other.search(query)  # that worker brings the shared index up to date
    assert [h.url for h in corpus.search(query)] == [h.url for h in other.search(query)]
    assert all(_name(h.url) != "steam.md" for h in corpus.search(query))


def test_the_folder_is_checked_at_most_once_per_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index's clock is this test's, so a busy machine cannot stretch "less than a second"
    (only the index's: the extraction it calls keeps its own deadlines on the real clock)."""
    now = [1000.0]
    clock = SimpleNamespace(monotonic=lambda: now[0], perf_counter=time.perf_counter)
    monkeypatch.setattr(corpus_index, "time", clock)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe zebra grazes on the savanna.\n")
    corpus = LocalCorpus(docs, tmp_path / "index", refresh_interval_s=1.0)
    assert corpus.search("zebra")

    (docs / "b.md").write_text("# B\n\nThe quokka smiles at tourists.\n")
    now[0] += 0.9
    assert corpus.search("quokka") == []  # checked less than a second ago: not looked at yet
    now[0] += 0.2
    assert [_name(h.url) for h in corpus.search("quokka")] == ["b.md"]


def test_refresh_says_what_it_added_updated_removed_and_skipped(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha.\n")
    (docs / "b.txt").write_text("Beta.\n")
    corpus = LocalCorpus(docs, tmp_path / "index")

    first = corpus.refresh()
    assert (
        [Path(p).name for p in first.added] == ["a.md", "b.txt"]
        and not first.updated
        and not first.removed
    )
    assert corpus.refresh() == IndexChanges()  # nothing changed, nothing done

    (docs / "a.md").write_text("# A\n\nAlpha, changed.\n")
    os.utime(docs / "a.md", ns=(1, 10**18))
    (docs / "b.txt").unlink()
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf")
    second = corpus.refresh()
    assert [Path(p).name for p in second.updated] == ["a.md"]
    assert [Path(p).name for p in second.removed] == ["b.txt"]
    assert [Path(p).name for p in second.added] == ["broken.pdf"]
    assert [(Path(p).name, "unreadable PDF" in why) for p, why in second.skipped] == [
        ("broken.pdf", True)
    ]
    assert [Path(p).name for p, _ in corpus.skipped()] == ["broken.pdf"]
    assert corpus.refresh().skipped == []  # an unchanged broken file is not read again


# --- PDF and Word files -----------------------------------------------------------------------


def test_a_pdf_is_searched_page_by_page_and_cited_with_its_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.pdf").write_bytes(
        make_pdf(
            [
                ["Quarterly report of the Glimmerwick observatory."],
                ["The Glimmerwick telescope logged 412 clear nights in 2023."],
                ["Maintenance of the dome took eleven weeks."],
            ],
            title="Glimmerwick Annual Report",
        )
    )
    corpus = LocalCorpus(docs, tmp_path / "index")

    hits = corpus.search("how many clear nights did the telescope log")

    assert hits[0].url == (docs / "report.pdf").as_uri() + "#page=2"
    assert hits[0].title == "Glimmerwick Annual Report, page 2"
    assert "412 clear nights" in hits[0].snippet
    page = corpus.read(hits[0].url, "clear nights", 1000)
    assert page is not None and page.url == hits[0].url and "412 clear nights" in page.text
    assert "eleven weeks" not in page.text  # only that page
    assert corpus.read((docs / "report.pdf").as_uri() + "#page=9", "dome", 500) is None


def test_a_pdf_without_a_title_is_named_by_its_first_line(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "memo.pdf").write_bytes(
        make_pdf([["Memo on the Frostwell pump station", "Pumps run at night."]])
    )
    corpus = LocalCorpus(docs, tmp_path / "index")

    hit = corpus.search("Frostwell pumps")[0]

    assert hit.title == "Memo on the Frostwell pump station"  # one page: no page in the title
    assert hit.url.endswith("memo.pdf#page=1")


def test_a_word_document_is_searched_by_its_sections(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "deep" / "er").mkdir(parents=True)
    (docs / "deep" / "er" / "lab.docx").write_bytes(
        make_docx(
            [
                ("Title", "Lab notebook"),
                ("p", "Notes from the spring campaign."),
                ("heading 1", "Enzymes"),
                ("p", "The zorblax enzyme doubles the yield of the reaction at 37 degrees."),
                ("heading 2", "Storage"),
                ("p", "Zorblax must be kept below minus twenty degrees."),
                ("heading 1", "Equipment"),
                ("table", [["Instrument", "Room"], ["Centrifuge", "B-114"]]),
            ],
            title="Spring lab notebook",
        )
    )
    corpus = LocalCorpus(docs, tmp_path / "index")

    hits = corpus.search("zorblax enzyme yield")
    assert [h.title for h in hits] == ["Spring lab notebook"]
    assert hits[0].url == (docs / "deep" / "er" / "lab.docx").as_uri()
    assert "doubles the yield" in hits[0].snippet
    page = corpus.read(hits[0].url, "storage temperature", 2000)
    assert page is not None and "Storage" in page.text and "minus twenty degrees" in page.text
    assert "Lab notebook" in page.text  # the Title paragraph, named otherwise in the properties
    assert "Centrifuge | B-114" in page.text  # a table row, cells in order


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("garbage.pdf", b"%PDF-1.4\nnot really a pdf", "unreadable PDF"),
        ("truncated.pdf", make_pdf([["Cut short"]])[:120], "unreadable PDF"),
        ("blank.pdf", make_pdf([[]]), "no text layer"),
        ("not-a-zip.docx", b"PK\x03\x04 this is no zip", "not a Word document"),
        ("no-body.docx", b"", "not a Word document"),
        ("empty.md", b"", "no text"),
    ],
)
def test_a_broken_file_is_skipped_with_its_reason_and_the_rest_is_searched(
    tmp_path: Path, name: str, content: bytes, why: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / name).write_bytes(content)
    (docs / "good.md").write_text("# Good\n\nThe heron waits in the reeds.\n")
    corpus = LocalCorpus(docs, tmp_path / "index")

    assert [_name(h.url) for h in corpus.search("heron reeds")] == ["good.md"]
    assert [(Path(p).name, why in reason) for p, reason in corpus.skipped()] == [(name, True)]


def test_a_word_document_that_inflates_too_far_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from activities.corpus import binary

    # What the extraction child runs, here in this process, so the cap can be lowered.
    monkeypatch.setattr(binary, "MAX_DOCX_PART_BYTES", 10_000)
    with pytest.raises(binary.UnreadableDocument, match="inflates to"):
        binary.docx_document(tmp_path / "huge.docx", make_docx([("p", "zeppelin " * 5000)]))


def test_an_xml_entity_in_a_word_document_is_not_expanded(tmp_path: Path) -> None:
    import zipfile

    docs = tmp_path / "docs"
    docs.mkdir()
    bomb = docs / "bomb.docx"
    bomb.write_bytes(make_docx([("p", "placeholder")]))
    with zipfile.ZipFile(bomb) as package:
        parts = {n: package.read(n) for n in package.namelist()}
    parts["word/document.xml"] = (
        b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "lolololololololololo"><!ENTITY b "&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY c SYSTEM "file:///etc/passwd">]>'
        b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
        b"<w:p><w:r><w:t>Kittiwakes nest on cliffs &b; &c;</w:t></w:r></w:p></w:body></w:document>"
    )
    with zipfile.ZipFile(bomb, "w") as package:
        for name, data in parts.items():
            package.writestr(name, data)
    corpus = LocalCorpus(docs, tmp_path / "index")

    hits = corpus.search("kittiwakes cliffs")
    assert hits and "lolo" not in hits[0].snippet and "root:" not in hits[0].snippet


def test_urls_are_found_in_either_spelling_of_their_special_characters(tmp_path: Path) -> None:
    docs = tmp_path / "my docs"
    docs.mkdir()
    (docs / "tea & cake.md").write_text(
        "# Afternoon tea\n\nScones are served with clotted cream.\n"
    )
    corpus = LocalCorpus(docs, tmp_path / "index")

    hit = corpus.search("scones clotted cream")[0]

    assert hit.url == (docs / "tea & cake.md").as_uri() and "%20" in hit.url
    for spelling in (hit.url, f"  {hit.url}\n", f"file://{docs}/tea & cake.md"):
        page = corpus.read(spelling, "scones", 500)
        assert page is not None and page.url == hit.url and "clotted cream" in page.text


def test_html_pages_are_read_as_their_visible_text(tmp_path: Path) -> None:
    docs = tmp_path / "site"
    docs.mkdir()
    (docs / "page.html").write_text(
        "<html><head><title>Tidal  Energy</title><style>.moon{color:red}</style></head><body>"
        "<nav>Home | Sitemap | Lighthouse</nav><h1>Tides</h1>"
        "<p>Tidal turbines turn the pull of the moon into electricity.</p>"
        "<script>var lighthouse = 'barnacle';</script>"
        "<p>Estuaries with a large range suit them best.</p><footer>Copyright barnacle</footer>"
        "</body></html>"
    )
    (docs / "untitled.htm").write_text("<h1>Wave &amp; Swell</h1><p>Ocean waves carry energy.</p>")
    corpus = LocalCorpus(docs, tmp_path / "index")

    hits = corpus.search("tidal turbines moon")
    assert [h.title for h in hits] == ["Tidal Energy"]
    assert hits[0].snippet.startswith("Tidal turbines turn the pull of the moon")
    assert corpus.search("barnacle lighthouse sitemap") == []  # script, nav and footer are not text
    assert corpus.search("ocean waves")[0].title == "Wave & Swell"
    page = corpus.read(hits[0].url, "estuaries", 2000)
    assert (
        page is not None and "Estuaries with a large range" in page.text and "var" not in page.text
    )


def test_a_missing_corpus_folder_is_a_clear_error(tmp_path: Path) -> None:
    corpus = LocalCorpus(tmp_path / "nowhere", tmp_path / "index")
    with pytest.raises(FileNotFoundError, match="nowhere"):
        corpus.search("anything at all")
