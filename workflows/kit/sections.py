"""A report's sections, as a person numbers them to revise one: found, read and replaced in the
report's markdown, leaving every other byte where it was.

Which headings count (docs/using.md, "Revising one section", says the same to users):

- A section starts at a level-2 ATX heading (`## Heading`, up to three spaces before it) outside
  a fenced code block. They are numbered from 1 in the order the report has them; the Summary
  counts when it is such a heading. `### ` headings are part of the section above them.
- Not numbered: the report's list of sources (a heading named Sources, References, Bibliography
  or Works cited) and a standing research's `What changed since ...` comparison: neither is written
  from the evidence, so neither can be rewritten from it.
- A section ends at the next level-1 or level-2 heading, or at the first of the report's closing
  lines: a thematic break (`---`, the engine's footer follows it), the verification line
  (`*Verification: ...*`, `*Claims were not verified ...*`) or `Planned but not researched: ...`.

A revised section ends with one marker line, `*Revised (version N) at the reader's request: ...*`
(what its re-check found), which every export keeps and the research page shows as "revised".
A section revised again gets a new marker in place of the old one. A whole report rewritten after
a person's review ends with the feedback it was rewritten with (`revision_note`), and says when
the rewrite came out the same (`UNCHANGED`, which the research page reads too).

Pure (stdlib and workflows only): it runs inside the workflow, and the client and the page number
sections with it too, so all of them count alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workflows.kit import citations
from workflows.kit.verification import verification_note, who_checked
from workflows.models import VerificationSummary

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"[ \t]+#+$|^#+$")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_CLOSING = re.compile(
    r"^(?:\*Verification:|\*Claims were not verified|Planned but not researched:)", re.IGNORECASE
)
_NOT_NUMBERED = re.compile(
    r"(?:\d+(?:\.\d+)*\.?\s+)?(?:sources?|references?|bibliography|works cited)"
    r"|what changed since\b.*",
    re.IGNORECASE,
)
#: The marker line a revised section ends with.
MARKER = re.compile(r"^\*Revised \(version (\d+)\)[^\n]*\*[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class Section:
    """One numbered section: where it is in the report (character offsets)."""

    number: int
    #: The heading's text as written, after `## `.
    heading: str
    #: Where the heading line starts, and where the line after it starts.
    start: int
    body_start: int
    #: Where the section ends: the next heading, a closing line, or the report's end.
    end: int

    def text(self, report: str) -> str:
        """The whole section: its heading line and its body, as the report has them."""
        return report[self.start : self.end]

    def body(self, report: str) -> str:
        """What the section says, without its heading and without a revision's marker line."""
        return MARKER.sub("", report[self.body_start : self.end]).strip()

    def revised_in(self, report: str) -> int | None:
        """The version whose revision wrote this section (its marker line), or None."""
        found = MARKER.search(report, self.body_start, self.end)
        return int(found.group(1)) if found else None


def sections(report: str) -> list[Section]:
    """The report's numbered sections, in order."""
    found: list[Section] = []
    open_at: tuple[str, int, int] | None = None  # heading, start, body start
    fence, offset = "", 0

    def close(end: int) -> None:
        nonlocal open_at
        if open_at is not None:
            heading, start, body = open_at
            found.append(Section(len(found) + 1, heading, start, body, end))
            open_at = None

    for raw in report.splitlines(keepends=True):
        begin, offset = offset, offset + len(raw)
        line = raw.rstrip("\r\n")
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = ""
            continue
        if opening := _FENCE.match(line):
            fence = opening.group(1)
            continue
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) <= 2:
            close(begin)
            text = _CLOSING_HASHES.sub("", (heading.group(2) or "").strip()).strip()
            if len(heading.group(1)) == 2 and not _NOT_NUMBERED.fullmatch(text.strip("*_: ")):
                open_at = (text, begin, offset)
            continue
        if open_at is not None and (_RULE.match(line) or _CLOSING.match(line.strip())):
            close(begin)
    close(len(report))
    return found


def replaced(report: str, section: Section, body: str, marker: str) -> str:
    """REPORT with SECTION's body replaced by BODY and its MARKER line; the heading line and
    everything before and after the section stay byte for byte as they were."""
    head = report[: section.body_start]
    if not head.endswith("\n"):
        head += "\n"
    rest = report[section.end :]
    block = "\n" + (body.strip() + "\n\n" if body.strip() else "") + marker.strip() + "\n"
    return head + block + ("\n" if rest else "") + rest


def marker_line(version: int, summary: VerificationSummary) -> str:
    """The line a revised section ends with: which version revised it and what its re-check
    found ("*Revised (version 2) at the reader's request: 3 of 3 claims are supported by their
    cited sources.*")."""
    note = verification_note(summary).strip("*")
    checked = who_checked(summary)
    if checked and note.endswith(checked.strip("*")):
        note = note[: -len(checked.strip("*"))].rstrip()
    found = note.removeprefix("Verification: ").replace("the report", "the section")
    return f"*Revised (version {version}) at the reader's request: {found}*"


#: What the report says when a rewrite came out as the draft was (the page reads it: not "revised").
UNCHANGED = "The rewrite came out the same as the draft"


def revision_note(revised: str, draft: str, feedback: list[str]) -> str:
    """The report's closing line after a revision: the feedback it was revised with (each round's),
    and, when the rewrite came out as the draft was (the offline engine writes from its sources
    alone and cannot follow written feedback), that it could not act on it, so nobody takes it
    for done."""
    said = "; ".join(f"“{citations.escape(' '.join(f.split()))}”" for f in feedback)
    line = f"> **Revised after review:** {said}."
    if revised.strip() == draft.strip():
        line += (
            f" {UNCHANGED}: the engine that writes this report could "
            "not act on the feedback (the offline engine writes from its sources alone; an LLM engine "
            "follows it)."
        )
    return f"{revised.rstrip()}\n\n{line}\n"
