"""The question as the person meant it, once they have answered what it was missing.

"Tell me more about it", answered "asyncio task cancellation", is a question about asyncio task
cancellation: that is what the plan, the search queries and the report's title should say, with
the question as asked kept visible beside it. Both engines read it (`AboutQuestion.meant()` and
`topic_text()`), so the rewrite is a few surface rules, deterministic and stated here, not a model:

1. An answer that is a question of its own ("Which is faster, loops or iterators?") replaces it.
2. Lead-ins are dropped from the answer: "I meant the DAIL-SQL approach" → "the DAIL-SQL approach".
3. A reference the answer names is replaced by the answer: "the approach" in "Use the approach from
   the paper" → "Use the DAIL-SQL approach from the paper"; "the other one" → the answer.
4. Otherwise the first pronoun is: "it", "them", "this" → the answer; "its", "their" → the answer's.
5. "Which one is better?" keeps its frame and gets the options: "Which one is better, match or if let?"
6. "How many are there?" gets what is counted: "How many unsafe superpowers are there?"
7. An answer that starts with a preposition ("for async code") completes the question before its "?".
8. Anything else is appended after a colon: "What is the best trait: for writing iterators?" reads
   as the person put it. A long or multi-line answer (pasted code) is appended on its own line.

Pure and deterministic: it runs inside the workflow.
"""

from __future__ import annotations

import re

_LEAD_IN = re.compile(
    r"^(?:(?:no|yes|sorry|ok|okay|well)[,.!]?\s+)*(?:i\s+(?:meant|mean|was\s+asking\s+about|am\s+asking\s+about|'m\s+"
    r"asking\s+about|was\s+talking\s+about|want\s+to\s+know\s+about)|meaning|it'?s|it\s+is|they\s+are|they're|"
    r"about|regarding|the\s+one\s+about)\s+",
    re.I,
)
_QUESTION_START = re.compile(
    r"^(?:what|how|why|when|where|which|who|whom|is|are|does|do|did|can|could|should|would|will|explain|compare)\b",
    re.I,
)
_PREPOSITION = re.compile(
    r"^(?:for|in|with|when|on|about|by|using|under|between|within|during|among|from|to)\b", re.I
)
#: "the paper", "this approach", "my code": a determiner and a noun (the noun is group 2).
_REFERENCE = re.compile(
    r"\b(?:the|that|this|these|those|my|our|your)\s+(?:other\s+|same\s+)?([a-z][a-z-]*)\b", re.I
)
_OTHER_ONE = re.compile(r"\bthe\s+other\s+ones?\b", re.I)
_WHICH_ONE = re.compile(r"\bwhich\s+(?:one|ones|of\s+(?:them|these|those))\b", re.I)
_HOW_MANY_THERE = re.compile(
    r"^(\s*how\s+(?:many|much))\s+((?:are|is|were|was)\s+there\b.*)$", re.I | re.S
)
_PRONOUN = re.compile(r"\b(it|them|they|this|that|these|those|its|their)\b", re.I)
_POSSESSIVE = {"its", "their"}
#: An answer longer than this, or on several lines, is material (code, an error), not a phrase.
LONG_ANSWER = 200


def meant_question(query: str, answers: list[str]) -> str:
    """`query` rewritten with each clarification answer in turn (see the module's rules)."""
    meant = " ".join(query.split())
    for raw in answers:
        if raw and raw.strip():
            meant = _with_answer(meant, raw.strip())
    return meant


def _with_answer(question: str, raw: str) -> str:
    if "\n" in raw or len(raw) > LONG_ANSWER:
        return f"{question}\n{raw}"
    answer = _LEAD_IN.sub("", " ".join(raw.split())).strip(" .!;,")
    if not answer:
        return question
    if _QUESTION_START.match(answer) and (raw.rstrip().endswith("?") or len(answer.split()) >= 4):
        return answer if answer.endswith("?") else f"{answer}?"
    body, end = _split_end(question)
    if _PREPOSITION.match(answer):
        return f"{body} {answer}{end}"
    answer_words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]*", answer)}
    for match in _REFERENCE.finditer(body):
        if match.group(1).lower() in answer_words:
            return f"{body[: match.start()]}{answer}{body[match.end() :]}{end}"
    other = _OTHER_ONE.search(body)
    if other:
        return f"{body[: other.start()]}{answer}{body[other.end() :]}{end}"
    if _WHICH_ONE.search(body):
        return f"{body}, {answer}{end}"
    counted = _HOW_MANY_THERE.match(body)
    if counted:
        return f"{counted.group(1)} {answer} {counted.group(2)}{end}"
    pronoun = _PRONOUN.search(body)
    if pronoun and not _starts_clause(body, pronoun):
        word = pronoun.group(1).lower()
        replacement = (
            f"{answer}'" + ("" if answer.endswith("s") else "s") if word in _POSSESSIVE else answer
        )
        return f"{body[: pronoun.start()]}{replacement}{body[pronoun.end() :]}{end}"
    return f"{body}: {answer}{end}"


def _split_end(question: str) -> tuple[str, str]:
    """("How many are there", "?"): the question and its final punctuation."""
    stripped = question.rstrip()
    body = stripped.rstrip("?.! ")
    return body, stripped[len(body) :].strip() or ""


def _starts_clause(body: str, pronoun: re.Match[str]) -> bool:
    """ "that" or "which" opening a relative clause ("a function that reads") is no pronoun."""
    if pronoun.group(1).lower() != "that":
        return False
    before = body[: pronoun.start()].split()
    return (
        bool(before)
        and before[-1].isalpha()
        and before[-1].lower() not in ("about", "with", "of", "is", "for", "do")
    )
