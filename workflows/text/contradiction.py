"""What in a claim says the opposite of the passage it restates: a negation on one side only,
an opposite word ("smallest" / "largest", "locked" / "unlocked"), two opposite words the other way
round ("left to right" / "right to left"), or words drawn from both sides of an "otherwise".

Why: these are the changes that keep nearly every word of a source sentence and flip its
meaning, so word overlap called them supported. Pure (stdlib, workflows.text).
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from workflows.text import STOPWORDS, stem, tokenize
from workflows.text.claim_parts import terms

_NEGATIONS = frozenset(
    "not no never none nothing neither nor cannot can't don't doesn't isn't aren't wasn't won't "
    "without unable impossible nobody nowhere".split()
)
NEGATION_SCOPE = 5  # content tokens after a negation that it reaches
#: Of those, the ones it negates for certain: the first, what is negated ("cannot be an
#: unpacking", "is not supported"), not the words that complete it ("don't exist with shallow
#: copy operations": a claim that shallow copying "does not have" them says the same).
NEGATED_WORDS = 1
#: Negation words that are pronouns: at the end of a clause ("if there is none,") they negate
#: nothing after it.
_PRONOUNS = frozenset({"none", "nothing", "nobody", "nowhere"})
#: Pairs of opposite words: a claim using one where its passage uses the other says the opposite.
_OPPOSITES = [
    ("smaller", "larger"),
    ("smallest", "largest"),
    ("lower", "higher"),
    ("lowest", "highest"),
    ("less", "more"),
    ("fewer", "more"),
    ("before", "after"),
    ("first", "last"),
    ("left", "right"),
    ("start", "end"),
    ("beginning", "end"),
    ("increase", "decrease"),
    ("minimum", "maximum"),
    ("min", "max"),
    ("ascending", "descending"),
    ("true", "false"),
    ("mutable", "immutable"),
    ("inclusive", "exclusive"),
    ("synchronous", "asynchronous"),
    ("shallow", "deep"),
    ("always", "never"),
    ("all", "some"),
    ("every", "some"),
    ("allowed", "forbidden"),
    ("same", "different"),
    ("faster", "slower"),
    ("earlier", "later"),
    ("above", "below"),
    ("valid", "invalid"),
    ("positive", "negative"),
    ("odd", "even"),
    ("enabled", "disabled"),
    ("required", "optional"),
    ("public", "private"),
    ("input", "output"),
    ("upper", "lower"),
    ("older", "newer"),
    ("inner", "outer"),
    ("explicit", "implicit"),
    ("static", "dynamic"),
    ("success", "failure"),
    ("sorted", "unsorted"),
    ("ordered", "unordered"),
    ("blocking", "non-blocking"),
]
_OPPOSITE: dict[str, set[str]] = {}
for _a, _b in _OPPOSITES:
    _OPPOSITE.setdefault(_a, set()).add(_b)
    _OPPOSITE.setdefault(_b, set()).add(_a)
#: A word with one of these in front says the opposite of the word without it.
_NEGATING_PREFIXES = ("un", "non-", "non", "in", "im", "dis", "ir", "il")
#: Words that join a condition to its alternative: a claim drawing words from both sides of one,
#: without it, merges what the passage keeps apart.
_CONTRASTS = re.compile(r"\b(?:otherwise|but|however|whereas|unless|except|instead)\b", re.I)


def opposite_of(word: str) -> str:
    """The first opposite of a word ("" when it has none): for canaries and reasons."""
    return sorted(_OPPOSITE.get(word, ()))[0] if word in _OPPOSITE else ""


def polarity(claim: str, passage: str) -> list[str]:
    """A negation on one side only: words the passage states that the claim negates, or words
    the passage negates that the claim states plainly. Each word is weighed on its own, so a
    negation elsewhere in the other text ("is not evaluated twice") does not excuse it, and a
    negation governs only its own clause: it ends at a parenthesis, a semicolon or a colon, or a
    comma after the words it governs ("(which ... cannot be an unpacking) and the expression
    list": the list is not negated). Words a text states both ways ("r'\\"' is a valid string
    ...; r'\\' is not a valid string") decide nothing."""
    shared = terms(claim) & terms(passage)
    claim_no, claim_yes, claim_all = _negated(claim, shared, _said_with_prefix(claim, passage))
    passage_no, passage_yes, passage_all = _negated(
        passage, shared, _said_with_prefix(passage, claim)
    )
    if claim_all & passage_all:
        return []  # both negate the same thing, in their own words
    for words, phrase in claim_no:
        if words & passage_yes:
            return [f'negates "{phrase}" where the passage does not']
    for words, phrase in passage_no:
        if words & claim_yes - claim_all:
            return [f'drops the passage\'s negation ("{phrase}")']
    return []


def _said_with_prefix(text: str, other: str) -> set[str]:
    """Stems of `text` whose prefixed opposite `other` uses: "not locked" in one text is
    "unlocked" in the other, a paraphrase, not a flip."""
    words = set(tokenize(other))
    return {stem(t) for t in tokenize(text) if any(p + t in words for p in _NEGATING_PREFIXES)}


def negation_tokens(text: str) -> list[int]:
    """Where a text negates: its negation words, but not "if not" or "or not" (an alternative,
    as "otherwise" is, not a denial)."""
    tokens = tokenize(text)
    return [
        i
        for i, token in enumerate(tokens)
        if (token in _NEGATIONS or token.endswith("n't"))
        and not (token == "not" and i and tokens[i - 1] in ("if", "or"))
    ]


#: Where a negation's clause ends: a parenthesis, a semicolon, a colon (and a comma, once the
#: negation governs a word).
_CLAUSE_MARKS = re.compile(r"([(),;:])")


def _stream(text: str) -> list[str]:
    """The text's tokens (workflows.text.tokenize) with its clause marks kept between them."""
    out: list[str] = []
    for piece in _CLAUSE_MARKS.split(text):
        out += [piece] if _CLAUSE_MARKS.fullmatch(piece) else tokenize(piece)
    return out


def _negated(
    text: str, shared: set[str], absorbed: AbstractSet[str] = frozenset()
) -> tuple[list[tuple[set[str], str]], set[str], set[str]]:
    """(each negation's governed shared words it does not also state plainly, with its first
    words; the shared words the text states outside any negation; every shared word a negation
    reaches). A negation whose first word the other text says with a
    negating prefix ("not locked" where it says "unlocked") is absorbed: the two say the same."""
    tokens = _stream(text.replace("`None`", "`Null`"))  # the constant, not a negation
    words = [t for t in tokens if not _CLAUSE_MARKS.fullmatch(t)]
    negations = set(negation_tokens(" ".join(words)))
    governed: list[tuple[set[str], str]] = []
    reach: set[str] = set()
    negated_at: set[int] = set()
    position = -1
    for i, token in enumerate(tokens):
        if _CLAUSE_MARKS.fullmatch(token):
            continue
        position += 1
        if position not in negations:
            continue
        scope: list[str] = []
        reached = i
        for j in range(i + 1, min(len(tokens), i + 1 + NEGATION_SCOPE * 2)):
            t = tokens[j]
            if t in ");:" or (t == "," and (scope or token in _PRONOUNS)):
                break
            reached = j
            if t != "," and t not in STOPWORDS:
                scope.append(t)
        if scope and stem(scope[0]) in absorbed:
            continue
        negated_at.update(range(i, reached + 1))
        said = [t for t in tokens[i : reached + 1] if not _CLAUSE_MARKS.fullmatch(t)]
        governed.append(({stem(t) for t in scope[:NEGATED_WORDS]} & shared, " ".join(said[:3])))
        reach |= {stem(t) for t in scope[:NEGATION_SCOPE]} & shared
    plain = {
        stem(t)
        for j, t in enumerate(tokens)
        if j not in negated_at and not _CLAUSE_MARKS.fullmatch(t)
    } & shared
    return [(w - plain, phrase) for w, phrase in governed if w - plain], plain, reach


def _opposites_of(word: str, among: set[str]) -> set[str]:
    """The words of `among` that mean the opposite of `word`: listed pairs, and the same word
    with or without a negating prefix ("locked" / "unlocked", "blocking" / "non-blocking")."""
    found = _OPPOSITE.get(word, set()) & among
    for prefix in _NEGATING_PREFIXES:
        if prefix + word in among:
            found.add(prefix + word)
        if word.startswith(prefix) and len(word) - len(prefix) > 3 and word[len(prefix) :] in among:
            found.add(word[len(prefix) :])
    return found


def opposites(claim: str, passage: str) -> list[str]:
    claim_words, passage_words = tokenize(claim), tokenize(passage)
    in_claim, in_passage = set(claim_words), set(passage_words)
    found = []
    negated = {claim_words[i + 1] for i in negation_tokens(claim) if i + 1 < len(claim_words)}
    for word in dict.fromkeys(claim_words):
        if _opposites_of(word, in_claim) or word in negated:
            continue  # both sides named (their order is checked below), or "not locked"
        opposite = _opposites_of(word, in_passage)
        if word not in in_passage and opposite:
            found.append(f'uses "{word}" where the passage says "{sorted(opposite)[0]}"')
    for a in dict.fromkeys(claim_words):
        for b in _opposites_of(a, in_claim):
            if a < b and {a, b} <= in_passage:
                if (claim_words.index(a) < claim_words.index(b)) != (
                    passage_words.index(a) < passage_words.index(b)
                ):
                    found.append(f'puts "{a}" and "{b}" the other way round')
    return found


#: What sets one thing against another: a claim saying any of these keeps the passage's contrast.
_CONTRASTED = re.compile(
    r"\b(?:unlike|whereas|while|but|however|instead|rather|except|differ\w*|contrast\w*|"
    r"other than|not|no|never|only)\b",
    re.I,
)
_UNLIKE = re.compile(r"\bunlike\s+([^,;:()]+)", re.I)


def unlike(claim: str, passage: str) -> list[str]:
    """What the passage says "unlike" something, a claim says of that thing: "(which, unlike
    normal assignment statements, cannot be an unpacking)" read as "normal assignment statements
    cannot be an unpacking". A claim that keeps any contrast ("unlike", "whereas", "but",
    "not", ...) is left to the other checks."""
    if _CONTRASTED.search(claim):
        return []
    wanted = terms(claim)
    for match in _UNLIKE.finditer(passage):
        other = terms(match.group(1))
        if other and other <= wanted:
            what = " ".join(match.group(1).split())
            return [f'says of "{what}" what the passage says unlike it']
    return []


def stitched(claim: str, passage: str) -> str:
    """A claim that joins words from both sides of the passage's "otherwise" (or "but", ...)
    without the word itself merges a condition with its alternative."""
    if _CONTRASTS.search(claim):
        return ""
    parts = _CONTRASTS.split(passage)
    if len(parts) < 2:
        return ""
    wanted = terms(claim)
    sides = [terms(p) & wanted for p in parts]
    only = [
        s - set().union(*(o for j, o in enumerate(sides) if j != i)) for i, s in enumerate(sides)
    ]
    if sum(1 for s in only if len(s) >= 2) >= 2:
        marker = _CONTRASTS.search(passage)
        assert marker is not None
        return f'joins words from both sides of the passage\'s "{marker.group(0)}"'
    return ""
