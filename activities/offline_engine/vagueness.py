"""Two principles of vagueness, read from how a question is built rather than from its wording.

The routing rules (routing.py) ask back when research would have to guess. Two guesses recur in
questions of every wording, so they are found by the role a word plays, not by a list of sentences:

1. **A pronoun with nothing to point at.** "Is it thread-safe?", "Can these be nested?", "Who
   maintains it?": the only thing the question is about is "it", "these", "that one". A pronoun
   is resolved by a noun phrase before it in the same message ("What is a trait object and when
   should I use it?") or by an earlier question the conversation answered (routing.py's
   follow-up rule); words after it are what is said about it ("thread-safe", "on Windows"), not
   what it is. Not every "it" or "that" points: "Is it safe to call unwrap on None?" (the "it"
   stands for the clause after it), "the trait that makes" (a relative), "this function" (a
   determiner, the definite-reference rule's business) are told apart by their neighbours.
2. **An evaluation with nothing to measure against.** "Is Rust faster?", "Which is safer?", "Is
   Python safe?": a judgment question (one that asks yes/no or which) whose comparative or
   evaluative adjective has neither a standard ("than Go", "or Go", "compared to C") nor a
   purpose or setting ("for web servers", "to share between threads", "in release mode"). A
   question that asks how to *reach* a quality ("How can I make my build faster?") is a goal,
   not a judgment, and is left alone.

Pure functions over the message's words; no parser, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from activities.offline_engine.words import ASPECT_WORDS, VAGUE, VERBS
from workflows.text import STOPWORDS

#: A word as typed (case kept, inner punctuation of names kept), or a clause-breaking mark.
_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_'’+#.:-]*[A-Za-z0-9_]|[A-Za-z0-9_]|[,;:?!()]")
_BREAKS = frozenset(",;:?!()")

#: Pronouns that always stand for something named elsewhere.
_ALWAYS = frozenset("its they them their these those he she him her".split())
#: Words that may be pronouns or may play another part: "it" (expletive), "this"/"that" (determiner,
#: relative, complementizer).
_MAYBE = frozenset(("it", "this", "that"))
#: After "it": the clause that the expletive "it" stands for begins here ("is it safe *to* ...").
_CLAUSE_OPENERS = frozenset("to that whether if when how which what why".split())
#: Adverbs that sit between a pronoun and its verb ("Is that *still* supported?").
_ADVERBS = frozenset(
    "still really actually already ever never always usually generally even also".split()
)

#: "faster", "more secure": a comparison needs something to compare with.
COMPARATIVES = frozenset(
    """better worse faster slower quicker safer cheaper easier harder simpler cleaner smaller bigger
    larger lighter heavier stronger weaker stricter clearer nicer leaner tighter sooner riskier
    costlier""".split()
)
#: Adjectives that judge ("safe", "efficient"): safe for what, efficient at what?
EVALUATIVES = frozenset(
    """good bad fast slow quick safe secure efficient performant reliable scalable idiomatic cheap
    expensive easy hard simple clean preferable worth worthwhile robust stable portable
    maintainable readable recommended advisable viable ok okay fine""".split()
)
#: "more efficient", "less risky": a comparative in two words.
_MORE = frozenset(("more", "less"))
#: A standard of comparison ("than Go", "Rust or Go") or a purpose or setting ("for servers",
#: "to share", "in release mode"): after either, the judgment has something to be measured by.
_STANDARD = frozenset("than or vs versus between compared against over instead from".split())
_SETTING = frozenset("for to at in on when with under during if as while within across".split())
#: Questions that ask for a judgment: yes/no, or which.
_JUDGING = frozenset(
    "is are was were would will could can does do did should which isn't aren't".split()
)
#: Verbs of reaching a quality: "make it faster" is a goal, not a comparison.
_GOALS = frozenset("make makes get gets keep keeps render become becomes grow turn".split())
_NUMBERS = frozenset("two three both".split())


def _tokens(text: str) -> list[str]:
    return [t.lower().rstrip(".") for t in _TOKEN.findall(text)]


def _content(word: str) -> bool:
    """A word that can name something: not a function word, pronoun, filler or verb."""
    return (
        len(word) > 1
        and word not in _BREAKS
        and word not in STOPWORDS
        and word not in VAGUE
        and word not in ASPECT_WORDS
        and word not in VERBS
        and word not in _ALWAYS
        and word not in _MAYBE
        and word not in _ADVERBS
        and word not in COMPARATIVES
        and word not in EVALUATIVES
        and not word.endswith("ly")
        and word not in ("i'm", "i've", "i'd", "i", "you", "we")
    )


def _noun_after(words: list[str], i: int) -> bool:
    """Whether the word after position i is a noun it introduces ("this *function*")."""
    if i + 1 >= len(words):
        return False
    nxt = words[i + 1]
    return _content(nxt) and not nxt.endswith(("ed", "ing"))


def _expletive_it(words: list[str], i: int) -> bool:
    """ "Is it safe to call unwrap?", "What does it mean when rustc says E0502?", "Is it worth
    learning Rust?": the "it" stands for a clause after it that names its own subject. Only a
    subject "it" can be one ("Can I take *it* back if ...?" is an object: it points)."""
    if i > 0 and words[i - 1] not in _JUDGING and words[i - 1] not in _BREAKS:
        return False
    end = next((j for j in range(i + 1, len(words)) if words[j] in _BREAKS), len(words))
    for j in range(i + 1, min(i + 4, end)):
        word = words[j]
        opens = word in _CLAUSE_OPENERS or (
            word == "worth" and j + 1 < end and words[j + 1].endswith("ing")
        )
        if opens and any(_content(w) for w in words[j + 1 : end]):
            return True
    return False


def _points(words: list[str], i: int) -> bool:
    """Whether the pronoun-like word at i stands for something named elsewhere."""
    word = words[i]
    if word in ("these", "those"):
        return not _noun_after(words, i)
    if word in _ALWAYS:
        return True
    if word == "it":
        return not _expletive_it(words, i)
    # "this" / "that": a determiner before a noun, a relative or complementizer after a content word.
    if i + 1 < len(words) and words[i + 1] in ("one", "ones"):
        return True
    if _noun_after(words, i):
        return False
    return not (word == "that" and i > 0 and _content(words[i - 1]))


def _antecedent_before(words: list[str], i: int) -> bool:
    """A word before position i that can name what the pronoun stands for: not the verb whose
    object the pronoun is ("maintains *it*")."""
    return any(_content(w) for w in words[: max(0, i - 1)]) or (
        i > 0 and _content(words[i - 1]) and words[i - 1][:1].isdigit()
    )


def unresolved_pronoun(text: str) -> str | None:
    """The first pronoun in `text` that points at something the message never names, or None.

    A quoted or code span counts as something named (the message shows what it is about)."""
    if re.search(r"`[^`]+`|\"[^\"]{3,}\"|\n", text):
        return None
    words = _tokens(text)
    for i, word in enumerate(words):
        if (
            (word in _ALWAYS or word in _MAYBE)
            and _points(words, i)
            and not _antecedent_before(words, i)
        ):
            return word
    return None


@dataclass(frozen=True)
class Evaluation:
    """A judgment with nothing to measure it by: the word, and whether it compares."""

    word: str
    comparative: bool


def unmeasured_evaluation(text: str) -> Evaluation | None:
    """The comparative or evaluative of a judgment question that names no standard, purpose or
    setting ("Is Rust faster?", "Which is safer?", "Is Python safe?"), or None."""
    words = _tokens(text)
    clause = 0
    for i, word in enumerate(words):
        if word in _BREAKS:
            clause = i + 1
            continue
        two = word in _MORE and i + 1 < len(words) and words[i + 1] not in _BREAKS
        found = word in COMPARATIVES or word in EVALUATIVES or (two and _adjective(words[i + 1]))
        if not found or not _judging(words, clause, i):
            continue
        if any(w in _GOALS for w in words[clause:i]):
            continue
        rest = words[i + 1 :]
        if any(w in _STANDARD or w in _SETTING for w in rest) or any(
            w in _STANDARD for w in words[:i]
        ):
            continue
        comparative = word in COMPARATIVES or word in _MORE
        if "," in words[i:] or (not comparative and _dimension(words, clause, i)):
            continue  # "Which is faster, Vec or VecDeque?" / "Is Rust memory safe?"
        return Evaluation(f"{word} {words[i + 1]}" if word in _MORE else word, comparative)
    return None


def _adjective(word: str) -> bool:
    """ "more *efficient*", "less *risky*": an adjective by its ending or by the evaluative table."""
    return word in EVALUATIVES or word.endswith(
        ("ive", "ent", "ant", "ous", "ic", "able", "ible", "ful", "ure", "sky")
    )


def _judging(words: list[str], clause: int, i: int) -> bool:
    """Whether the clause holding position i asks for a judgment: it opens with "is", "does",
    "which"..., or "how much" before a comparative."""
    opening = words[clause:i]
    if not opening:
        return False
    if opening[0] in ("and", "but", "so", "or") and len(opening) > 1:
        opening = opening[1:]
    return opening[0] in _JUDGING or (opening[:2] == ["how", "much"] and i == clause + 2)


def _dimension(words: list[str], clause: int, i: int) -> bool:
    """ "Is Rust *memory* safe?": a noun right before the adjective, after another one, names
    what is judged ("memory"), so the judgment has its measure."""
    before = [w for w in words[clause:i] if _content(w)]
    return len(before) >= 2 and i > 0 and _content(words[i - 1])


def counts_as_option(word: str) -> bool:
    """Whether a word can name one of a choice's options (not "two", not "safer")."""
    return word not in _NUMBERS and word not in COMPARATIVES and word not in EVALUATIVES
