"""Coordinator and query writer: how big a question is, and what to search for it.

Both read the question's surface form (questions.py), so their reasoning can name what they
counted: complexity from the number of aspects, comparisons, questions and content words; search
queries from the question, or a step's title, plus the question's key terms. The planner is
planning.py.
"""

from __future__ import annotations

import re

from activities.offline_engine.aspects import decompose, split_clauses
from activities.offline_engine.questions import (
    _key_terms,
    _question_and_qualifiers,
    points_back,
)
from activities.offline_engine.words import (
    PART_OF_QUESTION,
    TEMPLATE_WORDS,
    VERBS,
    _clean_clause,
    _Matcher,
    _specific_terms,
)
from workflows.activity_models import AboutQuestion, CoordinateOutput
from workflows.models import Complexity, Depth, PlanStep
from workflows.text import content_terms, trim, unique

# --- coordinator ------------------------------------------------------------------------------------

_FACT = re.compile(
    r"^(?:what(?:'s|\s+is|\s+are|\s+was|\s+were)|what\s+does\s.*\b(?:mean|stand\s+for)|who|when|where|which|define|"
    r"how\s+(?:many|much|old|long|big))\b",
    re.I,
)
_EXPLANATION = re.compile(
    r"^(?:how(?!\s+(?:many|much|old|long|big)\b)|why|explain|describe)\b", re.I
)

DEPTH_FOR = {
    Complexity.SIMPLE: Depth.LIGHT,
    Complexity.MODERATE: Depth.MEDIUM,
    Complexity.COMPLEX: Depth.EXTENDED,
}


def classify(about: AboutQuestion) -> CoordinateOutput:
    """Complexity from the number of aspects, comparisons, questions and length.

    - simple: one aspect, at most 8 content words, not a how/why explanation;
    - moderate: two or three aspects, a comparison of two, a how/why explanation, or > 8 words;
    - complex: four or more aspects, three-way comparisons, three or more questions, > 20 words.
    `is_simple` (a direct answer, no plan) is for single-fact questions: "What is X?", "Who ...?".
    """
    question, _ = _question_and_qualifiers(about)
    parts = decompose(question)
    n_words = len(content_terms(question))
    n_questions = question.count("?")
    aspects = len(parts.items)
    comparison = parts.kind == "comparison"
    explanation = bool(_EXPLANATION.match(question.strip()))
    fact = bool(_FACT.match(question.strip()))
    if aspects >= 4 or n_words > 20 or n_questions >= 3 or (comparison and aspects >= 3):
        complexity = Complexity.COMPLEX
    elif aspects >= 2 or comparison or explanation or n_words > 8:
        complexity = Complexity.MODERATE
    else:
        complexity = Complexity.SIMPLE
    is_simple = fact and aspects == 1 and n_words <= 8 and not comparison
    depth = DEPTH_FOR[complexity]
    found = f"{aspects} aspect(s) by {parts.kind}" + (
        f" ({'; '.join(parts.items)})" if aspects > 1 else ""
    )
    shape = (
        "a single-fact question" if is_simple else ("a how/why explanation" if explanation else "")
    )
    reasoning = (
        f"Rule-based: {found}, {n_words} content word(s), {n_questions} question mark(s)"
        + (f", {shape}" if shape else "")
        + f" → {complexity.value}, depth {depth.value}"
        + ("; answered directly from a quick search." if is_simple else ".")
    )
    return CoordinateOutput(
        complexity=complexity, is_simple=is_simple, recommended_depth=depth, reasoning=reasoning
    )


# --- search queries ---------------------------------------------------------------------------------


def _other_parts(question: str, title: str) -> set[str]:
    """The terms only the question's other parts use, when the step is one part of a question of
    several ("How long is a year on Mars and how tall is Olympus Mons?"): a query for the
    volcano's height that also asks for "year" and "Mars" finds the planet's page first, and the
    step then reads nothing about the volcano."""
    clauses = split_clauses(question)
    own = set(content_terms(title))
    terms = [set(content_terms(c)) for c in clauses]
    if len(terms) < 2:
        return set()
    part = max(range(len(terms)), key=lambda i: len(terms[i] & own))
    if len(terms[part] & own) < 2:  # a step of its own ("Key facts about year"), no one part's
        return set()
    return set().union(*(t for i, t in enumerate(terms) if i != part)) - terms[part]


def search_queries(about: AboutQuestion, step: PlanStep | None, max_queries: int) -> list[str]:
    """Background: the question itself, then its keywords. A step: its title with the question's
    subject, then the step's keywords with the question's key terms. Deduplicated, never empty."""
    limit = max(1, max_queries)
    question, answers = _question_and_qualifiers(about)
    key = _key_terms(about)
    if step is None:
        candidates = [f"{question} {answers}".strip(), " ".join(key)]
    else:
        title = _clean_clause(step.title)
        others = _other_parts(question, title)
        key = [t for t in key if t not in others]
        missing = [t for t in key[:4] if t not in VERBS and not _Matcher([t]).found(title)][:2]
        if points_back(about):
            # "Does a String need the same treatment?": what "the same" means is in the question it follows.
            earlier = [t for t in _specific_terms(about.follows_up) if t not in VERBS]
            missing = unique([*missing, *(t for t in earlier if not _Matcher([t]).found(title))])[
                :6
            ]
        described = step.description.split(PART_OF_QUESTION)[0]
        step_terms = [
            t
            for t in content_terms(f"{step.title} {described}")
            if t not in TEMPLATE_WORDS and t not in others
        ]
        candidates = [
            " ".join([title, *missing]),
            " ".join(unique([*step_terms[:6], *key[:3]])),
        ]
    queries = unique(trim(" ".join(c.split()), 300) for c in candidates if c.strip())
    return queries[:limit] or [trim(_clean_clause(about.topic_text()), 300) or about.topic_text()]
