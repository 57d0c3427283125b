"""How every list of a report's sources marks each one (the page, every download, `show`): where it
comes from, and whether the report cites it."""

from __future__ import annotations

from workflows.kit.citations import cited_ids, origin
from workflows.models import ResearchResult, Source


def cited_in(result: ResearchResult) -> set[int]:
    """The numbers of the sources the report cites."""
    return set(cited_ids(result.report_markdown))


def source_mark(source: Source, cited: set[int]) -> str:
    """How every list of sources marks one: where it comes from, and "read, not cited" when the
    report never cites it. Every source read is listed, so the report's numbers have no gaps
    ([1], [3] with [2] read but not cited), and a reader tells what a claim rests on from what
    was only read."""
    where = origin(source)
    return where if source.id in cited else f"{where}; read, not cited"
