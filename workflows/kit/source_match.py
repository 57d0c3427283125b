"""Which source of this run is which source of the run before, and what changed in one whose
text changed.

A source is the same source when its URL is (without its fragment), or when its text is: the
same document uploaded again under another name has the same fingerprint (`Source.digest`) and is
no new source. A source read in both runs whose fingerprints differ was updated; what changed in
it is told from the evidence paragraphs both runs kept of it (the sentences that now read
differently, with the figures that moved), since neither run keeps the whole text. Sources of runs
recorded before fingerprints compare by URL only. Pure and deterministic: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workflows.kit.finding_match import figures, overlap, terms
from workflows.record import Evidence, Source
from workflows.text import split_sentences, trim

#: At most this many lines say what changed in one updated source, each at most LINE_CHARS.
MAX_CHANGE_LINES = 3
LINE_CHARS = 240
#: A sentence of this run is the same sentence of the run before, reworded or with a figure
#: changed, when this much of its content words agree.
SAME_SENTENCE = 0.6
#: Said of an updated source when the sentences both runs kept of it read the same.
CHANGED_ELSEWHERE = "its text changed outside the passages this research quotes from it"


def url_key(url: str) -> str:
    """A source's URL as compared: without its fragment (a section of the same page or document)."""
    return url.split("#", 1)[0].rstrip("/")


@dataclass
class SourceMatch:
    """Both runs' sources under one name each (the earlier run's URL when they are the same)."""

    #: Source id -> its name across runs, in the run before and in this run.
    before_key: dict[int, str] = field(default_factory=dict)
    now_key: dict[int, str] = field(default_factory=dict)
    #: Names of sources read in both runs with the same text, and of those whose text changed
    #: (name -> (id before, id now)).
    unchanged: set[str] = field(default_factory=set)
    updated: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: This run's sources the run before did not have, and the run before's sources not found now.
    new: list[Source] = field(default_factory=list)
    gone: list[Source] = field(default_factory=list)


def match_sources(before: list[Source], now: list[Source]) -> SourceMatch:
    """Sources paired by URL, then by fingerprint (a re-upload under another name)."""
    match = SourceMatch()
    by_url: dict[str, Source] = {}
    by_digest: dict[str, Source] = {}
    for source in before:
        key = url_key(source.url)
        by_url.setdefault(key, source)
        if source.digest:
            by_digest.setdefault(source.digest, source)
        match.before_key[source.id] = key
    seen: set[str] = set()
    for source in now:
        earlier = by_url.get(url_key(source.url)) or by_digest.get(source.digest or "\0")
        if earlier is None:
            match.now_key[source.id] = url_key(source.url)
            match.new.append(source)
            continue
        key = url_key(earlier.url)
        match.now_key[source.id] = key
        seen.add(key)
        if earlier.digest and source.digest:
            if earlier.digest == source.digest:
                match.unchanged.add(key)
            else:
                match.updated.setdefault(key, (earlier.id, source.id))
    match.unchanged -= set(match.updated)
    match.gone = [s for s in before if url_key(s.url) not in seen]
    return match


def what_changed(before: list[Evidence], now: list[Evidence]) -> list[str]:
    """What reads differently in an updated source, from the paragraphs both runs kept of it: each
    sentence of the earlier run's paragraphs that now reads otherwise, with the figures that moved."""
    earlier, later = _sentences(before), _sentences(now)
    lines: list[str] = []
    for old in (s for s in earlier if s not in later):
        old_terms = terms(old)
        scored = [(overlap(old_terms, terms(new)), -i, new) for i, new in enumerate(later)]
        best = max(scored, default=None)
        if best is None or best[0] < SAME_SENTENCE:
            continue
        new = best[2]
        moved_from, moved_to = figures(old) - figures(new), figures(new) - figures(old)
        if moved_from or moved_to:
            head = f"{', '.join(sorted(moved_from)) or '—'} → {', '.join(sorted(moved_to)) or '—'}"
            lines.append(trim(f"{head}: “{new}”", LINE_CHARS))
        else:
            lines.append(trim(f"now reads: “{new}”", LINE_CHARS))
        if len(lines) >= MAX_CHANGE_LINES:
            break
    return lines or [CHANGED_ELSEWHERE]


def _sentences(pool: list[Evidence]) -> list[str]:
    """The distinct sentences of some evidence paragraphs, spacing folded, in order."""
    seen: dict[str, None] = {}
    for item in pool:
        for sentence in split_sentences(item.text):
            seen.setdefault(" ".join(sentence.split()), None)
    return list(seen)
