"""The documentation holds together: README.md is a short hub, and docs/ one page per subject.

Every relative link in README.md and docs/*.md leads to a file that exists, and a `#anchor` to a
heading of that page (GitHub's rule: the heading's text in lower case, punctuation but `-` and `_`
dropped, spaces as hyphens, a repeated heading suffixed `-1`, `-2`, ...). Links inside code (fenced
blocks and `spans`) are text, not links. Runs in milliseconds, with nothing but the files.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

#: `[text](target)` and `![alt](target)`, with an optional "title"; nested image links give both.
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def prose(text: str, spans: bool = False) -> list[str]:
    """The lines outside fenced code blocks, with inline code spans removed (or, with `spans`, kept
    without their backticks: a heading's slug counts their text)."""
    lines, fence = [], None
    for line in text.splitlines():
        marker = re.match(r"\s*(`{3,}|~{3,})", line)
        if marker and (fence is None or marker.group(1)[0] == fence[0]):
            fence = None if fence else marker.group(1)
            continue
        if fence is None:
            lines.append(re.sub(r"(`+)((?:(?!\1).)+?)\1", r"\2" if spans else "", line))
    return lines


def slug(heading: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text, not its target
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: Counter[str] = Counter()
    found = set()
    for line in prose(page.read_text(), spans=True):
        if heading := re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line):
            base = slug(heading.group(1))
            found.add(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
    return found


def links(page: Path) -> list[str]:
    return [
        target
        for line in prose(page.read_text())
        for target in LINK.findall(line)
        if not SCHEME.match(target)
    ]


def test_the_slugs_are_githubs() -> None:
    assert slug("Following a research: events, `watch`, MCP") == (
        "following-a-research-events-watch-mcp"
    )
    assert slug("Checking a text's citations") == "checking-a-texts-citations"
    assert slug("Langfuse: prompts and tracing") == "langfuse-prompts-and-tracing"
    assert slug("Budgets, language and long reports") == "budgets-language-and-long-reports"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(REPO)}")
    assert not broken, "\n".join(broken)


def test_the_readme_is_a_short_hub() -> None:
    text = README.read_text()
    assert len(text.splitlines()) < 250, "README.md is a hub: move the detail to a page of docs/"
    first_block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make demo", "make test"], (
        "the first commands stay `make demo`, `make test`"
    )


def test_the_index_lists_every_page() -> None:
    index = DOCS / "README.md"
    listed = {(DOCS / target).resolve() for target in links(index)}
    pages = {page.resolve() for page in DOCS.glob("*.md") if page != index}
    assert pages <= listed, f"not in docs/README.md: {sorted(p.name for p in pages - listed)}"
    readme_links = {(REPO / target.partition("#")[0]).resolve() for target in links(README)}
    assert pages <= readme_links, "the README's map of docs/ misses a page"
