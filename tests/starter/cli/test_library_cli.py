"""`history`, `show`, `export` in a real starter process, against a library file and no Temporal."""

from __future__ import annotations

import argparse
import io
import json
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from storage import store
from tests.activities.test_library import T0, record
from tests.starter.cli.test_starter import error_line, offline_env, starter  # noqa: F401 - fixture
from workflows.models import Source


@pytest.fixture
def library_env(offline_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """A library with two research in it; Temporal unreachable, to show no command needs it."""
    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    store.write(record("research-old", "run-1", T0), url)
    hostile = record(
        "research-new", "run-2", T0.replace(day=21), query="Tide pools <script>alert(1)</script>"
    )
    hostile.result.report_markdown = (
        "# Tide pools <script>alert(1)</script>\n\nStorms reset them [1]. Small pools [2, 1].\n\n"
        "## Sources\n\n- [1] Aqueducts — https://example.org/a\n"
    )
    hostile.result.sources.append(Source(id=3, url="javascript:alert(1)", title="<b>bold</b>"))
    store.write(hostile, url)
    return {**offline_env, "RESEARCH_DB_URL": url}


async def test_history_lists_newest_first_with_a_filter_and_as_json(
    library_env: dict[str, str],
) -> None:
    run = await starter("history", env=library_env)
    lines = run.out.splitlines()
    assert run.code == 0 and len(lines) == 2
    assert "research-new" in lines[0] and "research-old" in lines[1]
    assert "supported 1/3" in lines[1] and "2026-11-20 09:30" in lines[1]

    only = await starter("history", "--filter", "roman aqueducts", "--json", env=library_env)
    assert [e["workflow_id"] for e in json.loads(only.out)] == ["research-old"]


async def test_history_filter_ignores_case_beyond_ascii(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    store.write(record("research-uber", "run-1", T0, query="Was ist über Wasser bekannt?"), url)
    store.write(
        record("research-strasse", "run-2", T0.replace(day=21), query="STRASSE und Verkehr"), url
    )
    env = {**offline_env, "RESEARCH_DB_URL": url}

    for text, expected in (("ÜBER", ["research-uber"]), ("straße", ["research-strasse"])):
        run = await starter("history", "--filter", text, "--json", env=env)
        assert run.code == 0 and [e["workflow_id"] for e in json.loads(run.out)] == expected


async def test_history_of_an_empty_library_says_so(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    run = await starter(
        "history", env={**offline_env, "RESEARCH_DB_URL": f"sqlite:///{tmp_path / 'empty.sqlite'}"}
    )
    assert (
        run.code == 0
        and run.out == ""
        and run.err.startswith("no research stored yet in sqlite:///")
    )


async def test_show_prints_the_stored_report_and_writes_it_on_request(
    library_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "report.md"
    run = await starter("show", "research-old", "--out", str(out), env=library_env)
    assert run.code == 0 and run.out.startswith("# Aqueducts")
    assert out.read_text().startswith("# Aqueducts")

    as_json = json.loads((await starter("show", "research-old", "--json", env=library_env)).out)
    assert (
        as_json["workflow_id"] == "research-old"
        and as_json["result"]["claims"][2]["removed"] is True
    )


async def test_an_unknown_id_or_an_unwritable_file_is_one_line_and_exit_2(
    library_env: dict[str, str],
) -> None:
    missing = await starter("show", "nope", env=library_env)
    assert missing.code == 2 and error_line(missing).startswith(
        "error: no stored research with id nope in "
    )
    unwritable = await starter(
        "export",
        "research-old",
        "--format",
        "md",
        "--out",
        "/nonexistent/dir/x.md",
        env=library_env,
    )
    assert unwritable.code == 2 and error_line(unwritable).startswith(
        "error: cannot write /nonexistent/dir/x.md"
    )
    bad_format = await starter("export", "research-old", "--format", "rtf", env=library_env)
    assert bad_format.code == 2 and "invalid choice" in error_line(bad_format)


async def test_a_bad_library_url_is_one_line_without_the_password(
    offline_env: dict[str, str],
) -> None:
    env = {**offline_env, "RESEARCH_DB_URL": "postgresql://reader:hunter2@127.0.0.1:1/library"}
    run = await starter("history", env=env)
    assert run.code == 2 and "unavailable" in error_line(run)
    assert "hunter2" not in run.err + run.out


async def test_export_md_is_a_standalone_report_with_its_sources(
    library_env: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "old.md"
    run = await starter(
        "export", "research-old", "--format", "md", "--out", str(target), env=library_env
    )
    text = target.read_text()
    assert run.code == 0 and run.out.strip() == str(target)
    assert (
        text.startswith("# Aqueducts")
        and "## Sources" in text
        and "- [1] Aqueducts — https://example.org/a" in text
    )


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"] or "")
        if tag == "a":
            self.links.append(found.get("href") or "")


async def test_export_html_links_every_citation_and_never_runs_text_from_the_web(
    library_env: dict[str, str],
    tmp_path: Path,
) -> None:
    target = tmp_path / "new.html"
    run = await starter(
        "export", "research-new", "--format", "html", "--out", str(target), env=library_env
    )
    text = target.read_text()
    page = Page()
    page.feed(text)

    assert run.code == 0 and text.startswith("<!DOCTYPE html>")
    assert (
        "script" not in page.tags and "b" not in page.tags
    )  # markup from the report and titles is text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    anchors = [link for link in page.links if link.startswith("#")]
    assert anchors == ["#source-1", "#source-2", "#source-1"]
    assert all(a[1:] in page.ids for a in anchors)
    assert "javascript:alert(1)" not in page.links and "https://example.org/a" in page.links
    assert (
        "Aqueducts (web, searxng)" in text and "B (local)" in text
    )  # which sources are the user's own


async def test_export_html_is_inert_images_odd_schemes_and_anchors_in_attributes(
    offline_env: dict[str, str],
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    odd = record("research-odd", "run-1", T0)
    odd.result.report_markdown = (
        "# Odd\n\nA chart ![tracking pixel [1]](https://tracker.example/p.png) shows it [1].\n\n"
        "See [share](smb://host/share), [diag](ms-msdt:/id PCWDiagnostic), [find](search-ms:query=x), "
        '[mail](mailto:a@example.org), [rel](//evil.example/x) and [fine](https://example.org "title [2]").\n'
    )
    store.write(odd, url)
    target = tmp_path / "odd.html"
    run = await starter(
        "export",
        "research-odd",
        "--format",
        "html",
        "--out",
        str(target),
        env={**offline_env, "RESEARCH_DB_URL": url},
    )
    text = target.read_text()
    page = Page()
    page.feed(text)

    assert run.code == 0
    assert "img" not in page.tags and "<img" not in text  # nothing loads when the file is opened
    assert "https://tracker.example/p.png" in page.links  # the image is a link a person may follow
    for scheme in ("smb:", "ms-msdt:", "search-ms:", "mailto:", "//evil"):
        assert not any(link.startswith(scheme) for link in page.links), scheme
    assert "https://example.org" in page.links
    assert 'title="title [2]"' in text  # no anchor spliced into an attribute
    assert "#source-1" in page.links


async def test_show_never_lets_a_source_drive_the_terminal(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'library.sqlite'}"
    hostile = record("research-esc", "run-1", T0)
    hostile.result.report_markdown = (
        "# Title\x1b]0;pwned\x07\n\nCleared \x1b[2J screen\x9b31m and bell\x07 [1].\n"
    )
    store.write(hostile, url)
    run = await starter("show", "research-esc", env={**offline_env, "RESEARCH_DB_URL": url})
    assert run.code == 0
    assert not any(ch in run.out for ch in "\x1b\x07\x9b")
    assert "Cleared  screen31m and bell [1]." in run.out


# --- export in the four formats ------------------------------------------------------------------


def test_the_cli_offers_every_export_format() -> None:
    from starter import exports
    from starter.cli import main as cli

    parser = cli.build_parser()
    for fmt in exports.FORMATS:
        assert parser.parse_args(["export", "x", "--format", fmt]).format == fmt


@pytest.mark.parametrize("fmt, magic", [("docx", b"PK\x03\x04"), ("pdf", b"%PDF-")])
async def test_export_writes_word_and_pdf(
    library_env: dict[str, str], tmp_path: Path, fmt: str, magic: bytes
) -> None:
    target = tmp_path / f"old.{fmt}"
    run = await starter(
        "export", "research-old", "--format", fmt, "--out", str(target), env=library_env
    )
    assert run.code == 0 and run.out.strip() == str(target)
    assert target.read_bytes().startswith(magic)


async def test_export_to_stdout_and_to_the_suggested_name(
    library_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    piped = await starter("export", "research-old", "--format", "md", "--out", "-", env=library_env)
    assert piped.code == 0 and piped.out.startswith("# Aqueducts") and "## Sources" in piped.out

    from settings import Settings
    from starter.cli import library
    from starter.client.session import Session

    monkeypatch.chdir(tmp_path)
    session = Session(Settings(research_db_url=library_env["RESEARCH_DB_URL"]))
    args = argparse.Namespace(id="research-old", format="pdf", out=None)
    assert await library.export(args, session) == 0
    assert (
        (tmp_path / "aqueducts.pdf").read_bytes().startswith(b"%PDF-")
    )  # named after the title, here


async def test_a_binary_export_is_never_written_to_a_terminal(
    library_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from settings import Settings
    from starter.cli import library
    from starter.client.errors import ClientError, Kind
    from starter.client.session import Session

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdout", Terminal())
    session = Session(Settings(research_db_url=library_env["RESEARCH_DB_URL"]))
    for fmt in ("docx", "pdf"):
        with pytest.raises(
            ClientError, match=f"^{fmt} is binary: not written to a terminal"
        ) as refused:
            await library.export(
                argparse.Namespace(id="research-old", format=fmt, out="-"), session
            )
        assert refused.value.kind is Kind.INVALID
    assert sys.stdout.getvalue() == ""


async def test_library_rename_gives_a_research_a_title_it_is_listed_and_exported_under(
    library_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = await starter(
        "library", "rename", "research-old", "  Water \u202ein Rome\u200b ", env=library_env
    )
    assert (run.code, run.out) == (0, "renamed research-old: Water in Rome\n")

    listed = await starter("history", env=library_env)
    assert listed.out.splitlines()[1].endswith("Water in Rome")
    found = await starter("history", "--filter", "in rome", "--json", env=library_env)
    assert [(e["workflow_id"], e["title"]) for e in json.loads(found.out)] == [
        ("research-old", "Water in Rome")
    ]
    exported = await starter(
        "export", "research-old", "--format", "md", "--out", "-", env=library_env
    )
    assert exported.out.startswith("# Water in Rome\n")
    named = await starter(
        "export", "research-old", "--format", "html", "--out", "-", env=library_env
    )
    assert "<h1>Water in Rome</h1>" in named.out

    from settings import Settings
    from starter.cli import library
    from starter.client.session import Session

    monkeypatch.chdir(tmp_path)
    session = Session(Settings(research_db_url=library_env["RESEARCH_DB_URL"]))
    args = argparse.Namespace(id="research-old", format="docx", out=None)
    assert await library.export(args, session) == 0
    assert (tmp_path / "water-in-rome.docx").exists()  # named after the new title, here


async def test_library_rename_of_an_unknown_id_or_with_an_empty_title_is_one_line_and_exit_2(
    library_env: dict[str, str],
) -> None:
    unknown = await starter("library", "rename", "nope", "A title", env=library_env)
    assert unknown.code == 2 and error_line(unknown).startswith(
        "error: no stored research with id nope in "
    )
    theirs = await starter(
        "library", "rename", "research-old", "Mine", env={**library_env, "RESEARCH_USER": "bob"}
    )
    assert theirs.code == 2 and error_line(theirs).startswith("error: no stored research with id")
    empty = await starter("library", "rename", "research-old", " \t ", env=library_env)
    assert empty.code == 2
    assert error_line(empty) == "error: the title is empty: use text of 1 to 200 characters"
    kept = await starter("history", "--json", env=library_env)
    assert [e["title"] for e in json.loads(kept.out)] == [None, None]


async def test_history_filter_and_library_search_find_what_the_web_library_finds(
    library_env: dict[str, str],
) -> None:
    """Edges: `history --filter` looked at the question only; `library search` did not
    exist. "settling tanks" is in research-old's report alone."""
    for args in (
        ("history", "--filter", "Settling Tanks"),
        ("library", "search", "settling tanks"),
    ):
        run = await starter(*args, "--json", env=library_env)
        assert run.code == 0, run.err
        assert [e["workflow_id"] for e in json.loads(run.out)] == ["research-old"], args
