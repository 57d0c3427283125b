"""Every section about what it asks: a sentence is evidence for a step only if it is
about the step's subject, not another thing with the same kind of fact.

"How long is a Martian year?" once quoted "One rotation takes 243 Earth days" from the notes on
Venus: the sentence matched its source word for word, and nothing asked whether it is about Mars.
Word overlap cannot tell that; names can. A subject here is a proper name: a capitalized word
inside a sentence ("of Venus", "on Mars"), or one opening it that the text also writes
capitalized inside one. Two spellings of one name meet ("Mars" and "Martian", "Venus" and
"Venusian"): they share all their letters but the shorter's last.

A sentence is off its subject when it names none of the names asked about, its source's title
names none either, and it (or its source's title) names a *peer*: a name some source read is
titled by (another planet with notes of its own). A sentence that names nothing, or only names no
source is about ("Earth days", "Rust's rules"), is not judged: the check keeps what it cannot tell.

Pure and deterministic (stdlib and workflows.text): the offline observer chooses evidence with it,
and the workflow counts a report's sections with it, inside the sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from workflows.text import STOPWORDS

_CAPITALIZED = re.compile(r"(?<![\w'’.-])([A-Z][a-z][\w’'-]*)")
#: What may come before a line's opening word: indentation, a heading, quote or list mark, an [n].
_LINE_START = re.compile(r"\s*(?:#{1,6}|[-*+>]|\d{1,3}[.)])?\s*(?:\[\d+\]\s*)?[\"“'(*_]*")
#: Words capitalized for their place, never names.
NOT_NAMES = frozenset(
    """how what why when where which who whom whose is are does do did can could should would will
    was were has have had may might must shall one two three four five six seven eight nine ten
    first second third last next each every some many most few all both either neither not no
    yes also then there here however although though because since while after before during
    unlike like in on at of for from with by to into about as and or but if so than that this
    these those it its their they we you our your my his her summary sources source overview
    background definition tell more""".split()
)

#: The section headings that hold no step's findings: the summary and the lists after the body.
NOT_STEPS = frozenset({"summary", "sources", "not found in the sources", "references"})


def _base(word: str) -> str:
    word = word.lower().replace("’", "'")
    return word[:-2] if word.endswith("'s") else word.rstrip("'")


def same_name(a: str, b: str) -> bool:
    """One name in two spellings: equal, or sharing all letters but the shorter's last (at least
    three): Mars~Martian, Venus~Venusian, Mercury~Mercurian; not Mars~Mons."""
    a, b = _base(a), _base(b)
    if a == b:
        return True
    shortest = min(len(a), len(b))
    shared = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), shortest)
    return shortest >= 4 and shared >= max(3, shortest - 1)


def _opens(text: str, start: int) -> bool:
    """The word at `start` opens a sentence, a line, a heading, a list item or a clause after a
    colon: capitalized for its place, not (necessarily) a name."""
    before = text[max(0, start - 60) : start]
    line = before.rsplit("\n", 1)[-1]
    if ("\n" in before or start <= 60) and _LINE_START.fullmatch(line):
        return True
    return line.rstrip(" \t\"“'(*_").endswith((".", "!", "?", ":", ";"))


def _inner_names(text: str) -> set[str]:
    """Capitalized words inside a sentence (not at its opening): names, whatever else they are."""
    return {
        _base(m.group(1))
        for m in _CAPITALIZED.finditer(text)
        if not _opens(text, m.start()) and _base(m.group(1)) not in NOT_NAMES
    }


def known_names(texts: Iterable[str]) -> frozenset[str]:
    """The names the texts write capitalized inside a sentence: what an opening word may be."""
    found: set[str] = set()
    for text in texts:
        found |= _inner_names(text)
    return frozenset(found)


def names(text: str, known: Iterable[str] = ()) -> list[str]:
    """The text's names in order (lower case, possessive dropped): capitalized words inside a
    sentence, and opening ones the `known` names confirm ("Venus rotates ...")."""
    confirmed = set(known) | _inner_names(text)
    out: list[str] = []
    for m in _CAPITALIZED.finditer(text):
        word = _base(m.group(1))
        if word in NOT_NAMES or word in STOPWORDS or word in out:
            continue
        if _opens(text, m.start()) and word not in confirmed:
            continue
        out.append(word)
    return out


def _meets(these: Iterable[str], wanted: Iterable[str]) -> bool:
    wanted = list(wanted)
    return any(same_name(n, w) for n in these for w in wanted)


@dataclass(frozen=True)
class Subject:
    """What a step or section asks about (`wanted`), and the names sources are about (`peers`)."""

    wanted: tuple[str, ...]
    peers: frozenset[str]
    known: frozenset[str]

    def other(self, sentence: str, source_titles: Iterable[str] = ()) -> str | None:
        """The peer the sentence is about instead of the subject, or None: on the subject, or
        nothing to tell by (no name asked about is one a source is about: "Arc and Mutex" in
        notes titled "Smart Pointers" are not told apart by names)."""
        if not _meets(self.peers, self.wanted):
            return None
        said = names(sentence, self.known | self.peers)
        titles = [n for t in source_titles for n in _title_names(t) if n in self.peers]
        if _meets(said, self.wanted) or _meets(titles, self.wanted):
            return None
        others = [n for n in [*said, *titles] if n in self.peers]
        return others[0].capitalize() if others else None


def _title_names(title: str) -> list[str]:
    """A title's capitalized words (each may name what its source is about)."""
    out = []
    for m in _CAPITALIZED.finditer(title):
        word = _base(m.group(1))
        if word not in NOT_NAMES and word not in STOPWORDS and word not in out:
            out.append(word)
    return out


def subject(asked: str, question: str, sources: Iterable[tuple[str, str]]) -> Subject:
    """The subject of a step titled `asked` (its own names; the question's when it names none),
    with the peers: the names sources are about, a title's capitalized word its own text writes
    capitalized too ("# Venus" over "Venus rotates very slowly"). `sources`: (title, text)."""
    sources = list(sources)
    known = known_names([*(text for _, text in sources), question, asked])
    return Subject(
        wanted=wanted_names(asked, question, known), peers=peers_of(sources, known), known=known
    )


def wanted_names(asked: str, question: str, known: frozenset[str]) -> tuple[str, ...]:
    return tuple(names(asked, known) or names(question, known))


def peers_of(sources: list[tuple[str, str]], known: frozenset[str]) -> frozenset[str]:
    return frozenset(
        word
        for title, text in sources
        for word in _title_names(title)
        if word in known or re.search(rf"(?<![\w'’.-]){re.escape(word.capitalize())}\b", text)
    )
