"""Snippets for search hits: the prose sentence of a document that best matches the query.

FTS5 finds the documents; this picks what a reader sees of each (`LocalCorpus.search`), and the
loose matching of query words (`Terms`) also ranks titles.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from workflows.models import SNIPPET_LIMIT
from workflows.text import (
    STOPWORDS,
    bm25_scores,
    content_terms,
    split_paragraphs,
    split_sentences,
    tokenize,
    trim,
)

#: At most this many distinct query terms go into one MATCH (a 5000-character query would
#: otherwise become a slow 700-way OR).
MAX_QUERY_TERMS = 32
#: Letters (any script) and whitespace: what `str.isalpha` or `str.isspace` accepts.
_WORDY = re.compile(r"[^\W\d_]|\s")


#: Words listed before a noun that says they are syntax: "the with statement", "for, while and
#: with statements", "the in operator", "for loops".
_NAMED = re.compile(
    r"\b((?:\w+\s*,\s*)*\w+(?:\s*,?\s+(?:and|or)\s+\w+)?)\s+"
    r"(statements?|keywords?|clauses?|loops?|operators?)\b",
    re.I,
)


def query_terms(query: str) -> list[str]:
    """The words of a query that are searched for: its content words, and each stop word it names
    as syntax as a phrase with that noun ("for statement"). In documentation about code, `for`,
    `with`, `in` or `is` are what a question is about when it says "the with statement"; dropped
    as stop words, "What do the for, while and with statements do?" searches for "statements"
    alone, and searched alone, "for" is in every document. The phrase is as rare as the page
    about it (FTS5 stems it: "for statements" finds 'The "for" statement')."""
    named = {
        word: found.group(2).lower()
        for found in _NAMED.finditer(query)
        for word in tokenize(found.group(1))
        if word in STOPWORDS and word not in ("and", "or", "the", "a", "an")
    }
    if not named:
        return content_terms(query)
    return [
        f"{t} {named[t]}" if t in named else t
        for t in tokenize(query)
        if len(t) > 1 and (t not in STOPWORDS or t in named)
    ]


class Terms:
    """A query's content words, matched loosely in titles and sentences: `borrowing` matches
    `borrow` and `borrowed`, `references` matches `reference`, and a dotted name such as
    `asyncio.gather` also matches its parts. Only for ranking and snippets; FTS5 does the search."""

    def __init__(self, words: list[str]) -> None:
        #: The words as typed: what goes into the FTS5 query.
        self.words = list(dict.fromkeys(words))[:MAX_QUERY_TERMS]
        #: The words and the parts of dotted names: what titles and sentences are matched against.
        self.parts = list(dict.fromkeys(_words(" ".join(self.words))))
        self._memo: dict[str, str | None] = {}
        #: Parts by their first four letters: a close variant shares them (`_close_variant`), so
        #: a token is compared with a handful of parts, not all of them (a search matches tens of
        #: thousands of tokens: this was most of its CPU).
        self._by_prefix: dict[str, list[str]] = {}
        for part in self.parts:
            self._by_prefix.setdefault(part[:4], []).append(part)
        self._exact = set(self.parts)

    def match(self, token: str) -> str | None:
        """The query word `token` stands for, if any (a shared stem, a short ending apart)."""
        try:
            return self._memo[token]
        except KeyError:
            pass
        if len(token) < 4:  # only an exact match (a variant needs a stem of four letters)
            found = token if token in self._exact else None
        else:
            found = next(
                (p for p in self._by_prefix.get(token[:4], ()) if _close_variant(token, p)), None
            )
        self._memo[token] = found
        return found

    def of(self, text: str) -> list[str]:
        """The words of `text`, each that matches a query word spelled as that word."""
        words, memo = _cached_words(text), self._memo
        for word in words:
            if word not in memo:
                self.match(word)
        return [memo[w] or w for w in words]

    def coverage(self, text: str) -> float:
        """The share of the query's words that `text` contains."""
        if not self.parts:
            return 0.0
        return len(set(self.parts).intersection(self.of(text))) / len(self.parts)


def _close_variant(a: str, b: str) -> bool:
    """Loose word variants for snippet ranking (`lifetime`~`lifetimes`, any suffix of up to three
    letters): looser on purpose than the offline engine's `_same_stem`, which decides what a step
    covered; a snippet only needs to show the query's words in context."""
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 4 and len(long) - len(short) <= 3 and long.startswith(short))


def _words(text: str) -> list[str]:
    return list(_cached_words(text))


@lru_cache(maxsize=8192)
def _cached_words(text: str) -> tuple[str, ...]:
    """Titles and sentences come back search after search: tokenized once per process."""
    return tuple(_words_of(text))


def _words_of(text: str) -> list[str]:
    """Word tokens; a dotted name also gives its parts (`asyncio.gather`: `asyncio`, `gather`)."""
    words = []
    for token in tokenize(text):
        words.append(token)
        if "." in token:
            words.extend(p for p in token.split(".") if p)
    return words


def _snippet_worthy(sentence: str) -> bool:
    """Sentences of words, not headings, code or tables: a snippet should read like text."""
    if len(sentence) < 25 or sentence.startswith(("```", "|", ">>>", "$ ")):
        return False
    if len(sentence) < 80 and not sentence.endswith((".", "!", "?", ":", ")", "…", '"', "”")):
        return False  # a heading or a label
    wordy = len(sentence) - len(_WORDY.sub("", sentence))
    return wordy >= 0.75 * len(sentence)


def _prose_paragraphs(body: str) -> Iterator[str]:
    """The paragraphs of `body` outside ``` code fences (a fence may span paragraphs)."""
    in_code = False
    for paragraph in split_paragraphs(body):
        segments = paragraph.split("```")
        for k, segment in enumerate(segments):
            if not in_code and segment.strip():
                yield segment.strip()
            if k < len(segments) - 1:
                in_code = not in_code


def snippet_of(body: str, terms: Terms) -> str:
    """The prose sentence of `body` that matches most query terms (BM25 breaks ties), continued
    with the sentences after it while they fit: a readable excerpt, not FTS5's marked-up one."""
    candidates: list[tuple[list[str], int]] = []
    for source in (_prose_paragraphs(body), split_paragraphs(body)):
        paragraphs = [split_sentences(p) for p in source]
        every = [(group, j) for group in paragraphs for j in range(len(group))]
        candidates = [(group, j) for group, j in every if _snippet_worthy(group[j])] or every
        if candidates:
            break
    if not candidates:
        return ""
    words = [terms.of(group[j]) for group, j in candidates]
    scores = bm25_scores(terms.parts, words)
    best = min(
        range(len(candidates)),
        key=lambda k: (-len(set(terms.parts).intersection(words[k])), -scores[k], k),
    )
    group, j = candidates[best]
    snippet = group[j]
    for following in group[j + 1 :]:
        if len(snippet) + 1 + len(following) > SNIPPET_LIMIT:
            break
        snippet += " " + following
    return trim(snippet, SNIPPET_LIMIT)
