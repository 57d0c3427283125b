"""`history`, `show`, `export`: the research library from the terminal, no Temporal needed.

The library is the database every finished research is written to (activities/storage/), so
these commands work after the Temporal server has forgotten the workflow, and on a machine that
only has the database. `export` writes any of the formats of `starter.exports` (the web app's
downloads); report files are written without control characters or bidi overrides.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from markdown_it import MarkdownIt
from temporalio.exceptions import ApplicationError

from activities.storage import store
from starter.progress import say
from starter.session import Session
from starter.temporal import CliError, shown
from starter.terminal import clean
from workflows import verification
from workflows.citations import CITATION, origin
from workflows.models import ResearchResult

T = TypeVar("T")
EXIT_OK = 0
EXIT_USAGE = 2
#: `export --format`: those of starter.exports (not imported here: python-docx and reportlab load
#: only for an export).
EXPORT_FORMATS = ("md", "html", "docx", "pdf")
BINARY_FORMATS = ("docx", "pdf")
#: `--out -`: standard output.
STDOUT = "-"


async def history(args: argparse.Namespace, session: Session) -> int:
    url = session.cfg.research_db_url
    entries = read_library(lambda: store.list_research(url, contains=args.filter, limit=args.limit))
    if args.json:
        print(json.dumps([e.model_dump(mode="json") for e in entries], indent=2))
        return EXIT_OK
    if not entries:
        say(f"no research stored yet in {_where(url)}" if not args.filter
            else f"no stored research matches {args.filter!r}")
        return EXIT_OK
    for e in entries:
        checked = f"supported {e.supported}/{e.claims}" if e.supported is not None else f"{e.claims} claims"
        query = " ".join(e.query.split())
        print(f"{e.finished_at:%Y-%m-%d %H:%M}  {e.workflow_id}  {e.outcome:9}  {e.sources:2} sources  "
              f"{checked:15}  {query[:69] + '…' if len(query) > 70 else query}")
    return EXIT_OK


async def show(args: argparse.Namespace, session: Session) -> int:
    stored = stored_research(session, args.id)
    text = stored.model_dump_json(indent=2) if args.json else stored.result.report_markdown
    print(text)
    if args.out:
        write_file(Path(args.out), text + ("\n" if args.json else ""))
    return EXIT_OK


async def export(args: argparse.Namespace, session: Session) -> int:
    """The report in ARGS.format, written to --out, else to the file name the export suggests
    (from the title) here; `--out -` writes it to stdout, but never a binary format to a terminal."""
    to_stdout = args.out == STDOUT
    if to_stdout and args.format in BINARY_FORMATS and sys.stdout.isatty():
        raise CliError(f"{args.format} is binary: not written to a terminal (give --out FILE, "
                       "or redirect stdout to a file)", EXIT_USAGE)
    stored = stored_research(session, args.id)
    from starter.exports import export as exported

    body, _, suggested = await asyncio.to_thread(exported, stored.result, args.format)
    if to_stdout:
        sys.stdout.flush()
        sys.stdout.buffer.write(body)
        sys.stdout.buffer.flush()
        return EXIT_OK
    out = Path(args.out or suggested)
    write_file(out, body)
    print(out)
    return EXIT_OK


# --- standalone reports ---------------------------------------------------------------------------


def to_markdown(result: ResearchResult) -> str:
    """The report as it was delivered, with a sources list when the report has none."""
    report = result.report_markdown.rstrip()
    if result.sources and not re.search(r"^#+\s*(Sources|References)\b", report, re.M | re.I):
        report += "\n\n## Sources\n\n" + "\n".join(
            f"- [{s.id}] {s.title} — {s.url} ({origin(s)})" for s in result.sources
        )
    return report + "\n"


def to_html(result: ResearchResult) -> str:
    """One self-contained page: no scripts, no external resources, every `[n]` a link to its source.

    Raw HTML in the markdown is escaped, never rendered: a report quotes the web, and a page's
    `<script>` must reach the reader as text.
    """
    known = {s.id for s in result.sources}
    body = _inert_markdown(known).render(_without_sources_section(result.report_markdown))
    items = "\n".join(
        f'<li id="source-{s.id}">[{s.id}] {html.escape(s.title)} ({html.escape(origin(s))})<br>{_url(s.url)}</li>'
        for s in result.sources
    )
    claims = ""
    if result.claims:
        rows = "\n".join(
            f"<tr><td>{html.escape(c.text)}</td><td>{html.escape(', '.join(f'[{n}]' for n in c.source_ids))}</td>"
            f"<td>{c.verdict.value}{' (removed)' if c.removed else ''}</td><td>{html.escape(c.reason)}</td></tr>"
            for c in result.claims
        )
        claims = ("<h2>Claims</h2>\n<table><tr><th>Claim</th><th>Sources</th><th>Verdict</th><th>Why</th></tr>\n"
                  f"{rows}\n</table>")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(result.query)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 48rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }}
a {{ color: #1a5fb4; }} li {{ margin: .4rem 0; }} table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: .3rem .5rem; vertical-align: top; text-align: left; }}
</style>
</head>
<body>
{body}
<h2>Sources</h2>
<ol class="sources">
{items}
</ol>
{claims}
</body>
</html>
"""


def _without_sources_section(markdown: str) -> str:
    """The report's own sources list goes: the page lists the sources itself, with anchors."""
    return verification.drop_unused_sources(markdown, set()).replace("\n## Sources\n", "\n").rstrip() + "\n"


_LINKABLE = re.compile(r"(?i)^(https?|file)://")


def _inert_markdown(known: set[int]) -> MarkdownIt:
    """CommonMark that makes an inert page: raw HTML shown as text; only http(s) and file URLs
    become links (not `smb:`, `ms-msdt:`, `mailto:`, `//host`: they stay text); an image becomes a
    link to it, never an <img> that loads when the file is opened; `[n]` becomes an anchor only in
    text, never inside an attribute (a link's title, an image's alt)."""
    md = MarkdownIt("commonmark", {"html": False})
    md.validateLink = lambda url: bool(_LINKABLE.match(url))

    def text(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
        escaped = html.escape(tokens[idx].content, quote=False)
        return CITATION.sub(lambda m: _links(m.group(1), known), escaped)

    def image(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
        token = tokens[idx]
        alt = html.escape(token.content or "image", quote=False)
        src = str(token.attrGet("src") or "")
        if _LINKABLE.match(src):
            return f'<a href="{html.escape(src)}">[image: {alt}]</a>'
        return f"[image: {alt}]"

    md.add_render_rule("text", text)
    md.add_render_rule("image", image)
    return md


def _links(ids: str, known: set[int]) -> str:
    parts = [int(n) for n in ids.split(",")]
    return "[" + ", ".join(f'<a href="#source-{n}">{n}</a>' if n in known else str(n) for n in parts) + "]"


def _url(url: str) -> str:
    """Only web and file addresses become links; anything else (javascript:, data:) stays text."""
    escaped = html.escape(url)
    return f'<a href="{escaped}">{escaped}</a>' if re.match(r"(?i)^(https?|file)://", url) else escaped


# --- plumbing -----------------------------------------------------------------------------------


def stored_research(session: Session, research_id: str) -> store.StoredResearch:
    url = session.cfg.research_db_url
    stored = read_library(lambda: store.load_research(url, research_id))
    if stored is None:
        raise CliError(f"no stored research with id {shown(research_id)} in {_where(url)}", EXIT_USAGE)
    return stored


def read_library(query: Callable[[], T]) -> T:
    """Run a library read; its classified errors become the CLI's one line, exit 2."""
    try:
        return query()
    except ApplicationError as err:
        raise CliError(err.message, EXIT_USAGE) from None


def _where(url: str) -> str:
    try:
        return store.safe(store.database_url(url))
    except Exception:  # noqa: BLE001 - only for a message
        return "RESEARCH_DB_URL"


def write_file(path: Path, content: str | bytes) -> None:
    """Write a report (or a result) to PATH; text without control characters or bidi overrides
    (`terminal.clean`: a report quotes the web). Unwritable: one line, exit 2."""
    try:
        if isinstance(content, str):
            path.write_text(clean(content), encoding="utf-8")
        else:
            path.write_bytes(content)
    except OSError as err:
        raise CliError(f"cannot write {path}: {err.strerror or err}", EXIT_USAGE) from None
    say(f"wrote {path}")
