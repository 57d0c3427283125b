"""What a claim and its evidence are made of, as the deterministic verifier compares them: the
units a claim aligns to (a sentence, or a line of code with its comment), content words, numbers
and code names.

Why numbers and code names apart from words: they are what an unfaithful sentence swaps while
keeping every other word ("1" for "0", `__enter__()` for `__exit__()`), so they must match
exactly, where words may be inflected. A number keeps its sign ("-1 or True" is not "1 or True";
the dash of a range, "10-20", or of a sum, "2**19937-1", is no sign) and its ordinal ("5th
edition" is 5), and is read with the words around it (`number_contexts`), so a reason can name the
number the passage gives for the same thing. Proper names ("Asaph Hall", "Gale crater") count like
code names: a swapped discoverer or place is a swapped name. Pure (stdlib,
workflows.text): sandbox-safe.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from workflows.text import STOPWORDS, split_sentences, stem, subjects, tokenize

#: A number: a minus sign only where it cannot be a range's dash or a subtraction (not after a
#: word, a digit or a closing bracket), an ordinal's suffix read as the number.
_NUMBER = re.compile(
    r"(?:(?<![\w.,)\]*+/^-])[-\u2212](?=\d))?(?<![\w.,])\d+(?:[.,]\d+)*(?:st|nd|rd|th)?%?(?![\w%])"
)
_ORDINAL = re.compile(r"(?<=\d)(?:st|nd|rd|th)$")
NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
    if w != "one"  # "when one is available": a pronoun more often than a count
}
_NUMBER_WORD = re.compile(r"\b(?:" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
#: Code names: dotted or underscored names, calls, CamelCase with an inner capital, CONSTANTS.
_CODE = re.compile(
    r"`([^`]+)`"
    r"|\b[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:\(\))?"
    r"|\b_*[A-Za-z]\w*_\w*\b(?:\(\))?"
    r"|\b[A-Za-z_]\w*\(\)"
    r"|\b[a-z]*[A-Z][a-z0-9]+[A-Z]\w*"
    r"|\b[A-Z][a-z]+[A-Z]\w*"
    r"|\b[A-Z]{2,}[A-Z0-9_]*\b"
)
#: Words that negate what follows them.


@dataclass(frozen=True)
class Unit:
    """One sentence of the evidence (or one line of code with its comment), as a claim aligns to."""

    source_index: int  # which evidence text it came from
    text: str


# --- units ---------------------------------------------------------------------------------------


def units(texts: list[str]) -> list[Unit]:
    """The evidence cut where a claim may align: prose into sentences; code and aligned lists line
    by line, a comment continued on the next line joined to its line."""
    found: list[Unit] = []
    for index, text in enumerate(texts):
        for block in re.split(r"\n\s*\n", text):
            if not block.strip():
                continue
            lines = block.split("\n")
            if len(lines) > 1 and _is_code_or_list(lines):
                for line in _joined_comments(lines):
                    found += [Unit(index, s) for s in split_sentences(line)] or []
            else:
                found += [Unit(index, s) for s in split_sentences(" ".join(block.split()))]
    return found


def _is_code_or_list(lines: list[str]) -> bool:
    return any(
        re.match(r"\s{2,}|\s*[-*+#]|\s*\w+\s*=|.*\s{2,}#", line) for line in lines if line.strip()
    )


def _joined_comments(lines: list[str]) -> list[str]:
    joined: list[str] = []
    for line in lines:
        if joined and re.match(r"\s+#", line) and "#" in joined[-1]:
            joined[-1] += " " + line.strip().lstrip("#").strip()
        elif line.strip():
            joined.append(" ".join(line.split()))
    return joined


# --- tokens ----------------------------------------------------------------------------------------


def terms(text: str) -> set[str]:
    """Stems of the content words (hyphenated words by their parts), numbers left to `numbers`."""
    words = set()
    for token in tokenize(_without_code_ticks(text)):
        for part in token.split("-") if "-" in token else [token]:
            part = part.strip(".")
            if len(part) > 1 and part not in STOPWORDS and not re.fullmatch(r"[\d.,%]+", part):
                if part not in NUMBER_WORDS:
                    words.add(stem(part))
    return words


def numbers(text: str) -> dict[str, str]:
    """The numbers of a text by value ("1,000" and "1000", "two" and "2", "5th" and "5" are one;
    "-1" and "1" are two), as written."""
    found: dict[str, str] = {}
    for key, shown, _, _ in _number_matches(text):
        found.setdefault(key, shown)
    return found


def _number_matches(text: str) -> list[tuple[str, str, int, int]]:
    """(value, as written, start, end) of every number of a text, digits first, then words."""
    found = []
    for match in _NUMBER.finditer(text):
        shown = match.group(0)
        key = _ORDINAL.sub("", shown.rstrip("%").replace(",", "")).replace("\u2212", "-")
        found.append((key, shown.replace("\u2212", "-"), match.start(), match.end()))
    for match in _NUMBER_WORD.finditer(text):
        word = match.group(0).lower()
        found.append((NUMBER_WORDS[word], word, match.start(), match.end()))
    return found


#: Words that end the phrase a number belongs to.
_CLAUSE_END = re.compile(r"[,;:()]|\s[-\u2013\u2014]\s|\b(?:and|or|but|which|while|whereas)\b")
#: What joins the two ends of a range: "10 to 20", "10-20", "10–20", "between 10 and 20".
_RANGE = re.compile(r"\s*(?:to|through|[-\u2013\u2014]|and)\s*")
#: How many content words on each side of a number say what it counts.
CONTEXT_WORDS = 2


def number_contexts(text: str) -> list[tuple[str, str, set[str]]]:
    """Each number of a text with what it counts: (value, as written, the stems of up to
    CONTEXT_WORDS content words on each side within its phrase). "three small moons" and "two
    small moons" are numbers of the same thing; "discovered in 1877" is not."""
    found = []
    matches = sorted(_number_matches(text), key=lambda m: m[2])
    spans = [(m[2], m[3]) for m in matches]
    for i, (key, shown, start, end) in enumerate(matches):
        first, last = start, end  # a range's ends are read, and shown, as the range
        if i + 1 < len(spans) and _RANGE.fullmatch(text[end : spans[i + 1][0]]):
            last = spans[i + 1][1]
        if i and _RANGE.fullmatch(text[spans[i - 1][1] : start]):
            first = spans[i - 1][0]
        if (first, last) != (start, end) and "and" not in text[first:last]:
            shown = " ".join(text[first:last].split())
        before = _CLAUSE_END.split(text[max(0, first - 80) : first])[-1]
        after = _CLAUSE_END.split(text[last : last + 80])[0]
        near = _ordered_terms(before)[-CONTEXT_WORDS:] + _ordered_terms(after)[:CONTEXT_WORDS]
        found.append((key, shown, set(near)))
    return found


def _ordered_terms(text: str) -> list[str]:
    return [
        stem(t)
        for t in tokenize(_without_code_ticks(text))
        if len(t) > 1
        and t not in STOPWORDS
        and t not in NUMBER_WORDS
        and re.search(r"[a-z]{2}", t)
        and not re.search(r"\d", t)
    ]


def code_names(text: str) -> dict[str, str]:
    """The code names of a text, by their comparable form (no call parentheses or ticks, lower
    case), as written."""
    found: dict[str, str] = {}
    for match in _CODE.finditer(text):
        shown = match.group(1) or match.group(0)
        for piece in re.findall(r"[A-Za-z_][\w.]*", shown):
            key = name_key(piece)
            if key and not (  # a plain word, "None" or "JSON": a word; "ValueError": a name
                piece.isalpha() and not re.search(r"[a-z][A-Z]", piece)
            ):
                found.setdefault(key, piece)
    return found


def proper_names(text: str, known: Iterable[str] = ()) -> dict[str, str]:
    """The proper names of a text that are not code names (workflows/text/subjects.py: a word
    capitalized inside a sentence, or opening it when `known` confirms it), by their lower-case
    form, as written; a run of them ("Asaph Hall") shown whole."""
    code = " ".join(code_names(text))
    found: dict[str, str] = {}
    for name in subjects.names(text, known):
        if has_name(name, code):
            continue
        found[name] = _written(name, text)
    return found


def _written(name: str, text: str) -> str:
    """The name as the text writes it, with the capitalized words right around it."""
    at = re.search(r"(?<![\w'’])" + re.escape(name) + r"(?![\w'’])", text, re.IGNORECASE)
    if at is None:
        return name.capitalize()
    before = re.search(r"(?:\b[A-Z][\w’'-]*\s+)*$", text[: at.start()])
    after = re.match(r"(?:\s+[A-Z][\w’'-]*\b)*", text[at.end() :])
    start = at.start() - (len(before.group(0)) if before else 0)
    end = at.end() + (len(after.group(0)) if after else 0)
    words = [
        w
        for w in text[start:end].split()
        if w.lower() not in subjects.NOT_NAMES and w.lower() not in STOPWORDS
    ]
    return " ".join(words) or text[at.start() : at.end()]


#: What turns a name into its adjective ("Mars" / "Martian", "Venus" / "Venusian").
_ADJECTIVE = re.compile(r"(?:ian|ean|an|ese|ic|ish|ine)$")


def holds_name(name: str, haystack: str) -> bool:
    """A proper name stands in a text as itself or as its adjective ("Mars" in "the Martian
    year"; not "Gale" for "Galileo")."""
    name = name.lower()
    for word in set(tokenize(haystack)):
        if word == name or word.removesuffix("'s") == name:
            return True
        longer = max(word, name, key=len)
        if subjects.same_name(name, word) and _ADJECTIVE.search(longer):
            return True
    return False


def name_key(name: str) -> str:
    """A code name as compared: lower case, no call parentheses, no dots around it (underscores
    kept: `__hash__` is not `hash`)."""
    return name.strip(".").lower().removesuffix("()").strip(".")


def _without_code_ticks(text: str) -> str:
    return text.replace("`", " ")


def has_name(key: str, haystack: str) -> bool:
    """A code name stands in a text when its full form or its last dotted part does, as a word."""
    text = haystack.lower()
    for form in {key, key.rsplit(".", 1)[-1]}:
        if re.search(r"(?<![\w])" + re.escape(form) + r"(?![\w])", text):
            return True
    return False
