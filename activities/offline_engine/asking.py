"""What a question asks of its subject: the thing it is about, and what it wants to know of it.

A sentence can share the question's words and still not answer it: for "Where should I put my
sourdough loaves after baking?", a page on oven temperatures names sourdough loaves and baking in
every sentence but never says where to put a loaf. So the engine reads a question as a subject
(the thing: "sourdough loaves") and an ask (what is wanted of it: the main verb and its object,
"put"), by the shape English questions take:

- `wh-word aux SUBJECT VERB OBJECT` ("How does Rust's borrow checker prevent data races?"): the
  subject is the words before the verb, the ask the verb and its object;
- `wh-word aux PERSON VERB OBJECT` ("How often should I feed a sourdough starter?"): the person
  is not the subject, the object is; the ask is the verb;
- `wh-word VERB OBJECT` ("What causes memory leaks?"): the object is the subject, the verb the ask;
- no verb ("What is ownership in Rust?", "Explain Python decorators"): a subject and no ask, so
  any sentence about the subject answers it.

A word is a verb when the vocabulary says so (words.VERBS), when it follows a person after an
auxiliary ("should I feed"), or when it is directly followed by a determiner ("feed a", "put my"):
a noun is not followed by "a". Phrases after a preposition ("after baking", "in Rust") qualify the
question and are neither subject nor ask. A sentence *answers* when it names a subject word and,
if there is an ask, one of the ask's words.
"""

from __future__ import annotations

from dataclasses import dataclass

from activities.offline_engine.aspects import decompose
from activities.offline_engine.questions import _plain_subject
from activities.offline_engine.words import (
    ASPECT_WORDS,
    HOW_MEASURE,
    NOUN_VERBS,
    PRONOUNS,
    VAGUE,
    VERBS,
    _base,
    _Matcher,
    _quote,
    _words,
    past_verb,
)
from workflows.kit.citations import escape
from workflows.text import STOPWORDS

_AUX = frozenset(
    "do does did can could should would will shall may might must is are was were am be has have had".split()
)
_COPULA = frozenset("is are was were am be".split())
_PERSONS = frozenset("i you we one people someone".split())
_DETERMINERS = frozenset(
    "a an the my your our their his her its this these those some any each every".split()
)
_PREPOSITIONS = frozenset(
    "after before during in on at for with without within into onto from to by of about under over between "
    "through across when while if than like via per".split()
)
#: Words that open a clause of their own ("decide which entries ...", "raise when ..."): the word
#: before one closes the main clause.
_CLAUSE_OPENERS = frozenset("which that whether how what why where who whom".split())
#: "How long", "how often", "how hot": the word after "how" is the measure asked for.
_HOW_MEASURE = HOW_MEASURE
_WH = frozenset(
    "what how why when where which who whom whose explain describe tell show list".split()
)


@dataclass(frozen=True)
class Ask:
    #: The thing the question is about, as typed ("sourdough loaves"); "" when it names none.
    subject: str
    #: Its content words, lower case.
    subject_terms: tuple[str, ...]
    #: What is wanted of it: the main verb and its object, lower case (empty: anything about it).
    ask_terms: tuple[str, ...]

    def answers(self, sentence: str) -> bool:
        """Whether a sentence names the subject and, when the question asks something of it, that."""
        if not self.subject_terms:
            return True
        return bool(self.names_subject(sentence)) and (
            not self.ask_terms or bool(self.asked_in(sentence))
        )

    def names_subject(self, sentence: str) -> list[str]:
        """The subject's words the sentence names. A dotted name is named by its own last part
        too: the documentation of `asyncio.timeout` says "when a timeout occurs", not the module
        (looking for the whole dotted name made a report deny what its findings said)."""
        names = [
            *self.subject_terms,
            *(t.rsplit(".", 1)[1] for t in self.subject_terms if "." in t),
        ]
        return _Matcher(names).found(sentence)

    def asked_in(self, sentence: str) -> list[str]:
        """The ask's words the sentence names (what a finding that answers says)."""
        return _Matcher(self.ask_terms).found(sentence)

    def missing(self, sentences: list[str]) -> list[str]:
        """The ask's words no sentence that names the subject mentions (all of them when none answers)."""
        if not self.ask_terms or any(self.answers(s) for s in sentences):
            return []
        return list(self.ask_terms)


def ask_of(question: str) -> Ask:
    """What the question asks, when its shape can be read (one clause, not a comparison or a list);
    else an ask that anything answers: several clauses are checked term by term instead."""
    if decompose(question).kind != "single":
        return Ask("", (), ())
    return read_ask(question)


def read_ask(question: str) -> Ask:
    """The subject and ask of a question's first clause (see the module's docstring)."""
    words = _words(_plain_subject(question.split("?")[0].split("\n")[0]))
    if len(words) >= 2 and words[0].lower() == "how" and words[1].lower() in _HOW_MEASURE:
        words = words[2:]  # "How long should ...": "long" is what is asked, not the subject
    lower = [w.lower() for w in words]
    verb = _main_verb(lower)
    if verb is None:
        subject = _content_run(words, 0)
        return Ask(" ".join(subject), tuple(_terms(subject)), ())
    before = [
        w
        for w in words[:verb]
        if w.lower() not in _WH | _AUX | STOPWORDS and w.lower() not in PRONOUNS
    ]
    after = _content_run(words, verb + 1)
    if _terms(before):
        return Ask(" ".join(before), tuple(_terms(before)), tuple(_terms([words[verb], *after])))
    return Ask(" ".join(after), tuple(_terms(after)), tuple(_terms([words[verb]])))


def _main_verb(lower: list[str]) -> int | None:
    """The index of the question's main verb (not an auxiliary), or None."""
    for i, word in enumerate(lower):
        if word in _AUX or word in STOPWORDS or word in _WH or word in PRONOUNS or word in _PERSONS:
            continue
        after_person = i >= 2 and lower[i - 1] in _PERSONS and lower[i - 2] in _AUX
        before_determiner = (
            i + 1 < len(lower) and lower[i + 1] in _DETERMINERS and word not in _PREPOSITIONS
        )
        # A code name ("itertools.groupby") is a whole noun phrase: after it, with an auxiliary
        # before, comes the verb ("How does itertools.groupby group ...").
        after_code_name = i >= 2 and "." in lower[i - 1].strip(".")
        if (
            word in VERBS
            or after_person
            or before_determiner
            or (i == 1 and lower[0] in ("what", "who") and past_verb(word))
            or _noun_verb_after_subject(lower, i)
            or (after_code_name and any(w in _AUX and w not in _COPULA for w in lower[:i]))
            or _closes_clause(lower, i)
        ):
            return i
    aux = next((w for w in lower[:2] if w in _AUX), "")
    if (
        len(lower) >= 4
        and aux
        and aux not in _COPULA
        and lower[-2] not in _PREPOSITIONS
        and lower[-1] not in STOPWORDS
    ):
        return (
            len(lower) - 1
        )  # "How long should a sourdough loaf bake": the verb closes the question
    return None


def _noun_verb_after_subject(lower: list[str], i: int) -> bool:
    """Word `i` is a verb that is a noun too (words.NOUN_VERBS), after a "do" auxiliary and a
    subject, with a noun phrase after it or ending the question: "How did the Fresnel lens change
    lighthouse range?", "Why did the Roman Empire fall?"; in "How did climate change affect
    farming?" a verb follows, so "change" is the subject's."""
    if lower[i] not in NOUN_VERBS or not any(w in ("do", "does", "did") for w in lower[:2]):
        return False
    subject = [
        w
        for w in lower[:i]
        if w not in _AUX and w not in _WH and w not in STOPWORDS and w not in PRONOUNS
    ]
    follows = lower[i + 1] if i + 1 < len(lower) else ""
    return bool(subject) and (not follows or (follows not in VERBS and follows not in STOPWORDS))


def _closes_clause(lower: list[str], i: int) -> bool:
    """Whether word `i` is the verb that closes a question's main clause: after a non-copula
    auxiliary and a subject, the word a phrase or a clause follows ("What does asyncio.timeout
    raise when ...", "Why does shutil.rmtree fail on ...", "decide which ..."). "Of" joins
    nouns ("the list of ..."), so it closes nothing."""
    aux = next((w for w in lower[:2] if w in _AUX), "")
    follows = lower[i + 1] if i + 1 < len(lower) else ""
    subject = [
        w
        for w in lower[:i]
        if w not in _AUX
        and w not in _WH
        and w not in STOPWORDS
        and w not in PRONOUNS
        and w not in _PERSONS
    ]
    return bool(
        aux
        and aux not in _COPULA
        and subject
        and (follows in _PREPOSITIONS or follows in _CLAUSE_OPENERS)
        and follows != "of"
        and lower[i] not in _PREPOSITIONS
    )


def _content_run(words: list[str], start: int) -> list[str]:
    """The noun phrase from `start`: content words (articles skipped before it), up to a preposition."""
    run: list[str] = []
    for word in words[start:]:
        low = word.lower()
        if low in _PREPOSITIONS or (run and low in VERBS):
            break
        if low in STOPWORDS or low in _WH or low in _AUX or low in PRONOUNS or low in _PERSONS:
            if run and low not in {"and", "or"}:
                break
            continue
        run.append(word)
    return run


def _terms(words: list[str]) -> list[str]:
    """The words that can name a thing: no filler, evaluations, facets or question words."""
    out = []
    for word in words:
        low = _base(word)
        if (
            low
            and low not in STOPWORDS
            and low not in VAGUE
            and low not in ASPECT_WORDS
            and low not in _WH
        ):
            out.append(low)
    return list(dict.fromkeys(out))


def subject_title(question: str) -> str:
    """The question's subject phrase when it names one ("sourdough loaves"), else ""."""
    ask = read_ask(question)
    return ask.subject if ask.subject_terms else ""


def unanswered(ask: Ask, findings: list[str]) -> str:
    """The offline summary's first line when no finding answers, true of every finding below
    it: none names the subject, or those that do say nothing of what was asked (a count of all
    the findings "about" the subject made the line deny what a finding about something else
    said)."""
    about = [f for f in findings if ask.names_subject(f)]
    subject = escape(ask.subject) or "the question's subject"
    if not about:
        said = (
            f"The one sentence found does not name {subject}"
            if len(findings) == 1
            else f"None of the {len(findings)} sentences found names {subject}"
        )
    else:
        asked = escape(_quote(ask.ask_terms) if ask.ask_terms else "the question's own terms")
        said = (
            f"The one sentence found about {subject} says nothing about {asked}"
            if len(about) == 1
            else f"None of the {len(about)} sentences found about {subject} says anything about {asked}"
        )
    return (
        f"**The sources read do not answer this question.** {said}; what was found is listed below."
    )
