"""A research's title of its owner's own.

`research_title` checks and cleans what a person typed, the same for the CLI, the API, the pages'
forms and MCP; `titled` is a research as its owner named it: the report's leading `# Title` is
the person's title, so the page, the downloads (file names too) and the API say the same.
"""

from __future__ import annotations

import re
from typing import Any

from starter.client.requests import RequestError
from starter.client.terminal import clean
from starter.exports import clean as without_invisible
from workflows.models import ResearchResult

TITLE_MAX_CHARS = 200
FIELD = "title"
#: The report's title: a level-one heading as its first line.
_LEADING_H1 = re.compile(r"\A\s*#[ \t]+[^\n]*")
#: Markdown's punctuation, escaped in a heading so a title never turns into a link or emphasis.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#!|~{}()])")


def research_title(value: Any) -> str:
    """VALUE as a title: one line, without control, bidi or zero-width characters (as the pages
    and downloads show text), 1 to TITLE_MAX_CHARS characters; else a one-line RequestError."""
    allowed = f"text of 1 to {TITLE_MAX_CHARS} characters"
    if value is None:
        raise RequestError(f"a title is required: {allowed}", FIELD)
    if not isinstance(value, str):
        raise RequestError(f"invalid title: use {allowed}", FIELD)
    title = " ".join(without_invisible(clean(value)).split())
    if not title:
        raise RequestError(f"the title is empty: use {allowed}", FIELD)
    if len(title) > TITLE_MAX_CHARS:
        raise RequestError(
            f"the title is too long ({len(title)} characters, at most {TITLE_MAX_CHARS})", FIELD
        )
    return title


def titled(result: ResearchResult, title: str | None) -> ResearchResult:
    """RESULT with TITLE as its report's title (the leading `# ...`, added when there is none);
    RESULT itself when its owner gave it no title."""
    if not title:
        return result
    heading = "# " + _MARKDOWN.sub(r"\\\1", title)
    report = result.report_markdown
    if _LEADING_H1.match(report):
        report = _LEADING_H1.sub(lambda _: heading, report, count=1)
    else:
        report = f"{heading}\n\n{report.lstrip()}"
    return result.model_copy(update={"report_markdown": report})
