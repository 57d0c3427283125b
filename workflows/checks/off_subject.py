"""Every section about what it asks: the report's cited sentences about another subject than
their section's heading names (workflows/text/subjects.py tells the subjects apart). Apart from
subjects.py so that the sentence finder it needs (verification.py, which itself reads names
through subjects.py) is imported without a circle."""

from __future__ import annotations

import re
from dataclasses import dataclass

from workflows.kit.verification import cited_sentences
from workflows.text import subjects


@dataclass(frozen=True)
class OffSubject:
    section: str
    sentence: str
    other: str


def sections_off_subject(
    report: str, question: str, titles: dict[int, str], texts: dict[int, str]
) -> list[OffSubject]:
    """The report's cited sentences about another subject than their section asks: the section's
    heading (a step's title) names what it asks; a heading naming nothing (the summary) asks what
    the question does. `titles` and `texts`: each source's title and what was read of it."""
    off: list[OffSubject] = []
    read = [(titles.get(n, ""), text) for n, text in texts.items()]
    known = subjects.known_names([*texts.values(), question, report])
    peers = subjects.peers_of(read, known)
    for heading, body in _sections(report):
        if heading.lower() in subjects.NOT_STEPS - {"summary"}:
            continue
        about = subjects.Subject(
            wanted=subjects.wanted_names(heading, question, known), peers=peers, known=known
        )
        for cited in cited_sentences(body):
            other = about.other(cited.claim, [titles.get(n, "") for n in cited.source_ids])
            if other:
                off.append(OffSubject(section=heading, sentence=cited.claim, other=other))
    return off


def _sections(report: str) -> list[tuple[str, str]]:
    """(heading, text) per `##` section; the text before the first one is left out (the title)."""
    parts = re.split(r"^##[ \t]+(.+?)[ \t]*$", report, flags=re.MULTILINE)
    return [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
