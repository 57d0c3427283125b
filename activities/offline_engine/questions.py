"""What a question asks: the question and its qualifiers, its subject, its aspects, its key terms.

Every role that works on the research question (coordinator, query writer, planner, researcher,
reflector, synthesizer) starts from the same reading of it, so the reading lives here once: the
question as asked and what narrows it (what a follow-up refers to, the user's clarification
answers), the subject phrase that titles a plan, the aspects that several clauses, a comparison or
an enumeration ask about, and the specific words that are searched for and counted as covered.
Surface rules over words, tried in a stated order; no parser, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from activities.offline_engine.kinds import kind_list
from activities.offline_engine.words import (
    _NEW_CLAUSE,
    _QUESTION_WORDS,
    _WORD,
    ASPECT_WORDS,
    DETERMINERS,
    HOW_MEASURE,
    PRONOUNS,
    REFERENTIAL,
    VAGUE,
    VERBS,
    _clean_clause,
    _specific_terms,
    _stem,
    _words,
    third_person,
)
from workflows.activity_models import AboutQuestion
from workflows.loop.followup import POINTER_PATTERNS
from workflows.text import STOPWORDS, content_terms, unique

# --- the question: what was asked, what was clarified, what it is about -----------------------------


def _question_and_qualifiers(about: AboutQuestion) -> tuple[str, str]:
    """(question, what qualifies it): what a follow-up refers to, then the clarification answers.
    Both narrow the question the same way, so both come back as its qualifiers."""
    question, clarified, follow_up = _question_parts(about)
    return question, " ".join(p for p in (follow_up, clarified) if p)


def _question_parts(about: AboutQuestion) -> tuple[str, str, str]:
    """(question as meant, clarification answers, follow-up context): the typed fields, each as
    one text. The question is the one the person meant once they answered what it was missing
    ("Tell me more about it" + "asyncio task cancellation": workflows/loop/clarified.py), or, in a
    follow-up, with "the second point" replaced by that point's subject; the answers are joined
    as `topic_text()` shows them to an LLM, so both engines read the same."""
    meant = about.meant().strip()
    if about.follows_up.strip() and not about.clarifications:
        meant = _with_point(meant, about.follows_up)
    return meant, "; ".join(about.clarifications).strip(), about.follows_up.strip()


#: "the second point", "that last bullet", "point 2": the determiner goes with the reference.
_DETERMINER = r"(?:\b(?:the|that|this|your|my)\s+(?:very\s+)?)?"
_POINTERS = tuple(re.compile(_DETERMINER + p.pattern, re.I) for p in POINTER_PATTERNS)
#: A point that opens with code names it there: "`async asyncio.tasks.wait_for(fut)` — Wait for ...".
_CODE_NAME = re.compile(
    r"^\s*`(?:(?:async|class|def|fn|pub|struct|trait|enum|impl|const|static)\s+)*([^`(\s]+)"
)
_CLAUSE_VERB = re.compile(
    r"\b(?:is|are|was|were|has|have|had|can|cannot|will|must|should|may|might|do|does|did)\b", re.I
)


def _with_point(question: str, point: str) -> str:
    """ "Tell me more about the second point" → "Tell me more about BM25": a follow-up's reference
    to a point of the earlier answer (workflows/loop/followup.py resolved it into `point`) is searched
    and titled by what the point is about, never by the words "second point"."""
    for pattern in _POINTERS:
        found = pattern.search(question)
        if found:
            subject = point_subject(point)
            return (
                f"{question[: found.start()]}{subject}{question[found.end() :]}"
                if subject
                else question
            )
    return question


def point_subject(point: str) -> str:
    """What an item or section of a report is about: the name its code opens with, a heading as
    it stands, else the words before the sentence's verb (at most six), else its specific words."""
    point = " ".join(point.split())
    code = _CODE_NAME.match(point)
    if code:
        return code.group(1).strip(".,;:")
    if (
        len(point.split()) <= 8
        and not re.search(r"[.!]\s*$", point)
        and not re.match(_QUESTION_WORDS, point, re.I)
    ):
        return _clean_clause(point)
    words = _words(re.split(r"[.;:!?]\s|\s[—–-]\s", point)[0])
    head: list[str] = []
    for i, word in enumerate(words):
        after = words[i + 1].lower() if i + 1 < len(words) else ""
        if (
            word.lower() in VERBS
            or _CLAUSE_VERB.fullmatch(word)
            or (head and third_person(word, after))
        ):
            break
        head.append(word)
    named = head
    while head and (head[0].lower() in STOPWORDS or head[0].lower() in PRONOUNS):
        head = head[1:]
    if len(head) == 1 and len(named) > 2 and named[-2].lower() not in DETERMINERS:
        # "The with statement is ...": not "statement" alone, the word that names it stays
        head = [named[0].lower(), *named[1:]] if named[0].lower() in DETERMINERS else named[-2:]
    head = head[:6]
    if [t for t in _specific_terms(" ".join(head)) if t not in REFERENTIAL]:
        return " ".join(head)
    return " ".join(_specific_terms(point)[:4])


#: Words by which a follow-up points back at the earlier research ("Can I take *it* back?",
#: "Does a String need the *same* treatment?").
_POINTS_BACK = re.compile(
    r"\b(?:it|its|they|them|their|this|these|those|same|other|such|either|both)\b", re.I
)


def points_back(about: AboutQuestion) -> bool:
    """Whether a follow-up leans on what it follows for its subject."""
    return bool(about.follows_up.strip()) and bool(_POINTS_BACK.search(about.meant()))


def _phrases(text: str) -> list[list[str]]:
    """Runs of consecutive content words (case kept), broken by stop words, verbs and punctuation.

    A run is the closest thing to a noun phrase a word list can give: "How does Rust's borrow
    checker prevent data races" gives [Rust's, borrow, checker] and [data, races]. Vague, aspect
    and referential words at either end of a run are dropped ("the DAIL-SQL approach": DAIL-SQL).
    """
    runs: list[list[str]] = []
    current: list[str] = []
    last_end = 0
    for match in _WORD.finditer(text):
        word = match.group(0)
        gap = text[last_end : match.start()]
        last_end = match.end()
        low = word.lower()
        if current and re.search(r"[^\s\"'`]", gap):  # punctuation ends a phrase
            runs.append(current)
            current = []
        if (
            low in STOPWORDS
            or low in VERBS
            or low in PRONOUNS
            or (len(low) < 2 and not low.isdigit())
        ):
            if current:
                runs.append(current)
            current = []
            continue
        current.append(word)
    if current:
        runs.append(current)
    weak = VAGUE | ASPECT_WORDS | REFERENTIAL
    trimmed = []
    for run in runs:
        while run and run[0].lower() in weak:
            run = run[1:]
        while run and run[-1].lower() in weak:
            run = run[:-1]
        if run:
            trimmed.append(run)
    return trimmed


_FRONTED = re.compile(r"^(?:in|for|with|on|using|within|when)\s+[^,]{1,60},\s*(.+)$", re.I | re.S)


def subject_of(text: str, background: str = "") -> str:
    """The main subject phrase of a question: its first content run, at most four words.

    Questions usually name their subject first ("How does asyncio.gather run tasks ..."), after
    any fronted scope ("In Rust, how does the borrow checker work?": borrow checker). With
    background text from the first search, a run the background never mentions gives way to the
    first one it does: a typo or an odd word should not title the whole plan.
    """
    fronted = _FRONTED.match(text.strip())
    runs = _phrases(_plain_subject(fronted.group(1) if fronted else text))
    if not runs:
        return ""
    chosen = runs[0]
    if background.strip():
        known = {_stem(t) for t in content_terms(background)}
        supported = [r for r in runs if sum(_stem(w) in known for w in r) * 2 >= len(r)]
        if supported and sum(_stem(w) in known for w in chosen) == 0:
            chosen = supported[0]
    return " ".join(chosen[:4])


#: "How tall ...": the measure asked for; "... hotter than Mercury": a comparison's measure and
#: what it is compared with. Neither names the subject (issue 48: "Overview of tall", "How thick
#: is Venus hotter's atmosphere").
_MEASURE = re.compile(rf"^\s*how\s+(?:{'|'.join(sorted(HOW_MEASURE))})\b", re.I)
_COMPARED = re.compile(r"\s+(?:(?:more|less)\s+)?[\w-]+\s+than\b.*$", re.I | re.S)


def _plain_subject(text: str) -> str:
    """The question without the measure it asks for or the comparison it makes, so its first
    content run is the thing asked about."""
    return _COMPARED.sub("", _MEASURE.sub("", text))


def _key_terms(about: AboutQuestion, limit: int = 6) -> list[str]:
    """The query's specific words (clarification answers included), for search and coverage.

    A follow-up is expanded with what it follows (contextual query expansion, as conversational
    search does): its own words first, verbs last, then up to half the list from the earlier
    question or point, so "Can I take it back?" is searched with "publish", "library" and
    "crates.io" from the question it follows, not as a question about taking things back.
    """
    question, answers = _question_and_qualifiers(about)
    if not about.follows_up.strip():
        return unique(_specific_terms(f"{question} {answers}"))[:limit]
    own = unique(_specific_terms(f"{question} {'; '.join(about.clarifications)}"))
    own = [t for t in own if t not in VERBS] + [t for t in own if t in VERBS]
    earlier = [
        t
        for t in unique(_specific_terms(about.follows_up))
        if t not in VERBS and t.lower() not in {o.lower() for o in own}
    ]
    taken = min(len(earlier), limit // 2) if own else limit
    return unique([*own[: limit - taken], *earlier[:taken]])[:limit]


def _focus(about: AboutQuestion, background: str = "") -> tuple[str, bool]:
    """(subject, whether it came from the clarification answers).

    A question with no subject of its own ("Use the approach from the paper") takes it from its
    clarification answers ("I meant the DAIL-SQL approach" → DAIL-SQL).
    """
    question, answers = _question_and_qualifiers(about)
    subject = subject_of(question, background)
    if (
        points_back(about)
        and len(subject.split()) < 2
        and not any(_is_name(w) for w in subject.split())
    ):
        # "Can I take it back ...": the subject is what the follow-up points back at.
        earlier = subject_of(about.follows_up, background)
        return (
            earlier if len(earlier.split()) >= 2 else " ".join(_key_terms(about)[-3:])
        ) or subject, True
    if answers and (not subject or not _specific_terms(question)):
        return subject_of(answers, background) or _clean_clause(answers), True
    return subject or " ".join(_specific_terms(question)[:3]) or _clean_clause(question), False


def _is_name(word: str) -> bool:
    """A name rather than a common word: capitalised, dotted, coded or with digits."""
    return word[:1].isupper() or any(c in word for c in "._`#") or any(c.isdigit() for c in word)


# --- its aspects: clauses, comparisons, enumerations ------------------------------------------------


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
    clauses = _split_clauses(question)
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


def _split_clauses(question: str) -> list[str]:
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
        head, prep, name = first.group(1), *first.group(2).split(None, 1)
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
