"""Which headings of a report are its numbered sections, where each ends, and that replacing one
leaves every other byte (workflows/kit/sections.py: what `revise ID --section N` counts)."""

from __future__ import annotations

from workflows.kit.sections import marker_line, replaced, sections
from workflows.models import VerificationSummary

REPORT = """# How do tides work?

> **Note:** one step found nothing.

## Summary

The Moon pulls the sea [1].

## What pulls the sea

- The Moon's gravity raises a bulge [1].

### A detail

Springs tides come with a full moon [2].

```markdown
## Not a heading: inside a fence
```

## When the tides are highest

- Spring tides happen twice a month [2].

Planned but not researched: Tides on Mars.

## Sources

- [1] Tides — https://example.org/tides (web)
- [2] Moon — https://example.org/moon (web)

---

*Made offline by extractive methods.*

*Verification: 3 of 3 claims are supported by their cited sources.*
"""


def test_the_summary_counts_and_the_sources_list_and_closing_lines_do_not() -> None:
    found = sections(REPORT)
    assert [s.heading for s in found] == [
        "Summary",
        "What pulls the sea",
        "When the tides are highest",
    ]
    assert found[1].body(REPORT).endswith("## Not a heading: inside a fence\n```")  # ### inside
    assert found[2].body(REPORT) == "- Spring tides happen twice a month [2]."  # not the tail


def test_a_standing_comparison_is_not_a_section_and_ends_the_one_before() -> None:
    report = "## Answer\n\nA [1].\n\n## What changed since 1 Dec\n\nNothing changed.\n"
    assert [s.heading for s in sections(report)] == ["Answer"]
    assert sections(report)[0].body(report) == "A [1]."


def test_replacing_a_section_keeps_every_other_byte_and_its_marker_line() -> None:
    section = sections(REPORT)[1]
    summary = VerificationSummary(claims=1, supported=1, share_supported=1.0)
    marker = marker_line(2, summary)
    assert marker == (
        "*Revised (version 2) at the reader's request: 1 of 1 claim is supported by its "
        "cited sources.*"
    )
    new = replaced(REPORT, section, "- Only this [1].", marker)
    after = sections(new)[1]
    assert new[: after.body_start] == REPORT[: section.body_start]
    assert new[after.end :] == REPORT[section.end :]
    assert after.body(new) == "- Only this [1]." and after.revised_in(new) == 2

    again = replaced(new, after, "- Shorter [1].", marker_line(3, summary))
    last = sections(again)[1]
    assert last.body(again) == "- Shorter [1]." and last.revised_in(again) == 3
    assert again.count("*Revised (version") == 1  # the old marker went with the old body
    assert again[last.end :] == REPORT[section.end :]


def test_a_report_without_level_two_headings_has_no_sections() -> None:
    assert sections("# Title\n\nJust prose [1].\n\n### Minor\n\nMore [2].\n") == []
