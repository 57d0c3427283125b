"""Citation bookkeeping that must be deterministic, so it runs inside the workflow.

A report may only cite sources the research actually read: any `[n]` that does not resolve to
`result.sources` is removed before the report leaves the workflow, and the removal is noted.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from workflows.models import Claim, PaperRead, PlanStep, Source

#: A citation marker `[n]` or `[n, m]`: the one pattern every reader and writer of reports uses.
CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def escape(text: str) -> str:
    """Text from elsewhere (a note, a title) may contain `[7]`: escaped, it cannot pass for a
    citation, and markdown still shows it as [7]."""
    return CITATION.sub(lambda m: f"\\[{m.group(1)}\\]", text)


def origin(source: Source) -> str:
    """Where a source came from, as a report's Sources list says it (a research may mix them):
    "local" for a document of the research corpus, else "web" and the search provider; a paper
    says "paper" and its index, "abstract only" when no full text was read, and "retracted" first
    when an index says so (a retracted work is never listed as if it stood)."""
    if source.is_paper:
        marks = ["retracted"] if source.retracted else []
        marks.append(f"paper, {source.provider}" if source.provider else "paper")
        if source.read == PaperRead.ABSTRACT.value:
            marks.append("abstract only")
        return "; ".join(marks)
    if source.provider == "local" or source.url.startswith("file:"):
        return "local"
    return f"web, {source.provider}" if source.provider else "web"


def reference(source: Source) -> str:
    """What a report's Sources list says a source is, before its URL: its title, escaped; a
    paper as a reference names its authors and year (`Smith, J., & Lee, K. (2021). Title.
    Venue.`), so `- [n] TEXT — URL (origin)` stays the one line format readers parse."""
    if not source.is_paper:
        return escape(source.title)
    title = _sentence(escape(" ".join(source.title.split())))
    year = f"({source.year})." if source.year else "(n.d.)."
    venue = _sentence(escape(source.venue)) if source.venue.strip() else ""
    authors = _authors(source.authors)
    parts = [authors, year, title, venue] if authors else [title, year, venue]
    return " ".join(p for p in parts if p)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".?!" else text + "."


#: Lower-case words that belong to a family name (`van Gogh`, `de la Cruz`).
_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "da", "di", "du", "la", "le"}
)


def _authors(names: list[str]) -> str:
    """Names as APA 7 lists them: `Family, G. N.`, the last after `&`, at most 20 (then the
    first 19, an ellipsis and the last)."""
    shown = [_author(n) for n in names if n.strip()]
    if len(shown) > 20:
        return ", ".join(shown[:19]) + ", . . . " + shown[-1]
    if len(shown) < 2:
        return "".join(shown)
    return ", ".join(shown[:-1]) + ", & " + shown[-1]


def _author(name: str) -> str:
    name = escape(" ".join(name.split()))
    if "," in name:
        family, given = (part.strip() for part in name.split(",", 1))
    else:
        words = name.split(" ")
        cut = len(words) - 1
        while cut > 1 and words[cut - 1] in _PARTICLES:
            cut -= 1
        family, given = " ".join(words[cut:]), " ".join(words[:cut])
    initials = " ".join(
        "-".join(f"{part[0]}." for part in word.split("-") if part) for word in given.split()
    )
    return f"{family}, {initials}" if initials else family


#: Code in Markdown: a fenced block or an inline span. `heap[0]` and `[1, 3, 5]` there are code,
#: never citations, and no citation edit may touch them.
_CODE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?(?:^[ \t]*\1[ \t]*$|\Z)|`[^`\n]*`", re.M | re.S)


def citations_in(markdown: str) -> list[re.Match[str]]:
    """The citation markers of a text, outside its code."""
    code = [m.span() for m in _CODE.finditer(markdown)]
    return [
        m
        for m in CITATION.finditer(markdown)
        if not any(start <= m.start() < end for start, end in code)
    ]


def sub_citations(markdown: str, replace: Callable[[re.Match[str]], str]) -> str:
    """`CITATION.sub(replace, markdown)` that leaves code as it is."""
    out, last = [], 0
    for match in citations_in(markdown):
        out += [markdown[last : match.start()], replace(match)]
        last = match.end()
    return "".join(out) + markdown[last:]


def cited_ids(markdown: str) -> list[int]:
    ids: list[int] = []
    for match in citations_in(markdown):
        for part in match.group(1).split(","):
            n = int(part)
            if n not in ids:
                ids.append(n)
    return ids


def drop_unresolved(markdown: str, sources: list[Source]) -> tuple[str, list[int]]:
    """The report with citations to unknown sources removed, and the ids that were removed."""
    known = {s.id for s in sources}
    dropped: list[int] = []

    def keep(match: re.Match[str]) -> str:
        ids = [int(p) for p in match.group(1).split(",")]
        good = [n for n in ids if n in known]
        dropped.extend(n for n in ids if n not in known and n not in dropped)
        return f"[{', '.join(str(n) for n in good)}]" if good else ""

    # Only rewrite citation markers in prose, never inside the "[n] Title — url" sources list lines
    # whose ids are checked the same way.
    return sub_citations(markdown, keep), dropped


def keep_resolved_claims(claims: list[Claim], sources: list[Source]) -> list[Claim]:
    known = {s.id for s in sources}
    kept = []
    for claim in claims:
        ids = [n for n in claim.source_ids if n in known]
        if ids:
            kept.append(claim.model_copy(update={"source_ids": ids}))
    return kept


def fallback_report(
    query: str, steps: list[PlanStep], sources: list[Source], notes: list[str]
) -> str:
    """A plain report from the step observations, for when the synthesizer cannot run
    (its retries are spent, or the research was cancelled while it was writing)."""
    lines = [f"# {query}", ""]
    lines += [f"> Note: {note}" for note in notes]
    if notes:
        lines.append("")
    done = [s for s in steps if s.observation]
    if not done:
        lines.append("No findings were gathered before the research ended.")
    for step in done:
        lines += [f"## {step.title}", "", step.observation or "", ""]
    cited = set(cited_ids("\n".join(lines)))
    listed = [s for s in sources if s.id in cited]
    if listed:
        lines += ["## Sources", ""]
        lines += [f"- [{s.id}] {reference(s) if s.is_paper else s.title} — {s.url}" for s in listed]
    return "\n".join(lines).rstrip() + "\n"
