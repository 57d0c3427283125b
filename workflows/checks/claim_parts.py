"""What a claim and its evidence are made of, as the deterministic verifier compares them: the
units a claim aligns to (a sentence, or a line of code with its comment), content words, numbers
and code names.

Why numbers and code names apart from words: they are what an unfaithful sentence swaps while
keeping every other word ("1" for "0", `__enter__()` for `__exit__()`), so they must match
exactly, where words may be inflected. Pure (stdlib, workflows.text): sandbox-safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workflows.text import STOPWORDS, split_sentences, stem, tokenize

_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*%?(?![\w%])")
NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
    if w != "one"  # "when one is available": a pronoun more often than a count
}
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
    """The numbers of a text by value ("1,000" and "1000", "two" and "2" are one), as written."""
    found: dict[str, str] = {}
    for match in _NUMBER.finditer(text):
        found.setdefault(match.group(0).rstrip("%").replace(",", ""), match.group(0))
    for token in tokenize(text):
        if token in NUMBER_WORDS:
            found.setdefault(NUMBER_WORDS[token], token)
    return found


def code_names(text: str) -> dict[str, str]:
    """The code names of a text, by their comparable form (no call parentheses or ticks, lower
    case), as written."""
    found: dict[str, str] = {}
    for match in _CODE.finditer(text):
        shown = match.group(1) or match.group(0)
        for piece in re.findall(r"[A-Za-z_][\w.]*", shown):
            key = name_key(piece)
            if key and not (
                key.isalpha() and key.islower() and "." not in piece and "_" not in piece
            ):
                found.setdefault(key, piece)
    return found


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
