"""The offline engine's revision of one finished section (`write_section` with `current` set: a
person's feedback on a report that is done; workflows/revising/).

Extraction still, never writing: the rewritten section is the cited sentences it already had,
the ones its steps' observations hold and the sentences of the research's evidence, chosen and
ordered by the feedback. The rules, each visible in the result:

- **What the feedback names comes first.** Its content words (not the words that ask for a
  length, such as "shorter" or "more") rank the sentences that hold them above the others; a
  sentence quoted from the evidence joins only when it holds one of them.
- **Without X.** "without", "drop", "remove", "omit", "no" or "not" before words leaves out the
  sentences that hold those words.
- **Only X.** "only" with words the sentences hold keeps just the sentences that hold them.
- **Length.** Asked for less ("shorter", "brief", "concise", ...): half the sentences it had;
  asked for more ("more", "expand", "detail", ...): up to three more; else as many as it had,
  plus those the feedback's words bring.
- **Not told twice.** A sentence an earlier section tells (`told_before`) is left out.

The form follows the section's: a list stays a list, a paragraph a paragraph.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from workflows.kit.citations import escape
from workflows.kit.verification import cited_sentences
from workflows.models import Claim, Verdict
from workflows.report_models import SectionInput, SectionOutput
from workflows.text import content_terms, split_sentences

_SHORTER = re.compile(
    r"\b(short|brief|concise|condense|trim|tighten|fewer|less|summari[sz]e)", re.I
)
_LONGER = re.compile(r"\b(more|longer|expand|detail|elaborate|deeper|add|include)", re.I)
_ONLY = re.compile(r"\bonly\b", re.I)
_WITHOUT = re.compile(
    r"\b(?:without|drop|remove|omit|leave out|no|not)\s+((?:the\s+)?[\w.-]+(?:\s+[\w.-]+)?)",
    re.I,
)
#: Words of a feedback that ask for a form, not a subject.
_FORM_WORDS = frozenset(
    """short shorter shorten brief briefer concise condense trim tighten fewer less more longer
    expand expanded detail details detailed elaborate deeper add include section sentence sentences
    paragraph paragraphs focus please make keep rewrite revise bit lot much clearer clear simpler
    simple better mention mentions part parts point points text only""".split()
)
#: A sentence the section may hold: its text with its [n] markers, the claim it makes, its sources.
_Candidate = tuple[str, str, tuple[int, ...]]
#: Sentences quoted from the evidence: long enough to say something, short enough to read.
_WORDS_MIN, _WORDS_MAX = 5, 60


def revise_section(inp: SectionInput) -> SectionOutput:
    feedback = inp.feedback[0] if inp.feedback else ""
    known = {s.id for s in inp.sources}
    now = [s for s in cited_sentences(inp.current) if set(s.source_ids) <= known]
    told = {_key(s.claim) for text in inp.told_before for s in cited_sentences(text)}
    excluded = _excluded(feedback)
    terms = [t for t in dict.fromkeys(content_terms(feedback)) if t not in _FORM_WORDS]
    terms = [t for t in terms if t not in excluded]

    candidates: list[_Candidate] = []
    seen: set[str] = set()

    def offer(text: str, claim: str, ids: tuple[int, ...]) -> None:
        key = _key(claim)
        if key and key not in seen and key not in told and not _holds(claim, excluded):
            seen.add(key)
            candidates.append((text, claim, ids))

    for s in now:
        offer(s.text, s.claim, s.source_ids)
    for step in inp.steps:
        for s in cited_sentences(step.observation or ""):
            if set(s.source_ids) <= known:
                offer(s.text, s.claim, s.source_ids)
    for text, claim, ids in _quoted(inp, known, terms):
        offer(text, claim, ids)

    chosen = _chosen(candidates, feedback, max(1, len(now)), terms)
    if not chosen:
        return SectionOutput(
            markdown=inp.current if inp.current != "(empty)" else "",
            claims=[],
        )
    listed = any(line.lstrip().startswith(("- ", "* ")) for line in inp.current.splitlines())
    body = (
        "\n".join(f"- {text.strip()}" for text, _, _ in chosen)
        if listed or len(chosen) > 1 and not inp.current.strip()
        else " ".join(text.strip() for text, _, _ in chosen)
    )
    claims = [
        Claim(text=claim, source_ids=list(ids), verdict=Verdict.UNVERIFIED)
        for _, claim, ids in chosen
    ]
    return SectionOutput(markdown=body, claims=claims)


def _quoted(inp: SectionInput, known: set[int], terms: list[str]) -> Iterator[_Candidate]:
    """The evidence's sentences that hold the feedback's words, cited to their source: only
    whole, plain sentences of a readable length, so a quote never carries markup or a fragment."""
    for evidence in inp.evidence if terms else []:
        if evidence.source_id not in known:
            continue
        for sentence in split_sentences(evidence.text):
            plain = " ".join(sentence.split())
            if (
                escape(plain) == plain
                and _WORDS_MIN <= len(plain.split()) <= _WORDS_MAX
                and plain[-1:] in ".!?"
                and _hits(plain, terms)
            ):
                cited = f"{plain[:-1]} [{evidence.source_id}]{plain[-1]}"
                yield cited, plain, (evidence.source_id,)


def _chosen(
    candidates: list[_Candidate], feedback: str, had: int, terms: list[str]
) -> list[_Candidate]:
    """The sentences kept, those holding the most of the feedback's words first, as many as the
    length rule allows (module docstring); "only X" keeps just the ones that hold X."""
    if _SHORTER.search(feedback):
        most = max(1, had // 2)
    elif _LONGER.search(feedback):
        most = had + 3
    else:
        most = had + sum(1 for _, claim, _ in candidates[had:] if _hits(claim, terms))
    if _ONLY.search(feedback) and any(_hits(claim, terms) for _, claim, _ in candidates):
        candidates = [c for c in candidates if _hits(c[1], terms)]
        most = min(most, len(candidates))
    order = sorted(range(len(candidates)), key=lambda i: (-_hits(candidates[i][1], terms), i))
    return [candidates[i] for i in order[:most]]


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _hits(text: str, terms: list[str]) -> int:
    words = set(content_terms(text))
    return sum(1 for t in terms if t in words)


def _excluded(feedback: str) -> set[str]:
    return {
        term
        for match in _WITHOUT.finditer(feedback)
        for term in content_terms(match.group(1))
        if term not in _FORM_WORDS
    }


def _holds(text: str, excluded: set[str]) -> bool:
    return bool(excluded) and bool(excluded & set(content_terms(text)))
