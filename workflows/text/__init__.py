"""The words: pure text tools over plain strings, the lowest floor of workflows/ (it imports
nothing of workflows/, so the shapes above can validate with it and both sides can share it).

Here, the small, dependency-free tools the corpus, the page reader and the offline engine share:
classic information retrieval (word tokens, a stop-word list, sentence and paragraph splitting,
and a BM25-style score), enough to pick the passages of a document that matter to a step, so only
those (trimmed) enter workflow history. Beside it: claim_parts, contradiction, subjects and
alignment (the deterministic verifier's reading of a sentence), clarified (the question as meant),
language and language_codes, redaction (secrets).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

#: A word in any script (`\w` is Unicode-aware): "Speicherverwaltung", "bộ", "память" are words.
WORD = re.compile(r"\w[\w'+#.-]*[\w+#]|\w")
#: Han, kana and Hangul are written without spaces: a run of them is indexed as overlapping
#: two-character pieces (the usual bigram approach of search engines for CJK text).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
#: A sentence ends at . ! ? before a capital, digit, quote or bracket (so "e.g. foo" does not
#: end one), or at the CJK full stops, which need no space after them.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^\W_a-zß-ÿ]|[\"'(\[`])|(?<=[。！？])\s*")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can cannot could couldn't did didn't do does doesn't doing
    don't down during each either else etc even ever every few for from further get gets got had
    hadn't has hasn't have haven't having he her here hers herself him himself his how however i if
    in into is isn't it it's its itself just let's like many may me might more most much must my
    myself neither no nor not now of off often on once one only or other ought our ours ourselves
    out over own per please rather same say says shall she should shouldn't since so some such than
    that that's the their theirs them themselves then there there's these they this those though
    through thus to too under until up upon us use used uses using very via was wasn't we were
    weren't what what's when where which while who whom whose why will with within without won't
    would wouldn't yet you your yours yourself yourselves tell explain describe give show know want
    need find out""".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens in any script; keeps identifiers such as `asyncio.gather`, `c++`
    or `x86_64`; CJK runs become overlapping character pairs."""
    # A WORD match neither starts nor ends with a dot, so `.strip(".")` below only matters for
    # CJK pieces; ASCII lower-cases letter for letter, so it may be lowered before matching.
    if text.isascii():
        return WORD.findall(text.lower())
    if not _CJK.search(text):  # no CJK run to split: one pass in C, then each word lowered
        return [word.lower() for word in WORD.findall(text)]
    tokens: list[str] = []
    for match in WORD.finditer(text):
        word = match.group(0).lower().strip(".")
        if not _CJK.search(word):
            tokens.append(word)
            continue
        for piece in re.split(f"({_CJK.pattern})", word):
            if not piece:
                continue
            if _CJK.fullmatch(piece):
                tokens += [piece[i : i + 2] for i in range(max(1, len(piece) - 1))]
            elif piece.strip("."):
                tokens.append(piece.strip("."))
    return tokens


def content_terms(text: str) -> list[str]:
    """Tokens that carry meaning: no stop words, no single characters."""
    return [t for t in tokenize(text) if len(t) > 1 and t not in STOPWORDS]


def split_sentences(text: str) -> list[str]:
    sentences: list[str] = []
    for paragraph in split_paragraphs(text):
        sentences.extend(s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip())
    return sentences


def split_paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def bm25_scores(
    query_terms: Sequence[str], documents: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75
) -> list[float]:
    """BM25 of each tokenized document against the query terms, idf taken over `documents`."""
    if not documents:
        return []
    counts = [Counter(doc) for doc in documents]
    return _bm25(set(query_terms), [len(doc) for doc in documents], counts, k1, b)


def _bm25(
    unique_terms: set[str],
    lengths: list[int],
    counts: Sequence[Counter[str] | None],
    k1: float = 1.2,
    b: float = 0.75,
) -> list[float]:
    """BM25 from each document's length and term counts (None: none of the query's terms)."""
    n = len(lengths)
    avg_len = sum(lengths) / n or 1.0
    df: Counter[str] = Counter()
    for tf in counts:
        if tf:
            df.update(tf.keys())
    scores = []
    for length, tf in zip(lengths, counts, strict=False):
        score = 0.0
        for term in unique_terms if tf else ():
            if tf is None or term not in tf:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * length / avg_len))
        scores.append(score)
    return scores


def _paragraph_scores(terms: list[str], paragraphs: list[str]) -> list[float]:
    """`bm25_scores(terms, [tokenize(p) for p in paragraphs])`, for less: a paragraph that holds
    none of the terms, even inside a word, is only counted (most of a long page, which a read
    ranks paragraph by paragraph). The same numbers but in theory for a term with a Greek final
    sigma, which lower-casing in context may spell otherwise; passages only, nothing replays it."""
    if not paragraphs:
        return []
    unique_terms = set(terms)
    lengths: list[int] = []
    counts: list[Counter[str] | None] = []
    for paragraph in paragraphs:
        lowered = paragraph.lower()
        if not any(term in lowered for term in unique_terms) and not _CJK.search(paragraph):
            lengths.append(
                len(WORD.findall(paragraph))
            )  # as many as tokenize() gives, no CJK pairs
            counts.append(None)
            continue
        tokens = WORD.findall(lowered) if paragraph.isascii() else tokenize(paragraph)
        lengths.append(len(tokens))
        counts.append(Counter(tokens))
    return _bm25(unique_terms, lengths, counts)


def select_passages(text: str, focus: str, max_chars: int) -> str:
    """The paragraphs of `text` that best match `focus`, in document order, within `max_chars`.

    Keeps the opening paragraph when it fits (it usually says what the document is about).
    """
    paragraphs = split_paragraphs(text)
    if sum(len(p) + 2 for p in paragraphs) <= max_chars:
        return "\n\n".join(paragraphs)
    scores = _paragraph_scores(content_terms(focus), paragraphs)
    ranked = sorted(range(len(paragraphs)), key=lambda i: (-scores[i], i))
    if paragraphs and 0 not in ranked[:3]:
        ranked = [0, *[i for i in ranked if i != 0]]
    chosen: list[int] = []
    used = 0
    for i in ranked:
        paragraph = paragraphs[i]
        if used + len(paragraph) + 2 > max_chars:
            if not chosen:
                chosen.append(i)
                paragraphs[i] = trim(paragraph, max_chars)
                break
            continue
        chosen.append(i)
        used += len(paragraph) + 2
    return "\n\n".join(paragraphs[i] for i in sorted(chosen))


def trim(text: str, max_chars: int) -> str:
    """Cut at a word boundary and mark the cut."""
    if len(text) <= max_chars:
        return text
    cut = text[: max(0, max_chars - 1)].rsplit(" ", 1)[0]
    return cut + "…"


def unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.lower()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light suffix stripping, enough for inflections to meet: threads~thread,
    scheduling~scheduled~schedules~schedule, libraries~library, stopped~stop (not speed~spe)."""
    word = word[:-2] if word.endswith(("'s", "’s")) else word
    if len(word) <= 3 or any(c.isdigit() for c in word):
        return word
    for suffix, replacement, keep in (
        ("ies", "y", ()),
        ("ied", "y", ()),
        ("ing", "", ()),
        ("ed", "", ("eed",)),
        ("s", "", ("ss", "us", "is")),
    ):
        stem = word[: -len(suffix)] + replacement
        if word.endswith(suffix) and not word.endswith(keep) and len(stem) >= 3:
            if (
                suffix in ("ing", "ed")
                and len(stem) > 3
                and stem[-1] == stem[-2]
                and stem[-1] not in "lsz"
            ):
                stem = stem[:-1]  # running~run, stopped~stop, but called~call
            word = stem
            break
    return word[:-1] if len(word) >= 4 and word.endswith("e") else word


#: C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embeddings, overrides
#: and isolates (U+202A-U+202E, U+2066-U+2069) that make a line show in another order than stored.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def without_controls(text: str) -> str:
    """`text` without control characters (but newline and tab; a carriage return becomes a newline)
    or bidi overrides: what a source or a person wrote cannot drive a terminal or reorder a line.
    An escape sequence loses its ESC and the rest stays as inert text; where text is extracted,
    `activities.web.extraction.strip_controls` removes whole sequences first."""
    return _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def has_lone_surrogate(text: str) -> bool:
    """A half of a UTF-16 pair on its own: no UTF-8 payload, file or terminal can carry it on."""
    return any("\ud800" <= char <= "\udfff" for char in text)


def duration(seconds: float) -> str:
    """A wait or a budget as a person reads it in a note: "1 h", "30 min", "90 s"."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{int(seconds // 3600)} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{seconds:g} s"
