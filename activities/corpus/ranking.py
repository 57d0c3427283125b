"""How the local corpus ranks documents for a query: classic retrieval, stated step by step.

1. **Sections, not files** (documents.py says why): FTS5's BM25 ranks sections, with the
   document's title and the section's heading path weighed above its body (`FIELD_WEIGHTS`), so a
   section headed "Running Tests in Parallel" outranks a paragraph that mentions running once.
2. **Pseudo-relevance feedback** (RM3-style): the best sections of the first ranking are taken as
   relevant, and the words they use most, weighed by how rare they are in the corpus, widen the
   query with a smaller weight. The chapter that explains an idea in other words than the
   question's ("take part of a word" → the slice chapter, via "slice" in the strings chapter that
   matched) is found this way; the original words keep most of the weight, so the topic holds.
3. **Document aggregation**: a document scores by its best section plus a share of its next
   best ones: one strong section makes a document relevant, and a document with several good
   sections beats one with a single lucky paragraph. (Mixing in the whole document's own BM25
   was measured and left out: it favours chapters that mention a word everywhere, and lowered
   every dev-set figure below.)
4. **Title coverage**: a document whose title names most of the query's words is lifted (BM25
   gives a word found in most documents almost no weight, so in a book where "references" is
   everywhere the chapter called "References and Borrowing" would not otherwise stand out).

No model and nothing downloaded: every figure is a constant here, set on the Rust book dev set
(`make bench`, bench/retrieval.py) with round values, and each has a reason that holds
for any corpus. Ranking the dev set's 12 questions as queries (required files; helpful files):

    whole documents, title lift (before)       R@5 22/28  R@10 25/28  MRR 0.545; R@10 10/26
    sections, field weights, aggregation       R@5 26/28  R@10 27/28  MRR 0.645; R@10 17/26
    + pseudo-relevance feedback (this)         R@5 26/28  R@10 27/28  MRR 0.647; R@10 18/26

Through the whole offline research (`make bench`) sections alone already reach 12/12 questions
citing two required files; feedback mostly finds more of the helpful files. A learned re-ranker was considered and left out: none ships its weights inside a
package on PyPI (they download at first use), which neither `make demo` offline nor a worker
without internet allows.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass

from activities.corpus.snippets import Terms
from workflows.text import STOPWORDS, content_terms, stem

#: BM25 weights of the title, heading and body columns of a section.
FIELD_WEIGHTS = (3.0, 2.0, 1.0)
#: Sections the first ranking keeps (the candidates of feedback and aggregation).
CANDIDATE_SECTIONS = 300
#: Pseudo-relevance feedback: how many top sections are read, how many words are added, and the
#: weight of the added words' ranking against the question's own (both scaled to their best).
FEEDBACK_SECTIONS = 5
EXPANSION_TERMS = 8
EXPANSION_WEIGHT = 0.4
#: A document's score: its best section plus this share of each of its next NEXT_SECTIONS best.
NEXT_SECTIONS_SHARE = 0.3
NEXT_SECTIONS = 2
#: Hits per source file: the pages of one PDF should not crowd out every other document.
MAX_HITS_PER_SOURCE = 2
#: Documents lifted by title coverage at a time, best first (`Ranker._documents`).
LIFT_BATCH = 16
_CODE_TOKEN = re.compile(r"[^a-z-]")


@dataclass(frozen=True)
class RankedDocument:
    doc_id: int
    url: str
    title: str
    #: The section that ranked the document (its snippet comes from there).
    best_section: int
    score: float


class Memo:
    """What ranking reads again and again while the index does not change: how many sections use
    a word, the content words of a section, the number of sections. Under load most searches of a
    worker ask the same common words and read the same well-ranked sections; this saves the
    queries and the tokenizing. The index's owner clears it whenever the indexed files' stamps
    differ from the last check (its own writes, or another process's)."""

    #: Entries kept before the memo starts over (a few MB at most).
    LIMIT = 50_000

    def __init__(self) -> None:
        self.df: dict[str, int] = {}
        self.section_words: dict[int, list[str]] = {}
        self.section_doc: dict[int, int] = {}
        self.total: int | None = None

    def clear(self) -> None:
        self.df, self.section_words, self.section_doc, self.total = {}, {}, {}, None

    def full(self) -> bool:
        return len(self.df) + len(self.section_words) + len(self.section_doc) > self.LIMIT


class Ranker:
    """One query's ranking over an open index connection (inside the caller's read transaction)."""

    def __init__(self, con: sqlite3.Connection, terms: Terms, memo: Memo | None = None) -> None:
        self.con = con
        self.terms = terms
        self.memo = memo or Memo()
        #: How rare each of the query's words is (`_coverage`), once per query.
        self._rarity: dict[str, float] | None = None
        if self.memo.full():
            self.memo.clear()

    def rank(self, limit: int) -> list[RankedDocument]:
        first = self._sections(self.terms.words)
        if not first:
            return []
        expansion = self._expansion(first)
        scores = _scaled(first)
        if expansion:
            for section, score in _scaled(self._sections(expansion)).items():
                scores[section] = scores.get(section, 0.0) + EXPANSION_WEIGHT * score
        return self._documents(scores, limit)

    # --- the steps ------------------------------------------------------------------------------

    def _sections(self, words: list[str]) -> dict[int, float]:
        """BM25 of the sections matching any of `words` (each an FTS5 string, so nothing typed is
        read as FTS syntax: AND, NEAR(, *, -, : and quotes are all just text)."""
        match = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
        rows = self.con.execute(
            "SELECT rowid, -bm25(sections_fts, ?, ?, ?) FROM sections_fts WHERE sections_fts MATCH ? "
            "ORDER BY bm25(sections_fts, ?, ?, ?), rowid LIMIT ?",
            (*FIELD_WEIGHTS, match, *FIELD_WEIGHTS, CANDIDATE_SECTIONS),
        ).fetchall()
        return {rowid: score for rowid, score in rows if score > 0}

    def _expansion(self, first: dict[int, float]) -> list[str]:
        """The words the best sections use most (by share of their text, the section's rank
        weighing in), times their rarity in the corpus; none of the query's own words."""
        top = sorted(first, key=lambda s: (-first[s], s))[:FEEDBACK_SECTIONS]
        best = first[top[0]]
        asked = {stem(p) for p in self.terms.parts}
        # Weights are fractions: typeshed's Counter counts ints.
        weights: defaultdict[str, float] = defaultdict(float)
        spelling: dict[str, Counter[str]] = defaultdict(Counter)
        for section in top:
            words = self._section_words(section)
            if not words:
                continue
            counts = Counter(stem(w) for w in words)
            for w in words:
                spelling[stem(w)][w] += 1
            for key, n in counts.items():
                if key not in asked:
                    weights[key] += (n / len(words)) * (first[section] / best)
        if not weights:
            return []
        total = self._total()
        scored = []
        heaviest = sorted(weights.items(), key=lambda kw: kw[1], reverse=True)
        for key, weight in heaviest[: 4 * EXPANSION_TERMS]:
            word = spelling[key].most_common(1)[0][0]
            df = self._df(word)
            if df >= 2:  # a word of one section says nothing about the others
                scored.append((weight * math.log(total / df), word))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [word for _, word in scored[:EXPANSION_TERMS]]

    def _section_words(self, section: int) -> list[str]:
        words = self.memo.section_words.get(section)
        if words is None:
            heading, body = self.con.execute(
                "SELECT heading, body FROM sections WHERE id = ?", (section,)
            ).fetchone()
            words = self.memo.section_words[section] = [
                w for w in content_terms(f"{heading} {body}") if _expandable(w)
            ]
        return words

    def _df(self, word: str) -> int:
        df = self.memo.df.get(word)
        if df is None:
            (df,) = self.con.execute(
                "SELECT count(*) FROM sections_fts WHERE sections_fts MATCH ?", ('"' + word + '"',)
            ).fetchone()
            self.memo.df[word] = df
        return df

    def _total(self) -> int:
        if self.memo.total is None:
            (self.memo.total,) = self.con.execute("SELECT count(*) FROM sections").fetchone()
        return self.memo.total

    def _documents(self, scores: dict[int, float], limit: int) -> list[RankedDocument]:
        """Sections to documents (best section plus a share of the next two), lifted by how much
        of the query their title names; at most MAX_HITS_PER_SOURCE per source file.

        The lift at most doubles a score (coverage is a share), so documents are lifted best
        first and the rest left alone once even doubled they would rank below the last one kept:
        the same hits as lifting all of them, for the few dozen it takes instead of hundreds."""
        by_doc: dict[int, list[tuple[float, int]]] = defaultdict(list)
        for section, doc in self._section_docs(list(scores)):
            by_doc[doc].append((scores[section], section))
        bases = []
        for doc, found in by_doc.items():
            found.sort(key=lambda x: (-x[0], x[1]))
            base = found[0][0] + NEXT_SECTIONS_SHARE * sum(
                s for s, _ in found[1 : 1 + NEXT_SECTIONS]
            )
            bases.append((base, doc, found[0][1]))
        bases.sort(key=lambda r: (-r[0], r[1]))
        ranked: list[tuple[float, str, int, str, str, int]] = []
        for start in range(0, len(bases), LIFT_BATCH):
            batch = bases[start : start + LIFT_BATCH]
            docs = self._docs([doc for _, doc, _ in batch])
            for base, doc, best in batch:
                url, title, source = docs[doc]
                ranked.append((base * (1 + self._coverage(title)), url, doc, title, source, best))
            kept = _capped(ranked, limit)
            rest = bases[start + LIFT_BATCH : start + LIFT_BATCH + 1]
            if len(kept) >= limit and rest and 2 * rest[0][0] < kept[-1].score - 1e-6:
                break
        return _capped(ranked, limit)

    def _coverage(self, title: str) -> float:
        """The share of the query's words that `title` names, each weighed by its rarity in the
        corpus. A title naming the rare word asked about ('The "raise" statement' for "the raise
        statement in Python") is lifted above one naming only the common ones ('The "try"
        statement'), which a long page that uses the rare word often would otherwise outrank."""
        if self._rarity is None:
            total = self._total()
            self._rarity = {
                part: math.log(1 + total / max(1, self._df(part))) for part in self.terms.parts
            }
        named = set(self.terms.parts).intersection(self.terms.of(title))
        whole = sum(self._rarity.values())
        return sum(self._rarity[part] for part in named) / whole if whole else 0.0

    def _section_docs(self, sections: list[int]) -> list[tuple[int, int]]:
        """(section, its document) for each section, from the memo when known."""
        known = self.memo.section_doc
        missing = [s for s in sections if s not in known]
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            marks = ",".join("?" * len(chunk))
            known.update(
                self.con.execute(f"SELECT id, doc_id FROM sections WHERE id IN ({marks})", chunk)
            )
        return [(s, known[s]) for s in sections]

    def _docs(self, ids: list[int]) -> dict[int, tuple[str, str, str]]:
        """URL, title and source of each document, a few hundred per query rather than one each."""
        rows: dict[int, tuple[str, str, str]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for doc, url, title, source in self.con.execute(
                f"SELECT id, url, title, source FROM docs WHERE id IN ({marks})", chunk
            ):
                rows[doc] = (url, title, source)
        return rows


def _capped(
    ranked: list[tuple[float, str, int, str, str, int]], limit: int
) -> list[RankedDocument]:
    """The best `limit` documents, at most MAX_HITS_PER_SOURCE of one source (ties by URL)."""
    out: list[RankedDocument] = []
    per_source: Counter[str] = Counter()
    for score, url, doc, title, source, best in sorted(
        ranked, key=lambda r: (-round(r[0], 9), r[1])
    ):
        if per_source[source] >= MAX_HITS_PER_SOURCE:
            continue
        per_source[source] += 1
        out.append(RankedDocument(doc, url, title, best, score))
        if len(out) >= limit:
            break
    return out


def _scaled(scores: dict[int, float]) -> dict[int, float]:
    """Scores divided by the best one: two rankings of different queries become comparable."""
    best = max(scores.values(), default=0.0)
    return {k: v / best for k, v in scores.items()} if best > 0 else {}


def _expandable(word: str) -> bool:
    """Words, not code or numbers: identifiers and literals in code blocks are too specific (and
    `let`, `mut` too common) to say what a section is about."""
    return len(word) >= 4 and word not in STOPWORDS and not _CODE_TOKEN.search(word)
