"""Markdown to safe HTML for the pages: the report, a draft under review, and what each citation's
popover shows.

A report quotes the web, so its text is untrusted: rendered here, on the server, it can never run
script or load anything in the reader's browser. Two layers, either of which alone would hold:

- markdown-it-py with raw HTML off (a `<script>` in the markdown reaches the reader as text); only
  `http(s)://` and in-page `#` links become links (not `javascript:`, `data:`, `file:`, `//host`);
  an image becomes a link to it (when it is http(s)) or its alt text, never an `<img>`;
  `[n]` becomes a link to source n only in text, never inside an attribute;
- the output then goes through nh3 (ammonia) with an allow-list of tags and attributes: every link
  gets `rel="noopener noreferrer nofollow"`, every href is checked again.

Headings move so that the report's top level is `<h2>` (the page's own `<h1>` is the question),
and a table column's alignment becomes a class (the Content-Security-Policy refuses `style`
attributes).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from starter.exports.marks import cited_in
from starter.exports.markup import without_sources_list
from starter.exports.names import literal_names
from workflows.kit.citations import CITATION, origin
from workflows.kit.verification import who_checked
from workflows.models import PaperRead, ResearchResult, Source, VerificationSummary

REL = "noopener noreferrer nofollow"
#: At most this many evidence paragraphs and claims in one popover, each clipped to QUOTE_CHARS.
MAX_QUOTES, MAX_CLAIMS, QUOTE_CHARS = 3, 4, 320

_WEB_URL = re.compile(r"(?i)^https?://[^\s]+$")
_IN_PAGE = re.compile(r"^#[\w.:-]*$")
_ALIGN = re.compile(r"text-align:\s*(left|center|right)")
_CARD = re.compile(r"^source-\d+-card$")

TAGS = {
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "p",
    "br",
    "hr",
    "blockquote",
    "pre",
    "code",
    "em",
    "strong",
    "s",
    "del",
    "ul",
    "ol",
    "li",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "span",
}
ATTRIBUTES = {"a": {"href", "aria-label", "aria-describedby", "data-url"}, "ol": {"start"}}
CLASSES = {
    "a": {"cite"},
    "th": {"align-left", "align-center", "align-right"},
    "td": {"align-left", "align-center", "align-right"},
    "span": {"citation"},
}


def card_id(source_id: int) -> str:
    """The id of the element that describes source n (its popover)."""
    return f"source-{source_id}-card"


def _printable(url: str) -> bool:
    """An address worth printing after a citation: a web page or a local document."""
    return web_link(url) or url.startswith("file:///")


def web_link(url: str) -> bool:
    """An address the browser may follow: http(s) only (a local document's file:// is shown as text)."""
    return bool(_WEB_URL.match(url))


def render_markdown(markdown: str, known: Mapping[int, str] | None = None) -> Markup:
    """Safe HTML for untrusted markdown; `[n]` for a source in `known` (id to URL) links to it."""
    raw = _markdown(known or {}).render(markdown)
    return Markup(
        nh3.clean(
            raw,
            tags=TAGS,
            attributes=ATTRIBUTES,
            allowed_classes=CLASSES,
            attribute_filter=_attribute,
            link_rel=REL,
            url_schemes={"http", "https"},
            strip_comments=True,
        )
    )


def _attribute(tag: str, name: str, value: str) -> str | None:
    if name == "href":
        return value if web_link(value) or _IN_PAGE.match(value) else None
    if name == "aria-describedby":
        return value if _CARD.match(value) else None
    if name == "data-url":
        return value if _printable(value) else None
    return value


# --- the report -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceCard:
    """One numbered source as the page lists it and its citations' popover shows it."""

    id: int
    title: str
    url: str
    #: "local" (a document of the research corpus) or "web" (with the search provider).
    mark: str
    evidence: list[str] = field(default_factory=list)
    #: (claim, verdict) for the report's claims that cite this source.
    claims: list[tuple[str, str]] = field(default_factory=list)
    #: The report cites it (else it was read, not cited: listed so numbers have no gaps).
    cited: bool = True
    #: A paper's authors and year ("Smith, J., & Lee, K. (2021)"), "" for anything else.
    byline: str = ""
    #: What a reader must know before trusting a paper: "retracted", "abstract only".
    warnings: tuple[str, ...] = ()

    @property
    def card_id(self) -> str:
        return card_id(self.id)

    @property
    def link(self) -> bool:
        return web_link(self.url)

    @property
    def local(self) -> bool:
        return self.mark == "local"


@dataclass(frozen=True)
class RenderedReport:
    body: Markup
    sources: list[SourceCard]
    #: One sentence on how many claims their evidence supports; None when not verified.
    verification: str | None


def render_report(result: ResearchResult) -> RenderedReport:
    known = {s.id: s.url for s in result.sources}
    cited = cited_in(result)
    markdown = without_title(without_sources_list(result.report_markdown), result.query)
    body = render_markdown(markdown, known)
    return RenderedReport(
        body,
        [source_card(result, s, cited) for s in result.sources],
        verification_text(result.verification),
    )


def without_title(markdown: str, question: str) -> str:
    """The report without a first heading that only repeats the question (the page's heading)."""
    first, _, rest = markdown.lstrip().partition("\n")
    title = re.fullmatch(r"#[ \t]+(.+?)[ \t#]*", first)
    same = (
        title is not None
        and " ".join(title.group(1).split()).casefold() == " ".join(question.split()).casefold()
    )
    return rest.lstrip("\n") if same else markdown


def source_card(result: ResearchResult, source: Source, cited: set[int]) -> SourceCard:
    quotes = [_clip(e.text) for e in result.evidence if e.source_id == source.id][:MAX_QUOTES]
    claims = [
        (_clip(c.text), c.verdict.value)
        for c in result.claims
        if source.id in c.source_ids and not c.removed
    ][:MAX_CLAIMS]
    mark = "paper" if source.is_paper else "local" if origin(source) == "local" else "web"
    return SourceCard(
        source.id,
        " ".join(source.title.split()) or source.url,
        source.url,
        mark,
        quotes,
        claims,
        source.id in cited,
        *paper_marks(source),
    )


def paper_marks(source: Source) -> tuple[str, tuple[str, ...]]:
    """A paper's byline and the warnings its entry shows (none for a page or a document)."""
    if not source.is_paper:
        return "", ()
    names = [" ".join(n.split()) for n in source.authors if n.strip()]
    who = ", ".join(names[:3]) + (" et al." if len(names) > 3 else "")
    year = str(source.year) if source.year else "n.d."
    warnings: tuple[str, ...] = ("retracted",) if source.retracted else ()
    if source.read == PaperRead.ABSTRACT.value:
        warnings += ("abstract only",)
    return (f"{who} ({year})" if who else f"({year})"), warnings


def verification_text(summary: VerificationSummary | None) -> str | None:
    if summary is None or not summary.enabled:
        return None
    if not summary.claims:
        return "No cited claims to check."
    parts = [
        f"{summary.supported} supported",
        f"{summary.partial} partly supported",
        f"{summary.unsupported} unsupported",
    ]
    if summary.unverified:
        parts.append(f"{summary.unverified} not checked")
    extra = [
        f"{n} {what}"
        for n, what in ((summary.revised, "rewritten"), (summary.removed, "removed"))
        if n
    ]
    return (
        f"{summary.claims} cited {'claim' if summary.claims == 1 else 'claims'} checked against "
        f"{'its' if summary.claims == 1 else 'their'} evidence"
        + (f" ({summary.method})" if summary.method else "")
        + ": "
        + ", ".join(parts)
        + (f"; {', '.join(extra)}" if extra else "")
        + f". {summary.share_supported:.0%} supported."
        + who_checked(summary)
    )


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


# --- markdown-it ------------------------------------------------------------------------------------


class _PageMarkdown(MarkdownIt):
    """A report's links: only the web's, or a place on the page itself."""

    def validateLink(self, url: str) -> bool:  # noqa: N802 - markdown-it's name
        return bool(web_link(url) or _IN_PAGE.match(url))


def _markdown(known: Mapping[int, str]) -> MarkdownIt:
    md = literal_names(
        _PageMarkdown("commonmark", {"html": False}).enable(["table", "strikethrough"])
    )
    md.core.ruler.push("page_headings_and_alignment", _shift_headings_and_align)

    def text(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
        escaped = html.escape(tokens[idx].content, quote=False)
        if _inside_link(tokens, idx):
            return escaped  # a link in a link is no HTML: `[see [1]](https://...)` stays one link
        return CITATION.sub(lambda m: _citation(m.group(1), known), escaped)

    def image(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
        token = tokens[idx]
        alt = html.escape(token.content or "image", quote=False)
        src = str(token.attrGet("src") or "")
        return (
            f'<a href="{html.escape(src)}">[image: {alt}]</a>'
            if web_link(src)
            else f"[image: {alt}]"
        )

    md.add_render_rule("text", text)
    md.add_render_rule("image", image)
    return md


def _shift_headings_and_align(state) -> None:  # type: ignore[no-untyped-def]
    levels = [int(t.tag[1]) for t in state.tokens if t.type == "heading_open"]
    shift = 2 - min(levels, default=2)  # the report's top headings sit right under the page's h1
    for token in state.tokens:
        _retag(token, shift)


def _retag(token: Token, shift: int) -> None:
    if token.type in ("heading_open", "heading_close"):
        token.tag = f"h{min(int(token.tag[1]) + shift, 6)}"
    elif token.type in ("th_open", "td_open"):
        align = _ALIGN.search(str(token.attrGet("style") or ""))
        token.attrs.pop("style", None)
        if align:
            token.attrSet("class", f"align-{align.group(1)}")


def _inside_link(tokens: list[Token], idx: int) -> bool:
    depth = 0
    for token in tokens[:idx]:
        depth += {"link_open": 1, "link_close": -1}.get(token.type, 0)
    return depth > 0


def _citation(ids: str, known: Mapping[int, str]) -> str:
    """`[1, 2]` as links to sources 1 and 2, each described by its card; `data-url` is the
    source's address, which the print stylesheet shows after the number."""
    links = [
        f'<a class="cite" href="#source-{n}" aria-label="Source {n}" aria-describedby="{card_id(n)}"'
        + (f' data-url="{html.escape(known[n])}"' if _printable(known[n]) else "")
        + f">{n}</a>"
        if n in known
        else str(n)
        for n in (int(p) for p in ids.split(","))
    ]
    return '<span class="citation">[' + ", ".join(links) + "]</span>"
