"""What a question asks: the question and its qualifiers, its subject, its key terms.

Every role that works on the research question (coordinator, query writer, planner, researcher,
reflector, synthesizer) starts from the same reading of it, so the reading lives here once: the
question as asked and what narrows it (what a follow-up refers to, the user's clarification
answers), the subject phrase that titles a plan, and the specific words that are searched for and
counted as covered. The aspects that several clauses, a comparison or an enumeration ask about
are read from it in aspects.py. Surface rules over words, tried in a stated order; no parser, no
model.
"""

from __future__ import annotations

import re

from activities.offline_engine.words import (
    _QUESTION_WORDS,
    _WORD,
    ASPECT_WORDS,
    DETERMINERS,
    HOW_MEASURE,
    NOUN_VERBS,
    PRONOUNS,
    REFERENTIAL,
    VAGUE,
    VERBS,
    _clean_clause,
    _specific_terms,
    _stem,
    _words,
    past_verb,
    third_person,
)
from workflows.activity_models import AboutQuestion
from workflows.kit.followup import POINTER_PATTERNS
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
    ("Tell me more about it" + "asyncio task cancellation": workflows/text/clarified.py), or, in a
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
    to a point of the earlier answer (workflows/kit/followup.py resolved it into `point`) is searched
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
    asked = _plain_subject(fronted.group(1) if fronted else text)
    runs = [_before_its_verb(run, asked) for run in _phrases(asked)]
    verb = _ASKED_BY_VERB.match(asked)
    if verb and past_verb(verb[1]) and runs and runs[0][0] == verb[1]:
        # "What caused the 1929 stock market crash?": the crash, not "caused".
        runs = [runs[0][1:], *runs[1:]] if len(runs[0]) > 1 else runs[1:] or runs
    if not runs:
        return ""
    chosen = runs[0]
    if background.strip():
        known = {_stem(t) for t in content_terms(background)}
        supported = [r for r in runs if sum(_stem(w) in known for w in r) * 2 >= len(r)]
        if supported and sum(_stem(w) in known for w in chosen) == 0:
            chosen = supported[0]
    return " ".join(chosen[:4])


#: "What caused ...", "Who discovered ...": the question's verb comes first, its subject after.
_ASKED_BY_VERB = re.compile(r"^\W*(?:what|who)\s+(\w+)\b", re.I)
_AUXILIARY = re.compile(r"^\W*(?:(?:how|why|when|where)\s+)?(?:did|does|do)\b", re.I)


def _before_its_verb(run: list[str], question: str) -> list[str]:
    """RUN up to the question's own verb: "How did the Fresnel lens change lighthouse range?"
    is about the Fresnel lens, not "Fresnel lens change lighthouse", and "Why did the Roman
    Empire fall?" about the Roman Empire. Such a verb follows the subject with more of the run
    after it, or ends the question; "How did climate change affect farming?" keeps its subject."""
    if not _AUXILIARY.match(question):
        return run
    last = re.findall(r"[\w'-]+", question)[-1:]
    for i, word in enumerate(run[1:], start=1):
        ends_question = i == len(run) - 1 and last == [word]
        if word.lower() in NOUN_VERBS and (i < len(run) - 1 or ends_question):
            return run[:i]
    return run


#: "How tall ...": the measure asked for; "... hotter than Mercury": a comparison's measure and
#: what it is compared with. Neither names the subject.
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
