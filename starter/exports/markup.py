"""The report as Markdown and as inert HTML: the `md` and `html` downloads (CLI `export`, the web app).

The HTML is CommonMark with raw HTML off, so text from the web never becomes markup; images become
links (nothing loads when the file opens); only `http` and `https` URLs become links (a `file://`
link may reach a share on another host), and `[n]` anchors only in text. The page carries its own
Content-Security-Policy (HTML_CSP): opened from disk, where no server sends one, it still runs no
script and loads nothing.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererProtocol
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from starter.exports import document
from starter.exports.names import literal_names
from workflows.kit import verification
from workflows.kit.citations import CITATION
from workflows.models import ResearchResult

#: The standalone page's own policy: its inline style, nothing else (no script, no request).
HTML_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)


def to_markdown(result: ResearchResult, entries: list[document.SourceEntry] | None = None) -> str:
    """The report with every source read listed under its number, marked (`source_mark`), a paper
    as a reference in CITATION_STYLE (`document.entry_spans`): the report's own list, which names
    only the cited ones, is replaced. ENTRIES: the list, when already made."""
    if not result.sources:
        return result.report_markdown.rstrip() + "\n"
    return (
        without_sources_list(result.report_markdown).rstrip()
        + "\n\n## Sources\n\n"
        + "\n".join(
            "- " + document.plain(document.entry_spans(e))
            for e in (entries if entries is not None else document.source_entries(result))
        )
        + "\n"
    )


def to_html(
    result: ResearchResult,
    title: str | None = None,
    entries: list[document.SourceEntry] | None = None,
) -> str:
    """One self-contained page: no scripts, no external resources, every `[n]` a link to its source.
    Its `<title>` is the report's title (a renamed research's new one), not the question.

    Raw HTML in the markdown is escaped, never rendered: a report quotes the web, and a page's
    `<script>` must reach the reader as text.
    """
    known = {s.id for s in result.sources}
    body = _inert_markdown(known).render(without_sources_list(result.report_markdown))
    items = "\n".join(
        f'<li id="source-{e.id}">[{e.id}] {_reference(e.reference)} ({html.escape(e.origin)})<br>{_url(e.url)}</li>'
        for e in (entries if entries is not None else document.source_entries(result))
    )
    claims = ""
    if result.claims:
        rows = "\n".join(
            f"<tr><td>{html.escape(c.text)}</td><td>{html.escape(', '.join(f'[{n}]' for n in c.source_ids))}</td>"
            f"<td>{c.verdict.value}{' (removed)' if c.removed else ''}</td><td>{html.escape(c.reason)}</td></tr>"
            for c in result.claims
        )
        claims = (
            "<h2>Claims</h2>\n<table><tr><th>Claim</th><th>Sources</th><th>Verdict</th><th>Why</th></tr>\n"
            f"{rows}\n</table>"
        )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{HTML_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title if title is not None else document.read(result, listed=False).title)}</title>
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


#: A "Sources" or "References" heading with nothing left under it (up to the next heading, a
#: rule or the end) once its `[n]` lines are gone.
_EMPTY_LIST_HEADING = re.compile(
    r"(?im)^#{1,6}[ \t]*(?:sources|references)[ \t#]*(?:\n|\Z)(?:[ \t]*\n)*"
    r"(?=^#{1,6}[ \t]|^(?:-{3,}|\*{3,}|_{3,})[ \t]*$|\Z)"
)


def without_sources_list(markdown: str) -> str:
    """The report without its own list of sources (the page and the HTML list the sources
    themselves, with anchors): its `[n]` lines and then its heading go; every other line of the
    report stays where it was, the engine's notes after the list included."""
    dropped = verification.drop_unused_sources(markdown, set())
    return _EMPTY_LIST_HEADING.sub("", dropped).rstrip() + "\n"


_LINKABLE = re.compile(r"(?i)^https?://")


def _inert_markdown(known: set[int]) -> MarkdownIt:
    """CommonMark that makes an inert page: raw HTML shown as text; only http(s) URLs
    become links (not `smb:`, `ms-msdt:`, `mailto:`, `//host`: they stay text); an image becomes a
    link to it, never an <img> that loads when the file is opened; `[n]` becomes an anchor only in
    text, never inside an attribute (a link's title, an image's alt)."""
    md = literal_names(_WebLinksOnly("commonmark", {"html": False}))

    def text(
        renderer: RendererProtocol,
        tokens: Sequence[Token],
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        escaped = html.escape(tokens[idx].content, quote=False)
        return CITATION.sub(lambda m: _links(m.group(1), known), escaped)

    def image(
        renderer: RendererProtocol,
        tokens: Sequence[Token],
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        token = tokens[idx]
        alt = html.escape(token.content or "image", quote=False)
        src = str(token.attrGet("src") or "")
        if _LINKABLE.match(src):
            return f'<a href="{html.escape(src)}">[image: {alt}]</a>'
        return f"[image: {alt}]"

    md.add_render_rule("text", text)
    md.add_render_rule("image", image)
    return md


class _WebLinksOnly(MarkdownIt):
    """CommonMark whose links are http(s) URLs only: markdown-it asks `validateLink` of each."""

    def validateLink(self, url: str) -> bool:  # noqa: N802 - markdown-it's name
        return bool(_LINKABLE.match(url))


def _links(ids: str, known: set[int]) -> str:
    parts = [int(n) for n in ids.split(",")]
    return (
        "["
        + ", ".join(f'<a href="#source-{n}">{n}</a>' if n in known else str(n) for n in parts)
        + "]"
    )


def _reference(spans: tuple[document.Span, ...]) -> str:
    """A source's reference, escaped; a style's italics kept (the title is not set in bold here)."""
    return "".join(
        f"<i>{html.escape(s.text)}</i>" if s.italic else html.escape(s.text) for s in spans
    )


def _url(url: str) -> str:
    """Only web addresses become links; anything else (file:, javascript:, data:) stays text."""
    escaped = html.escape(url)
    return f'<a href="{escaped}">{escaped}</a>' if _LINKABLE.match(url) else escaped


# --- plumbing -----------------------------------------------------------------------------------
