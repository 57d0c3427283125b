"""The evidence pool: for each source a step cites, the few paragraphs that back its observation.

Verification and the research library need to know what a citation rests on, but whole pages
would bloat history and the stored research. So after each step the paragraphs of each cited
source's passage that share the most content words with the step's observation are kept
(at most EVIDENCE_PER_SOURCE per source per step, each at most EVIDENCE_CHARS), with the source id
and the paragraph's position in the passage. Pure and deterministic: it runs inside the workflow.
"""

from __future__ import annotations

from activities.text import content_terms, split_paragraphs, trim
from workflows.models import Evidence, Passage

EVIDENCE_PER_SOURCE = 2
EVIDENCE_CHARS = 600


def supporting_evidence(observation: str, cited: list[int], passages: list[Passage]) -> list[Evidence]:
    """The paragraphs of each cited passage that best support `observation`, best first per source.

    A source whose paragraphs share no content word with the observation still keeps its first
    paragraph: the step cited it, and a verifier should see what it actually says.
    """
    wanted = set(content_terms(observation))
    pool: list[Evidence] = []
    for passage in passages:
        if passage.source_id not in cited:
            continue
        paragraphs = split_paragraphs(passage.text)
        ranked = sorted(
            range(len(paragraphs)),
            key=lambda i: (-len(wanted & set(content_terms(paragraphs[i]))), i),
        )
        for position in ranked[:EVIDENCE_PER_SOURCE]:
            overlap = wanted & set(content_terms(paragraphs[position]))
            if overlap or position == ranked[0]:
                pool.append(Evidence(source_id=passage.source_id, position=position,
                                     text=trim(paragraphs[position], EVIDENCE_CHARS)))
    return pool


def merge(pool: list[Evidence], new: list[Evidence]) -> list[Evidence]:
    """The pool with `new` added, each (source, text) once, in the order found."""
    seen = {(e.source_id, e.text) for e in pool}
    return [*pool, *(e for e in new if (e.source_id, e.text) not in seen and not seen.add((e.source_id, e.text)))]
