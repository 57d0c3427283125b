"""The evidence pool: for each source a step cites, the few paragraphs that back its observation.

Verification and the research library need to know what a citation rests on, but whole pages
would bloat history and the stored research. So after each step, for every sentence of the
observation that cites a source, the paragraph of that source's passage sharing the most content
words with the sentence is kept: that is where the finding came from, and what a verifier must
read. A cited source no sentence matches keeps its paragraphs closest to the observation as a
whole. At most EVIDENCE_PER_SOURCE paragraphs per source per step, each at most EVIDENCE_CHARS,
with the source id and the paragraph's position. Pure and deterministic: it runs in the workflow.
"""

from __future__ import annotations

from workflows.kit.citations import cited_ids
from workflows.models import Evidence, Passage
from workflows.text import content_terms, split_paragraphs, split_sentences, trim

EVIDENCE_PER_SOURCE = 3
EVIDENCE_CHARS = 600


def supporting_evidence(
    observation: str, cited: list[int], passages: list[Passage]
) -> list[Evidence]:
    """The paragraphs of each cited passage that support `observation`, in the order needed.

    A source whose paragraphs share no content word with the observation still keeps its first
    paragraph: the step cited it, and a verifier should see what it actually says.
    """
    pool: list[Evidence] = []
    for passage in passages:
        if passage.source_id not in cited:
            continue
        paragraphs = split_paragraphs(passage.text)
        terms = [set(content_terms(p)) for p in paragraphs]
        chosen: dict[int, set[str]] = {}
        for sentence in split_sentences(observation):
            if passage.source_id in cited_ids(sentence):
                wanted = set(content_terms(sentence))
                best = _best(wanted, terms)
                if best is not None:
                    chosen.setdefault(best, set()).update(wanted)
        if not chosen:
            wanted = set(content_terms(observation))
            ranked = sorted(range(len(paragraphs)), key=lambda i: (-len(wanted & terms[i]), i))
            chosen = {i: wanted for n, i in enumerate(ranked[:2]) if n == 0 or wanted & terms[i]}
        pool += [
            Evidence(source_id=passage.source_id, position=i, text=_excerpt(paragraphs[i], wanted))
            for i, wanted in list(chosen.items())[:EVIDENCE_PER_SOURCE]
        ]
    return pool


def _excerpt(paragraph: str, wanted: set[str]) -> str:
    """The paragraph, or for a long one the run of sentences around the one that matters most:
    cutting a long paragraph at its start would keep words and lose the finding."""
    if len(paragraph) <= EVIDENCE_CHARS:
        return paragraph
    sentences = split_sentences(paragraph)
    best = _best(wanted, [set(content_terms(x)) for x in sentences]) or 0
    start, end = best, best + 1
    while True:
        grown = False
        for lo, hi in ((start, end + 1), (start - 1, end)):
            if (
                lo >= 0
                and hi <= len(sentences)
                and len(" ".join(sentences[lo:hi])) <= EVIDENCE_CHARS
            ):
                start, end, grown = lo, hi, True
                break
        if not grown:
            return trim(" ".join(sentences[start:end]), EVIDENCE_CHARS)


def _best(wanted: set[str], paragraphs: list[set[str]]) -> int | None:
    """The paragraph sharing the most words with `wanted` (the first on ties); None if none shares any."""
    scores = [len(wanted & p) for p in paragraphs]
    if not scores or max(scores) == 0:
        return None
    return scores.index(max(scores))


def merge(pool: list[Evidence], new: list[Evidence]) -> list[Evidence]:
    """The pool with `new` added, each (source, text) once, in the order found."""
    seen = {(e.source_id, e.text) for e in pool}
    merged = list(pool)
    for e in new:
        if (e.source_id, e.text) not in seen:
            seen.add((e.source_id, e.text))
            merged.append(e)
    return merged
