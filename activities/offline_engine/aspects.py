"""What a question asks about: its aspects, as several clauses, a comparison, an enumeration or
one question (`decompose`).

The planner takes one step per aspect, the coordinator counts them, the report's sections and the
OpenAI engine's check on a plan follow them: one reading, kept apart from the reading of the
question itself (questions.py: what was asked and clarified, its subject, its key terms), which
it builds on. Surface rules over words, tried in a stated order; no parser, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from activities.offline_engine.kinds import kind_list
from activities.offline_engine.questions import subject_of
from activities.offline_engine.words import (
    _NEW_CLAUSE,
    _QUESTION_WORDS,
    VAGUE,
    VERBS,
    _clean_clause,
    _specific_terms,
    _words,
)
from workflows.text import STOPWORDS, content_terms, unique


@dataclass(frozen=True)
class Decomposition:
    """The aspects a question asks about, found by its surface form."""

    #: "comparison", "clauses", "enumeration" or "single".
    kind: str
    items: list[str]
    #: A shared qualifier such as "in Python" (preposition included), or "".
    scope: str = ""
    #: What the aspects are together about ("list and tuple in Python"), or "" for one aspect.
    subject: str = ""


def decompose(question: str) -> Decomposition:
    """Split a question into aspects: several clauses, a comparison, an enumeration, or one.

    Surface rules, tried in order: clauses joined by "?", ";" or "and"/"," + a question word
    (each with two content words at least); "X vs Y", "difference between X and Y", "compare X
    and/with Y", "X compares to Y"; names of one kind ("the for and while statements"); "A, B and
    C" where each item is at most four content words; otherwise the question is one aspect.
    """
    clauses = split_clauses(question)
    if len(clauses) >= 2:
        first = _comparison(clauses[0])
        subject = first.subject if first else subject_of(clauses[0])
        items = [_resolve_pronouns(c, subject) if i else c for i, c in enumerate(clauses)]
        return Decomposition("clauses", items, subject=subject)
    text = _clean_clause(question)
    single = Decomposition("single", [text] if text else [])
    return _comparison(text) or _named_kind(text) or _enumeration(text) or single


def _named_kind(text: str) -> Decomposition | None:
    """ "Python's del, return and pass statements": one aspect per name (kinds.py says why)."""
    if not (found := kind_list(text)):
        return None
    kind = "comparison" if found.compared else "enumeration"
    subject = _join(found.items) + (f" {found.scope}" if found.scope else "")
    return Decomposition(kind, found.items, found.scope, subject=subject)


def split_clauses(question: str) -> list[str]:
    """The question's clauses; a fragment with fewer than two content words ("In Rust,") joins
    the clause after it."""
    parts = re.split(r"\?+|;|(?<=[a-z0-9)])\.\s+(?=[A-Z])", question)
    pieces: list[str] = []
    for part in parts:
        pieces.extend(re.split(_NEW_CLAUSE, part, flags=re.I))
    clauses: list[str] = []
    carry = ""
    for piece in (_clean_clause(p) for p in pieces):
        if not piece:
            continue
        piece = f"{carry}, {piece}" if carry else piece
        carry = ""
        opens = re.match(rf"{_QUESTION_WORDS}\b", piece, re.I) and len(piece.split()) >= 3
        if len(content_terms(piece)) < 2 and not opens:
            carry = piece
            continue
        clauses.append(piece)
    if carry:
        if clauses:
            clauses[-1] = f"{clauses[-1]}, {carry}"
        else:
            clauses.append(carry)
    return clauses


def _resolve_pronouns(clause: str, subject: str) -> str:
    """ "... and what are its limitations" → "what are Rust's borrow checker's limitations"."""
    if not subject:
        return clause
    owner = subject + ("'" if subject.endswith("s") else "'s")
    clause = re.sub(r"\b(its|their)\b", owner, clause, flags=re.I)
    clause = re.sub(r"\b(each|either|both)\b(?!\s+of\b)", rf"\1 of {subject}", clause, flags=re.I)
    return re.sub(r"\b(it|they|them)\b", subject, clause, flags=re.I)


_VS = re.compile(r"\s+(?:vs\.?|versus|compared\s+(?:to|with))\s+", re.I)
_BETWEEN = re.compile(
    r"\b(?:differences?|distinction|comparison)\s+between\s+(.+?)\s+and\s+(.+)$", re.I
)
_COMPARE = re.compile(
    r"\bcompare\s+(?!(?:to|with|against)\b)(.+?)\s+(?:and|with|to|vs\.?|versus)\s+(.+)$", re.I
)
_COMPARES_TO = re.compile(
    r"^(.+?)\s+(?:compares?|differs?)\s+(?:to|with|from|against)\s+(.+)$", re.I
)
_SCOPE = re.compile(r"^(.*?\S)\s+((?:in|for|with|on|under|when|within|using)\s+.+)$", re.I)


def _comparison(text: str) -> Decomposition | None:
    match = _BETWEEN.search(text) or _COMPARES_TO.search(text) or _COMPARE.search(text)
    if match:
        raw = [*match.group(1).split(","), match.group(2)]
    elif re.search(
        r"\b(?:better|worse|prefer|choose|pick|which|should|use)\b", text, re.I
    ) and re.search(r"\sor\s", text):
        # A choice: "Which is better, Rust or Go?", "Which is better for web servers: Rust or Go?"
        frame, _, options = text.rpartition(":")
        choice = _enumeration(options.strip())
        if choice is None or len(choice.items) < 2:
            return None
        framed = re.search(r"\b((?:for|in|with|on|when)\s+.+)$", frame, re.I)
        scope = choice.scope or (framed.group(1) if framed else "")
        return Decomposition(
            "comparison",
            choice.items,
            scope,
            subject=_join(choice.items) + (f" {scope}" if scope else ""),
        )
    elif _VS.search(text):
        raw = _VS.split(text)
        first = _words(raw[0])
        # "asyncio gather vs wait": the shared head word carries over to the short item.
        raw = [raw[0]] + [
            " ".join(first[:-1] + [r])
            if len(first) > 1 and len(_words(r)) == 1 and not _SCOPE.match(r)
            else r
            for r in raw[1:]
        ]
    else:
        return None
    scope = ""
    last = _SCOPE.match(raw[-1])
    if last and content_terms(last.group(1)):
        raw[-1], scope = last.group(1), last.group(2)
    items = [i for i in (_strip_function_words(r) for r in raw) if i]
    if len(items) < 2:
        return None
    items = unique(items)
    return Decomposition(
        "comparison", items, scope, subject=_join(items) + (f" {scope}" if scope else "")
    )


def _strip_function_words(text: str) -> str:
    """An item without leading question words, articles and verbs, or trailing ones."""
    words = _words(_clean_clause(text))
    weak = STOPWORDS | VERBS | VAGUE
    while words and words[0].lower() in weak:
        words = words[1:]
    while words and words[-1].lower() in weak:
        words = words[:-1]
    return " ".join(words)


def _enumeration(text: str) -> Decomposition | None:
    """ "lists, tuples and sets in Python": items of at most four content words, a shared scope.

    Not an enumeration when a later piece starts a question ("..., how does ...") or the first
    starts with a preposition ("In Rust, ...").
    """
    pieces = [
        p for p in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+", text) if p.strip()
    ]
    while len(pieces) > 2 and not _specific_terms(pieces[0]):
        pieces = pieces[1:]  # a question frame: "Which is better, Rust or Go"
    if len(pieces) < 2:
        return None
    if re.match(r"(?:in|for|with|on|under|within|using|when)\b", pieces[0], re.I):
        return None
    if any(re.match(rf"{_QUESTION_WORDS}\b", p.strip(), re.I) for p in pieces[1:]):
        return None
    scope = ""
    last = _SCOPE.match(pieces[-1])
    if last and content_terms(last.group(1)):
        pieces[-1], scope = last.group(1), last.group(2)
    items = [_strip_function_words(p) for p in pieces]
    if any(not i or len(content_terms(i)) > 4 for i in items):
        return None
    first = _SCOPE.match(items[0])
    # "error handling in Rust and Go": the coordination is inside the scope (names are capitalised).
    if not scope and first and all(len(i.split()) == 1 and i[:1].isupper() for i in items[1:]):
        head, (prep, name) = first.group(1), first.group(2).split(None, 1)
        names = unique([name, *items[1:]])
        return Decomposition(
            "enumeration",
            [f"{head} {prep} {n}" for n in names],
            subject=f"{head} {prep} {_join(names)}",
        )
    items = unique(items)
    return Decomposition(
        "enumeration", items, scope, subject=_join(items) + (f" {scope}" if scope else "")
    )


def _join(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
