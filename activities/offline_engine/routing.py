"""The `offline` engine: every research role by classic information retrieval, no LLM, no network.

It is the default when no LLM endpoint is configured, so `make demo` and the tests run anywhere.
It is an honest baseline, not a pretend LLM:

- **Rules, stated.** Each decision (route, coordinate, reflect) comes from a small rule over the
  words of the input, and its `reasoning` names the rule and the word or figure that fired it.
- **Extraction, not writing.** Observations and reports are sentences quoted from the sources read,
  ranked by BM25 (`workflows.text.bm25_scores`) and cited `[n]` with the source's id. Nothing is
  paraphrased, so nothing can be made up; the report says it was made offline, by extraction.
- **Pure.** Every method is a function of its input: no I/O, no clock, no randomness, and no
  iteration over sets where order reaches the output (string hashing differs between processes).
  BM25 scores are rounded before ranking so float noise can never reorder equal sentences.

Rule choices worth knowing (see each function's docstring for the why):

- Routing judges the *latest* message: a pronoun or a definite reference ("the paper") must be
  resolved inside it or by an earlier mention of the same noun, because the research runs on the
  message (plus clarification answers), not on the whole conversation. The exception the design
  asks for: "the second point" is resolved by a numbered list or sections in the previous answer.
- Planner `min_steps` / `max_steps` count NEW steps: the workflow has already subtracted the
  completed ones (as the OpenAI engine reads them too).
- An observation counts as evidence for the reflector only when it cites a source; "nothing was
  found" texts mention the query's words but cover nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from workflows.text import (
    STOPWORDS,
    bm25_scores,
    content_terms,
    split_paragraphs,
    split_sentences,
    tokenize,
    trim,
    unique,
)
from activities.offline_engine import checks as offline_checks
from workflows.models import (
    OBSERVATION_LIMIT,
    Claim,
    Complexity,
    Depth,
    Message,
    Passage,
    PlanStep,
    ReflectionDecision,
    RoutingDecision,
    Speaker,
    StepStatus,
    Verdict,
)
from workflows.activity_models import (
    ClarifyInput,
    ClarifyOutput,
    CoordinateInput,
    CoordinateOutput,
    CritiqueInput,
    CritiqueOutput,
    ObserveInput,
    ObserveOutput,
    PlanInput,
    PlanOutput,
    ReflectInput,
    ReflectOutput,
    ReviseClaimsInput,
    ReviseClaimsOutput,
    RouteInput,
    RouteOutput,
    StepDraft,
    SynthesizeInput,
    SynthesizeOutput,
    VerifyClaimsInput,
    VerifyClaimsOutput,
    WriteQueriesInput,
    WriteQueriesOutput,
)

# --- vocabulary -----------------------------------------------------------------------------------

#: Third-person pronouns and demonstratives that point outside a message when nothing else names
#: the subject ("Tell me more about it", "How does that work?").
PRONOUNS = ("it", "its", "this", "that", "these", "those", "they", "them", "their", "he", "she", "him", "her")

_PRONOUN_BASE = {"its": "it", "their": "they", "them": "they", "him": "he", "her": "she"}

#: Words that name no topic on their own: filler verbs, evaluations, placeholders. A message whose
#: content words are all of these (and aspect words) has no subject of its own.
VAGUE = frozenset(
    """approach approaches way ways thing things stuff one ones idea ideas option options solution
    solutions work works working worked mean means meant happen happens happened lot bit part parts
    kind sort information info detail details clarified difference differences compare compared
    comparison versus vs better best worse worst optimal ideal good great bad fast slow enough
    sufficient adequate acceptable big large small recommend recommended think ok okay yes thanks
    thank sure right wrong question answer something anything everything someone continue going
    again help elaborate expand i'm i've i'd we're you're let's more else""".split()
)

#: Facets of a subject: a question may ask for one ("its limitations") but they are not a subject.
ASPECT_WORDS = frozenset(
    """limitations limitation advantages advantage disadvantages disadvantage benefits benefit
    drawbacks drawback pros cons alternatives alternative examples example features feature
    performance history usage purpose meaning definition cost costs price requirements internals
    syntax overview summary tradeoffs trade-offs pitfalls problems issues implementation""".split()
)

#: Nouns that, after "the"/"that", point at something specific the reader must already know.
REFERENTIAL = frozenset(
    """paper papers study studies article articles approach approaches method methods technique
    techniques model models dataset datasets code snippet error errors bug bugs issue issues
    document documents doc docs book report author authors result results table figure chart
    graph example examples link video talk post blog library tool framework algorithm function
    project repo repository file one ones solution solutions idea ideas answer option options
    version problem survey benchmark experiment experiments findings source sources website site
    page tutorial course lecture slides proposal design setup config configuration script program
    system""".split()
)
#: Nouns whose referent is best identified by title, authors or link.
_PUBLICATIONS = frozenset(
    """paper papers study studies article articles document documents doc docs book report post
    blog video talk survey tutorial course lecture slides website site page source sources""".split()
)
#: Nouns whose referent is best shown by pasting it.
_PASTABLE = frozenset("code snippet error errors bug bugs issue issues file script program config configuration".split())

_SUPERLATIVES = ("best", "optimal", "ideal", "worst")
_COMPARATIVES = ("better", "worse")
#: Evaluations that need a target: "enough" for what, "fast" compared to what.
_SUFFICIENCY = ("enough", "sufficient", "adequate", "acceptable")
_TARGETLESS = (*_SUFFICIENCY, "good", "fast", "big", "large", "small", "slow")

#: Common verbs of questions: a subject phrase ends where one begins ("Rust's borrow checker | prevent").
VERBS = frozenset(
    """prevent prevents run runs work works handle handles affect affects compare compares differ
    differs make makes improve improves implement implements support supports create creates cause
    causes manage manages return returns store stores mean means help helps ensure ensures allow
    allows avoid avoids relate relates interact interacts behave behaves happen happens release
    released gave give gives perform performs execute executes schedule schedules guarantee
    guarantees protect protects compile compiles install define defines choose pick deploy reduce
    reduces increase increases achieve achieves enable enables provide provides produce produces
    solve solves call calls deal deals lead leads become becomes matter matters fit fits scale
    scales learn start stop fix configure get got made introduced introduce added changed removed
    replaced replace recommend recommended use uses used""".split()
)

#: Words that name the aspect a template step asks for: they steer the ranking of sentences
#: toward that aspect, but a sentence is not relevant for having them.
ASPECT_TEMPLATE_WORDS = frozenset(
    """definition purpose usage examples example limitations pitfalls mistakes alternatives
    comparison differences history changes practices guidelines mechanism trade-offs""".split()
)
#: Filler words of the planner's own templates and descriptions: they steer nobody's search.
TEMPLATE_WORDS = ASPECT_TEMPLATE_WORDS | frozenset(
    """works work best overview background standard way ways trying find what problem solves
    addressed documented documentation behind happens step key rules terms typical common patterns
    known edge cases error conditions options solve same compare introduced appeared changed across
    versions recommended sources say bears question research answer directly facts needed behaves
    used behaviour preferable other more broader related first search clarified practical worked
    involved affecting affect deprecations requested""".split()
)

_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
    "ninth": 9, "9th": 9, "tenth": 10, "10th": 10, "last": -1,
}
_ORDINAL_NOUNS = (
    r"(?:point|item|section|step|option|bullet|idea|one|part|answer|approach|example|paragraph|reason"
    r"|suggestion|entry|result|heading)s?"
)
_ORDINAL_REF = re.compile(rf"\b(?:the\s+)?({'|'.join(_ORDINALS)})\s+{_ORDINAL_NOUNS}\b", re.I)
_NUMBERED_REF = re.compile(r"\b(?:point|item|section|step|option|bullet|number|no\.)\s*#?(\d{1,2})\b", re.I)
_LIST_LINE = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+\S|^\s{0,3}#{1,6}\s+\S", re.M)

_DEFINITE = re.compile(
    r"\b(the|that|this|these|those)\s+"
    r"(?:(?:same|other|previous|above|earlier|last|original|mentioned|aforementioned|two|three|both|new|latest)\s+)?"
    r"([a-z]+)\b"
)
_QUALIFIER_PREPS = frozenset("of in on from by for called named about titled at with".split())

_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_'+#.-]*[A-Za-z0-9_+#]|[A-Za-z0-9_]")
_CLARIFIED = re.compile(r"\s*\(clarified:\s*(.*)\)\s*$", re.S)
_FOLLOW_UP = re.compile(r"\s*\(follow-up to:\s*(.*)\)\s*$", re.S)
_SIGNATURE = re.compile(r"^((?:async\s+|class\s+)?[A-Za-z_][\w.]*(?:\([^`]*?\))?)\s+[—–-]{1,2}\s+(\S.*)$")
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_CITED_END = re.compile(r"\[\d+(?:\s*,\s*\d+)*\][.!?]+[\"”')]*(?=\s|$)")
_QUESTION_WORDS = r"(?:what|how|why|when|where|which|who|whom|is|are|does|do|did|can|could|should|would|will)"

#: Observation size: a handful of sentences, each short enough to read.
MAX_OBSERVATION_SENTENCES = 5
MAX_SENTENCES_PER_SOURCE = 3
MAX_SENTENCE_CHARS = 400
#: Two sentences sharing this share of their words say the same thing.
NEAR_DUPLICATE = 0.6
#: Reflection thresholds.
COVERAGE_COMPLETE = 0.8
NOVELTY_LOW = 0.2
SUMMARY_SENTENCES = 3
DIRECT_ANSWER_SENTENCES = 5

DISCLAIMER = (
    "*Made offline by extractive methods (BM25 sentence ranking over the sources read), with no LLM: "
    "the findings above are sentences quoted from the sources they cite, not written or checked by a model. "
    "For written reports, configure an LLM: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local "
    "OpenAI-compatible server such as Ollama or vLLM.*"
)


# --- the engine -------------------------------------------------------------------------------------


class OfflineEngine:
    """One research role per method, same interface as the OpenAI engine; usage stays zero."""

    name = "offline"

    async def route(self, inp: RouteInput) -> RouteOutput:
        """Orchestrator layer 3 by rule. Layers 1–2 (limit, reply shortcut) are the workflow's."""
        latest, earlier = _split_conversation(inp.messages)
        if latest is None:
            return RouteOutput(decision=RoutingDecision.RESEARCH, reasoning="No user message to judge: research by default.")
        found = find_ambiguity(latest, earlier)
        if isinstance(found, Ambiguity):
            return RouteOutput(decision=RoutingDecision.CLARIFICATION, reasoning=found.reasoning)
        return RouteOutput(decision=RoutingDecision.RESEARCH, reasoning=found)

    async def clarify(self, inp: ClarifyInput) -> ClarifyOutput:
        """The question that names what the routing rule found missing."""
        latest, earlier = _split_conversation(inp.messages)
        found = find_ambiguity(latest, earlier) if latest is not None else None
        if isinstance(found, Ambiguity):
            return ClarifyOutput(question=found.question)
        terms = _specific_terms(latest or "")[:4]
        about = f' about "{" ".join(terms)}"' if terms else ""
        return ClarifyOutput(
            question=f"What exactly would you like to know{about}: which aspect, and for what purpose?"
        )

    async def coordinate(self, inp: CoordinateInput) -> CoordinateOutput:
        return classify(inp.topic_text())

    async def write_queries(self, inp: WriteQueriesInput) -> WriteQueriesOutput:
        return WriteQueriesOutput(queries=search_queries(inp.topic_text(), inp.step, inp.max_queries))

    async def plan(self, inp: PlanInput) -> PlanOutput:
        return make_plan(inp)

    async def observe(self, inp: ObserveInput) -> ObserveOutput:
        return observe_step(inp.topic_text(), inp.step, inp.passages)

    async def reflect(self, inp: ReflectInput) -> ReflectOutput:
        return reflect_on(inp)

    async def synthesize(self, inp: SynthesizeInput) -> SynthesizeOutput:
        return write_report(inp)

    async def verify_claims(self, inp: VerifyClaimsInput) -> VerifyClaimsOutput:
        return offline_checks.verify(inp)

    async def revise_claims(self, inp: ReviseClaimsInput) -> ReviseClaimsOutput:
        return offline_checks.revise(inp)

    async def critique(self, inp: CritiqueInput) -> CritiqueOutput:
        return offline_checks.critique(inp)


# --- words ------------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Word tokens as typed (case kept), for titles and phrases; same shape as `text.tokenize`."""
    return [m.group(0).rstrip(".") for m in _WORD.finditer(text)]


def _specific_terms(text: str) -> list[str]:
    """Content words that can name a subject: no filler, evaluations, aspects or pronouns."""
    return [t for t in content_terms(text) if t not in VAGUE and t not in ASPECT_WORDS and t not in PRONOUNS]


def _base(token: str) -> str:
    """Lower case without a possessive: `Rust's` and `rust` are one word."""
    token = token.lower()
    return token[:-2] if token.endswith(("'s", "’s")) else token


def _stem(token: str) -> str:
    """A plural-blind form for counting distinct words (novelty): `races` and `race` are one."""
    word = _base(token)
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


_ENDINGS = ("s", "es", "d", "ed", "ing", "er", "ers", "ly")


def _same_stem(a: str, b: str) -> bool:
    """Inflections of one word: `borrowing`~`borrow`, `tuples`~`tuple`; not `async`~`asyncio`."""
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 4 and long.startswith(short) and long[len(short) :] in _ENDINGS)


class _Matcher:
    """Maps a text's tokens onto query terms so BM25 and coverage see `races` as `race`.

    A dotted name also matches by its parts: `asyncio.gather` in the query finds `gather()`.
    """

    def __init__(self, terms: Iterable[str]) -> None:
        #: The terms as asked (possessives dropped), in order.
        self.terms = list(dict.fromkeys(_base(t) for t in terms if t))
        parts = [p for t in self.terms if "." in t for p in t.split(".") if len(p) > 1]
        #: The terms and the parts of dotted names: what BM25 ranks by.
        self.all_terms = list(dict.fromkeys([*self.terms, *parts]))
        self._memo: dict[str, str | None] = {}

    def match(self, token: str) -> str | None:
        if token not in self._memo:
            self._memo[token] = next((t for t in self.all_terms if _same_stem(token, t)), None)
        return self._memo[token]

    def tokens(self, text: str) -> list[str]:
        """The text's tokens, each matching token spelled as its query term."""
        out = []
        for token in tokenize(text):
            token = _base(token)
            out.append(self.match(token) or token)
            if "." in token:
                out.extend(self.match(p) or p for p in token.split(".") if p)
        return out

    def found(self, text: str) -> list[str]:
        """The query terms present in `text`, in query order (a dotted name: all its parts)."""
        present = set(self.tokens(text))
        out = []
        for term in self.terms:
            parts = [p for p in term.split(".") if len(p) > 1] if "." in term else []
            if term in present or (parts and all(p in present for p in parts)):
                out.append(term)
        return out


def _ranked(scores: Sequence[float]) -> list[int]:
    """Indices by score, best first; equal scores keep input order (rounded: no float noise)."""
    return sorted(range(len(scores)), key=lambda i: (-round(scores[i], 9), i))


def _near_duplicate(a: str, b: str) -> bool:
    """Sentences sharing most of their words (Jaccard over content words) say the same thing."""
    x, y = {_stem(t) for t in content_terms(a)}, {_stem(t) for t in content_terms(b)}
    if not x or not y:
        return a.strip().lower() == b.strip().lower()
    return len(x & y) / len(x | y) >= NEAR_DUPLICATE


def _quote(items: Iterable[str]) -> str:
    return ", ".join(f'"{i}"' for i in items)


# --- the question: what was asked, what was clarified, what it is about ----------------------------


def _split_clarified(query: str) -> tuple[str, str]:
    """(question, what qualifies it): the workflow appends the clarification answers as
    `(clarified: ...)` and, for a follow-up, what it refers to as `(follow-up to: ...)` before
    them. Both narrow the question the same way, so both come back as its qualifiers."""
    question, clarified, follow_up = _parts(query)
    return question, " ".join(p for p in (follow_up, clarified) if p)


def _parts(query: str) -> tuple[str, str, str]:
    """(question, clarification answers, follow-up context)."""
    clarified = follow_up = ""
    match = _CLARIFIED.search(query)
    if match:
        query, clarified = query[: match.start()], match.group(1).strip()
    match = _FOLLOW_UP.search(query)
    if match:
        query, follow_up = query[: match.start()], match.group(1).strip()
    return query.strip(), clarified, follow_up


def _clean_clause(text: str) -> str:
    return " ".join(text.split()).strip(" ?.!;,:")


def _end(text: str) -> str:
    """The text as a sentence: with final punctuation."""
    text = " ".join(text.split())
    return text if not text or text[-1] in ".?!" else f"{text}."


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _short(text: str, words: int = 12) -> str:
    """At most `words` words: step titles stay short."""
    parts = text.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


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
        if low in STOPWORDS or low in VERBS or low in PRONOUNS or (len(low) < 2 and not low.isdigit()):
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
    runs = _phrases(fronted.group(1) if fronted else text)
    if not runs:
        return ""
    chosen = runs[0]
    if background.strip():
        known = {_stem(t) for t in content_terms(background)}
        supported = [r for r in runs if sum(_stem(w) in known for w in r) * 2 >= len(r)]
        if supported and sum(_stem(w) in known for w in chosen) == 0:
            chosen = supported[0]
    return " ".join(chosen[:4])


def _key_terms(query: str, limit: int = 6) -> list[str]:
    """The query's specific words (clarification answers included), for search and coverage."""
    question, answers = _split_clarified(query)
    return unique(_specific_terms(f"{question} {answers}"))[:limit]


def _focus(query: str, background: str = "") -> tuple[str, bool]:
    """(subject, whether it came from the clarification answers).

    A question with no subject of its own ("Use the approach from the paper") takes it from its
    clarification answers ("I meant the DAIL-SQL approach" → DAIL-SQL).
    """
    question, answers = _split_clarified(query)
    subject = subject_of(question, background)
    if answers and (not subject or not _specific_terms(question)):
        return subject_of(answers, background) or _clean_clause(answers), True
    return subject or " ".join(_specific_terms(question)[:3]) or _clean_clause(question), False


# --- routing: ambiguity rules -----------------------------------------------------------------------


@dataclass(frozen=True)
class Ambiguity:
    """A rule that fired: what it found, why research would go wrong, and what to ask."""

    rule: str
    trigger: str
    reasoning: str
    question: str


def _split_conversation(messages: list[Message]) -> tuple[str | None, list[Message]]:
    """(latest user message, the messages before it)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role is Speaker.USER:
            return messages[i].content, messages[:i]
    return None, list(messages)


def find_ambiguity(message: str, earlier: list[Message]) -> Ambiguity | str:
    """The first ambiguity rule that fires on `message`, or the reasoning for RESEARCH.

    Rules in order: ordinal reference, pronoun, definite reference, superlative/comparative
    without scope, evaluation without target, no subject at all. Only the ordinal rule reads the
    earlier conversation's structure; the definite-reference rule reads it for an antecedent.
    Every rule but the last stays silent when the message carries enough specific words of its
    own: a normal question must never be asked back.
    """
    text = " ".join(message.split())
    specific = _specific_terms(text)
    for rule in (_ordinal_rule, _pronoun_rule, _definite_rule, _scope_rule, _target_rule, _subject_rule):
        found = rule(text, specific, earlier)
        if found is not None:
            return found
    return _research_reasoning(text, specific)


def _ordinal_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | str | None:
    """"The second point" is resolved by the previous answer's numbered items or sections.

    Returns the RESEARCH reasoning (a str) when it resolves. A message with two specific words
    besides the ordinal phrase is self-contained ("the first step to install Rust").
    """
    match = _ORDINAL_REF.search(text)
    index = _ORDINALS.get(match.group(1).lower()) if match else None
    if match is None:
        numbered = _NUMBERED_REF.search(text)
        if numbered is None:
            return None
        match, index = numbered, int(numbered.group(1))
    phrase = match.group(0)
    own = [t for t in specific if t not in _ORDINALS and not re.fullmatch(_ORDINAL_NOUNS, t) and not t.isdigit()]
    if len(own) >= 2:
        return None
    previous = next((m.content for m in reversed(earlier) if m.role is Speaker.ASSISTANT), "")
    items = len(_LIST_LINE.findall(previous))
    if items and (index == -1 or 1 <= (index or 0) <= items):
        which = "the last" if index == -1 else f"item {index}"
        return (
            f'Ordinal reference "{phrase}" resolves to {which} of the {items} numbered items or sections '
            "in the previous answer."
        )
    if items:
        why = f"the previous answer has only {items} items"
    else:
        why = "there is no numbered list or section before it to count in"
    return Ambiguity(
        rule="ordinal",
        trigger=phrase,
        reasoning=f'Ordinal reference "{phrase}" cannot be resolved: {why}.',
        question=f'Which list is "{phrase}" from? Could you name that point or paste it?',
    )


def _pronoun_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | str | None:
    """A pronoun in a message that names nothing else points outside it ("Tell me more about it").

    In a follow-up (an earlier question of the user's that was answered) the pronoun refers to
    that question's subject, and the message is clear; returns the RESEARCH reasoning then. An
    assistant message alone (seed 000's "Tell me more about it" after a remark on RAG) is no
    antecedent: the user never said what they were asking about.
    """
    if specific:
        return None
    pronoun = next((t for t in tokenize(text) if t in PRONOUNS), None)
    if pronoun is None:
        return None
    antecedent = _answered_subject(earlier)
    if antecedent:
        return (
            f'Pronoun "{pronoun}" refers to "{antecedent}", the subject of the earlier question '
            "that the previous answer covered."
        )
    return Ambiguity(
        rule="pronoun",
        trigger=pronoun,
        reasoning=f'Pronoun "{pronoun}" has no antecedent in the message, which names no subject of its own.',
        question=(
            f'What does "{_PRONOUN_BASE.get(pronoun, pronoun)}" refer to, '
            "and which aspect of it would you like to know more about?"
        ),
    )


def _answered_subject(earlier: list[Message]) -> str:
    """The subject of the latest user question in `earlier` that an assistant message answered."""
    for i in range(len(earlier) - 1, -1, -1):
        message = earlier[i]
        if message.role is Speaker.USER and _specific_terms(message.content):
            answered = any(m.role is Speaker.ASSISTANT for m in earlier[i + 1:])
            return subject_of(message.content) if answered else ""
    return ""


def _definite_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | None:
    """"The paper" with no name, no qualifier and no earlier mention cannot be looked up.

    A definite noun phrase is resolved when a name follows it ("the book Rust in Action"), when a
    preposition introduces a specific word ("the approach of DAIL-SQL"), when the same noun appears
    earlier in the conversation, or when the message has two other specific words to research
    ("the method resolution order in Python"). The last unresolved one is reported: in "the
    approach from the paper", the paper is what the approach depends on.
    """
    anchors = [t for t in specific if t not in REFERENTIAL and t not in VERBS]
    if len(anchors) >= 2:
        return None
    earlier_words = {_stem(t) for m in earlier for t in tokenize(m.content)}
    unresolved: list[str] = []
    for match in _DEFINITE.finditer(text.lower()):
        noun = match.group(2)
        if noun not in REFERENTIAL:
            continue
        if _qualified(text[match.end() :]) or _stem(noun) in earlier_words:
            continue
        unresolved.append(noun)
    if not unresolved:
        return None
    noun = unresolved[-1]
    phrase = f"the {noun}"
    if noun in _PUBLICATIONS:
        question = f"Which {noun} do you mean? Could you give its title, authors or a link?"
    elif noun in _PASTABLE:
        question = f"Which {noun} do you mean? Could you paste it or say where it occurs?"
    else:
        question = f"Which {noun} do you mean? Could you name it or say where it was described?"
    return Ambiguity(
        rule="definite reference",
        trigger=phrase,
        reasoning=(
            f'Definite reference "{phrase}" has no antecedent in the conversation '
            "and nothing in the message identifies it."
        ),
        question=question,
    )


def _is_name(word: str) -> bool:
    return word[:1].isupper() or any(c.isdigit() for c in word) or "." in word or word[:1] in "\"'`“"


def _qualified(rest: str) -> bool:
    """Whether the words right after a definite noun name it: a name, or a preposition + a name
    or specific word ("of DAIL-SQL", "by Zhang")."""
    words = [w.rstrip(".") for w in re.findall(r"[\"'`“]?[A-Za-z0-9_][A-Za-z0-9_'+#.-]*", rest)[:4]]
    if not words:
        return False
    if _is_name(words[0]):
        return True
    if words[0].lower() in _QUALIFIER_PREPS:
        return any(
            _is_name(w) or (w.lower() not in STOPWORDS and w.lower() not in REFERENTIAL and w.lower() not in VAGUE)
            for w in words[1:]
        )
    return False


def _scope_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | None:
    """"Best" needs a problem and a measure; "better" needs something to compare with.

    A superlative is scoped by any specific word ("the best approach for text-to-SQL"); a
    comparative by "than/vs/or/for ..." or by two specific words ("how can I better understand
    lifetimes" is not a comparison).
    """
    words = tokenize(text)
    superlative = next((w for w in words if w in _SUPERLATIVES), None)
    if superlative and not specific:
        return Ambiguity(
            rule="superlative without scope",
            trigger=superlative,
            reasoning=f'Superlative "{superlative}" has no scope: {superlative} for what problem, and by which measure?',
            question=(
                f"{_capitalize(superlative)} for what problem, and by which measure "
                "(for example accuracy, speed or cost)?"
            ),
        )
    comparative = next((w for w in words if w in _COMPARATIVES), None)
    has_target = any(w in ("than", "vs", "versus", "or", "compared", "compare", "between", "over", "for") for w in words)
    if comparative and not has_target and len(specific) < 2:
        return Ambiguity(
            rule="comparative without target",
            trigger=comparative,
            reasoning=f'Comparative "{comparative}" has nothing to compare with: {comparative} than what, and for what?',
            question=f"{_capitalize(comparative)} than what, and for which use (for example accuracy, speed or cost)?",
        )
    return None


def _target_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | None:
    """An evaluation that ends the question ("... are enough?", "Is Python fast?") has no target.

    Sufficiency ("enough", "sufficient") always needs one; a plain adjective ("fast", "good") only
    when the message names at most one thing ("How do I make a program that runs fast?" is fine).
    Context does not supply a target: "I'm working on classification" says the task, not the
    accuracy that would make a number of examples enough.
    """
    words = tokenize(text)
    if not words or words[-1] not in _TARGETLESS:
        return None
    word = words[-1]
    if re.search(r"\b(for|to|than|compared|versus|vs)\s+\S", text.lower()):
        return None
    if word not in _SUFFICIENCY and len(specific) >= 2:
        return None
    return Ambiguity(
        rule="evaluation without target",
        trigger=word,
        reasoning=f'"{_capitalize(word)}" has no target: {word} for what goal, measured how?',
        question=(
            f"{_capitalize(word)} for what goal? Which target (for example an accuracy, a speed or a size) "
            "should be reached, and in what setting?"
        ),
    )


def _subject_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | None:
    """A message whose words are all filler ("What should I do?", "The implementation details")."""
    if specific:
        return None
    said = _clean_clause(text)[:60]
    return Ambiguity(
        rule="no subject",
        trigger=said,
        reasoning=f'The message names no subject: "{said}" has no content word that could be researched.',
        question="What topic should I research? Could you name the subject and what you want to know about it?",
    )


def _research_reasoning(text: str, specific: list[str]) -> str:
    """Why the message can be researched: the names and concrete terms it gives."""
    words = _words(text)
    names = unique(
        w for i, w in enumerate(words)
        if (i > 0 and w[:1].isupper()) or any(c.isdigit() for c in w) or ("." in w or "_" in w)
    )
    names = [n for n in names if n.lower() not in STOPWORDS][:4]
    named = {n.lower() for n in names}
    concrete = unique(t for t in specific if t not in named)[:4]
    parts = []
    if names:
        parts.append(f"names {_quote(names)}")
    if concrete:
        parts.append(f"concrete terms {_quote(concrete)}")
    return f"Specific question ({'; '.join(parts)}): no unresolved pronoun or reference, no missing scope."


# --- coordinator ------------------------------------------------------------------------------------


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


_FACT = re.compile(
    r"^(?:what(?:'s|\s+is|\s+are|\s+was|\s+were)|what\s+does\s.*\b(?:mean|stand\s+for)|who|when|where|which|define|"
    r"how\s+(?:many|much|old|long|big))\b",
    re.I,
)
_EXPLANATION = re.compile(r"^(?:how(?!\s+(?:many|much|old|long|big)\b)|why|explain|describe)\b", re.I)


DEPTH_FOR = {Complexity.SIMPLE: Depth.LIGHT, Complexity.MODERATE: Depth.MEDIUM, Complexity.COMPLEX: Depth.EXTENDED}


def classify(query: str) -> CoordinateOutput:
    """Complexity from the number of aspects, comparisons, questions and length.

    - simple: one aspect, at most 8 content words, not a how/why explanation;
    - moderate: two or three aspects, a comparison of two, a how/why explanation, or > 8 words;
    - complex: four or more aspects, three-way comparisons, three or more questions, > 20 words.
    `is_simple` (a direct answer, no plan) is for single-fact questions: "What is X?", "Who ...?".
    """
    question, _ = _split_clarified(query)
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
    found = f"{aspects} aspect(s) by {parts.kind}" + (f" ({'; '.join(parts.items)})" if aspects > 1 else "")
    shape = "a single-fact question" if is_simple else ("a how/why explanation" if explanation else "")
    reasoning = (
        f"Rule-based: {found}, {n_words} content word(s), {n_questions} question mark(s)"
        + (f", {shape}" if shape else "")
        + f" → {complexity.value}, depth {depth.value}"
        + ("; answered directly from a quick search." if is_simple else ".")
    )
    return CoordinateOutput(complexity=complexity, is_simple=is_simple, recommended_depth=depth, reasoning=reasoning)


def decompose(question: str) -> Decomposition:
    """Split a question into aspects: several clauses, a comparison, an enumeration, or one.

    Surface rules, tried in order: clauses joined by "?", ";" or "and"/"," + a question word
    (each with two content words at least); "X vs Y", "difference between X and Y", "compare X
    and/with Y", "X compares to Y"; "A, B and C" where each item is at most four content words;
    otherwise the question is one aspect.
    """
    clauses = _split_clauses(question)
    if len(clauses) >= 2:
        first = _comparison(clauses[0])
        subject = first.subject if first else subject_of(clauses[0])
        items = [_resolve_pronouns(c, subject) if i else c for i, c in enumerate(clauses)]
        return Decomposition("clauses", items, subject=subject)
    text = _clean_clause(question)
    return _comparison(text) or _enumeration(text) or Decomposition("single", [text] if text else [])


def _split_clauses(question: str) -> list[str]:
    """The question's clauses; a fragment with fewer than two content words ("In Rust,") joins
    the clause after it."""
    parts = re.split(r"\?+|;|(?<=[a-z0-9)])\.\s+(?=[A-Z])", question)
    pieces: list[str] = []
    for part in parts:
        pieces.extend(re.split(rf",?\s+and\s+(?={_QUESTION_WORDS}\b)|,\s+(?={_QUESTION_WORDS}\b)", part, flags=re.I))
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
    """"... and what are its limitations" → "what are Rust's borrow checker's limitations"."""
    if not subject:
        return clause
    owner = subject + ("'" if subject.endswith("s") else "'s")
    clause = re.sub(r"\b(its|their)\b", owner, clause, flags=re.I)
    clause = re.sub(r"\b(each|either|both)\b(?!\s+of\b)", rf"\1 of {subject}", clause, flags=re.I)
    return re.sub(r"\b(it|they|them)\b", subject, clause, flags=re.I)


_VS = re.compile(r"\s+(?:vs\.?|versus|compared\s+(?:to|with))\s+", re.I)
_BETWEEN = re.compile(r"\b(?:differences?|distinction|comparison)\s+between\s+(.+?)\s+and\s+(.+)$", re.I)
_COMPARE = re.compile(r"\bcompare\s+(?!(?:to|with|against)\b)(.+?)\s+(?:and|with|to|vs\.?|versus)\s+(.+)$", re.I)
_COMPARES_TO = re.compile(r"^(.+?)\s+(?:compares?|differs?)\s+(?:to|with|from|against)\s+(.+)$", re.I)
_SCOPE = re.compile(r"^(.*?\S)\s+((?:in|for|with|on|under|when|within|using)\s+.+)$", re.I)


def _comparison(text: str) -> Decomposition | None:
    match = _BETWEEN.search(text) or _COMPARES_TO.search(text) or _COMPARE.search(text)
    if match:
        raw = [*match.group(1).split(","), match.group(2)]
    elif re.search(r"\b(?:better|worse|prefer|choose|pick|which|should|use)\b", text, re.I) and re.search(r"\sor\s", text):
        # A choice: "Which is better, Rust or Go?", "Which is better for web servers: Rust or Go?"
        frame, _, options = text.rpartition(":")
        choice = _enumeration(options.strip())
        if choice is None or len(choice.items) < 2:
            return None
        framed = re.search(r"\b((?:for|in|with|on|when)\s+.+)$", frame, re.I)
        scope = choice.scope or (framed.group(1) if framed else "")
        return Decomposition("comparison", choice.items, scope, subject=_join(choice.items) + (f" {scope}" if scope else ""))
    elif _VS.search(text):
        raw = _VS.split(text)
        first = _words(raw[0])
        # "asyncio gather vs wait": the shared head word carries over to the short item.
        raw = [raw[0]] + [
            " ".join(first[:-1] + [r]) if len(first) > 1 and len(_words(r)) == 1 and not _SCOPE.match(r) else r
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
    return Decomposition("comparison", items, scope, subject=_join(items) + (f" {scope}" if scope else ""))


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
    """"lists, tuples and sets in Python": items of at most four content words, a shared scope.

    Not an enumeration when a later piece starts a question ("..., how does ...") or the first
    starts with a preposition ("In Rust, ...").
    """
    pieces = [p for p in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+", text) if p.strip()]
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
        return Decomposition("enumeration", [f"{head} {prep} {n}" for n in names], subject=f"{head} {prep} {_join(names)}")
    items = unique(items)
    return Decomposition("enumeration", items, scope, subject=_join(items) + (f" {scope}" if scope else ""))


def _join(items: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# --- search queries ---------------------------------------------------------------------------------


def search_queries(query: str, step: PlanStep | None, max_queries: int) -> list[str]:
    """Background: the question itself, then its keywords. A step: its title with the question's
    subject, then the step's keywords with the question's key terms. Deduplicated, never empty."""
    limit = max(1, max_queries)
    question, answers = _split_clarified(query)
    key = _key_terms(query)
    if step is None:
        candidates = [f"{question} {answers}".strip(), " ".join(key)]
    else:
        title = _clean_clause(step.title)
        missing = [t for t in key[:4] if t not in VERBS and not _Matcher([t]).found(title)][:2]
        step_terms = [t for t in content_terms(f"{step.title} {step.description}") if t not in TEMPLATE_WORDS]
        candidates = [
            " ".join([title, *missing]),
            " ".join(unique([*step_terms[:6], *key[:3]])),
        ]
    queries = unique(trim(" ".join(c.split()), 300) for c in candidates if c.strip())
    return queries[:limit] or [trim(_clean_clause(query), 300) or query]


# --- planner ----------------------------------------------------------------------------------------

#: Aspect templates for a subject X, in the order they are added.
ENTITY_TEMPLATES = (
    ("definition", "Definition and purpose of {x}",
     "The definition of {x}: what problem is addressed, and where the documentation is."),
    ("how", "How {x} {works}", "The mechanism behind {x}: what happens step by step, and the key rules and terms."),
    ("usage", "Usage and examples of {x}", "Practical use of {x}: typical code or usage examples and common patterns."),
    ("limits", "Limitations and pitfalls of {x}",
     "Known limitations, common mistakes, edge cases and error conditions of {x}."),
    ("alternatives", "Alternatives to {x}", "Other options that solve the same problem as {x}, and how they compare."),
    ("history", "History and changes of {x}", "When {x} appeared and what changed across versions."),
    ("practices", "Best practices for {x}", "Recommended practices and guidelines for using {x} well."),
)
#: For "How do I ..." questions the subject is a task, not a thing.
TASK_TEMPLATES = (
    ("standard", "Standard way to {x}",
     "The documented, recommended way to {x}: which functions, types or commands to use."),
    ("usage", "Examples of how to {x}", "Worked examples that {x}, with the code or commands involved."),
    ("limits", "Pitfalls when trying to {x}",
     "Common mistakes, edge cases and errors when trying to {x}, and how to avoid them."),
    ("alternatives", "Other ways to {x}", "Alternative ways to {x} and when each is preferable."),
    ("history", "Changes affecting how to {x}", "Version changes and deprecations that affect how to {x}."),
)
_TASK = re.compile(r"^how\s+(?:do|can|should|would|could)\s+(?:i|you|we|one)\s+(.+)$|^how\s+to\s+(.+)$", re.I)
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")


def make_plan(inp: PlanInput) -> PlanOutput:
    """First plan: one step per aspect, then templates up to the minimum. Replan: only new steps,
    for the feedback's uncovered terms first, never repeating a completed step's title."""
    question, _ = _split_clarified(inp.topic_text())
    room = max(0, inp.max_steps)
    wanted = min(max(1, inp.min_steps), room) if room else 0
    candidates, how = _candidate_steps(inp.topic_text(), inp.background)
    if not inp.completed_steps:
        steps = _fit([c for c in candidates if c.origin == "aspect"], room)
        templates = [c for c in candidates if c.origin == "template"]
        steps += templates[: max(0, wanted - len(steps))]
        drafts = [StepDraft(title=c.title, description=c.description) for c in steps]
        thought = (
            f"Rule-based decomposition: {how}; "
            f"{sum(c.origin == 'template' for c in steps)} template step(s) added to reach the minimum of {inp.min_steps}."
        )
        return PlanOutput(title=f"Research plan: {_short(question, 14)}", thought=thought, steps=drafts)
    return _replan(inp, candidates, room, wanted)


@dataclass(frozen=True)
class _Candidate:
    title: str
    description: str
    origin: str  # "aspect", "template" or "feedback"


def _candidate_steps(query: str, background: str) -> tuple[list[_Candidate], str]:
    """Every step the question suggests, aspects first, with a sentence saying how they were found."""
    question, answers = _split_clarified(query)
    subject, from_answers = _focus(query, background)
    parts = decompose(question)
    related = _related_terms(background, query)
    context = f" Related terms from the first search: {', '.join(related)}." if related else ""
    clarified = f" The user clarified: {answers}." if answers else ""
    aspects: list[_Candidate] = []
    skip: set[str] = set()
    scope = f" {parts.scope}" if parts.scope else ""
    if parts.kind == "comparison":
        for item in parts.items:
            others = _join([i for i in parts.items if i != item])
            they = _plural(item)
            aspects.append(_Candidate(
                _short(f"{item}{scope}"),
                f"What {item} {'are' if they else 'is'}, how {'they behave' if they else 'it behaves'} and when "
                f"{'they are' if they else 'it is'} used{scope}: the facts needed to compare "
                f"{'them' if they else 'it'} with {others}.",
                "aspect",
            ))
        aspects.append(_Candidate(
            _short(f"Comparison of {parts.subject}"),
            f"Differences between {parts.subject}: behaviour, performance, typical use and trade-offs.",
            "aspect",
        ))
        skip = {"alternatives", "definition", "how"}
        how = f"a comparison of {_quote(parts.items)}, one step each plus a comparison step"
    elif parts.kind in ("clauses", "enumeration"):
        for item in parts.items:
            aspects.append(_Candidate(
                _capitalize(_short(f"{item}{scope}")),
                f"Find what the sources say about {item}{scope}, as part of the question: {_end(question)}{clarified}",
                "aspect",
            ))
        skip = {"how"} if parts.kind == "enumeration" else set()
        how = f"{len(parts.items)} {'clauses' if parts.kind == 'clauses' else 'enumerated items'} ({_quote(parts.items)})"
    else:
        title = _capitalize(_short(parts.items[0] if parts.items else question))
        if from_answers:
            title = _short(f"{title} ({subject})", 16)
        aspects.append(_Candidate(title, f"Answer the question directly: {_end(question)}{clarified}", "aspect"))
        opening = title.lower()
        if opening.startswith("how"):
            skip = {"how"}
        elif re.match(r"what(?:'s|\s+is|\s+are)\b", opening):
            skip = {"definition"}
        how = "one aspect (the question as asked)"
    if parts.subject and not from_answers:
        subject = parts.subject
    elif parts.kind == "single" and not from_answers:
        subject = _with_scope(subject, _clean_clause(question))
    if aspects:
        aspects[0] = _Candidate(aspects[0].title, aspects[0].description + context, aspects[0].origin)
    task = _TASK.match(_clean_clause(question)) if parts.kind == "single" else None
    if task:
        x = _short(task.group(1) or task.group(2), 8)
        templates = [(t.format(x=x), d.format(x=x)) for k, t, d in TASK_TEMPLATES if k != "standard"]
    else:
        works = "work" if _plural(subject) else "works"
        templates = [
            (t.format(x=subject, works=works), d.format(x=subject)) for k, t, d in ENTITY_TEMPLATES if k not in skip
        ]
    extra = [_Candidate(_short(t, 16), d, "template") for t, d in templates]
    return _distinct([*aspects, *extra]), how


def _with_scope(subject: str, clause: str) -> str:
    """"ownership" + "What is ownership in Rust" → "ownership in Rust": templates keep the scope."""
    fronted = _FRONTED.match(clause)
    if fronted:
        scope = clause[: clause.index(",")].strip()
    else:
        tail = _SCOPE.match(clause)
        scope = tail.group(2) if tail and not tail.group(2).lower().startswith("when") else ""
    if not scope or not subject:
        return subject
    prep, _, rest = scope.partition(" ")
    if rest.lower() in subject.lower():
        return subject
    return f"{subject} {prep.lower()} {rest}"


def _plural(phrase: str) -> bool:
    """"Python decorators", "list and tuple": plural; "asyncio.gather", "Rust's borrow checker": not."""
    words = phrase.lower().split()
    if not words:
        return False
    last = words[-1]
    if " and " in f" {phrase.lower()} " and not re.search(r"\b(?:in|for|with|on|under|when|within|using)\b", phrase.lower()):
        return True
    return last.endswith("s") and not last.endswith(("ss", "us", "is", "'s")) and "." not in last and len(last) > 3


def _distinct(candidates: list[_Candidate]) -> list[_Candidate]:
    seen: list[str] = []
    out = []
    for c in candidates:
        if c.title.lower() not in seen:
            seen.append(c.title.lower())
            out.append(c)
    return out


def _fit(aspects: list[_Candidate], room: int) -> list[_Candidate]:
    """At most `room` aspects: the first ones, and the comparison step if there is one."""
    if len(aspects) <= room:
        return aspects
    if room >= 2 and aspects[-1].title.startswith("Comparison of"):
        return [*aspects[: room - 1], aspects[-1]]
    return aspects[:room]


def _related_terms(background: str, query: str, limit: int = 3) -> list[str]:
    """The background's most frequent content words that the query does not already use."""
    if not background.strip():
        return []
    asked = {_stem(t) for t in content_terms(query)}
    counts = Counter(
        t for t in content_terms(background)
        if _stem(t) not in asked and t not in VAGUE and not any(c.isdigit() for c in t) and len(t) > 2
    )
    return [t for t, n in counts.most_common() if n >= 2][:limit]


def _replan(inp: PlanInput, candidates: list[_Candidate], room: int, wanted: int) -> PlanOutput:
    """New steps only: those covering the feedback first, then unused aspects and templates."""
    question, _ = _split_clarified(inp.topic_text())
    done_titles = {s.title.strip().lower() for s in inp.completed_steps}
    done_terms = [{_stem(t) for t in content_terms(s.title)} for s in inp.completed_steps]
    focus = _feedback_terms(inp.feedback)

    def repeats(c: _Candidate) -> bool:
        terms = {_stem(t) for t in content_terms(c.title)}
        return c.title.strip().lower() in done_titles or any(terms and terms <= d for d in done_terms)

    fresh = [c for c in candidates if not repeats(c)]
    covering: list[_Candidate] = []
    for term in focus:
        # A step whose title names the term, else one whose description does, else a new one.
        hit = next((c for c in fresh if c not in covering and _Matcher([term]).found(c.title)), None) or next(
            (c for c in fresh if c not in covering and _Matcher([term]).found(c.description)), None
        )
        if hit is None:
            hit = _Candidate(
                f"More on {term}",
                f'Find what the sources say about "{term}" as it bears on the question: {question}.',
                "feedback",
            )
            if repeats(hit):
                continue
        covering.append(hit)
    rest = [c for c in fresh if c not in covering]
    count = max(wanted, min(len(covering), room))
    steps = [*covering, *rest][:count]
    if not steps and room:
        fallback = _Candidate(
            f"Further sources on {_short(question, 8)}",
            f"Other sources that answer the question: {question}.",
            "feedback",
        )
        steps = [] if repeats(fallback) else [fallback]
    drafts = [StepDraft(title=c.title, description=c.description) for c in steps]
    why = f"the uncovered terms {_quote(focus)}" if focus else "aspects not yet researched"
    thought = (
        f"Replanning (iteration {inp.iteration}): {len(drafts)} new step(s) for {why}; "
        f"the {len(inp.completed_steps)} completed step(s) are kept and not repeated."
    )
    return PlanOutput(title=f"Research plan: {_short(question, 14)}", thought=thought, steps=drafts)


_FEEDBACK_FILLER = frozenset("step steps uncovered aspects aspect query term terms".split())


def _feedback_terms(feedback: list[str]) -> list[str]:
    """What the feedback asks to cover: quoted terms, else its specific words."""
    terms: list[str] = []
    for item in feedback:
        quoted = _QUOTED.findall(item)
        if quoted:
            terms.extend(q.strip() for q in quoted)
        else:
            terms.extend(
                t for t in _specific_terms(item)
                if t not in TEMPLATE_WORDS and t not in _FEEDBACK_FILLER and not t.isdigit()
            )
    return unique(terms)[:5]


# --- researcher -------------------------------------------------------------------------------------


def observe_step(query: str, step: PlanStep, passages: list[Passage]) -> ObserveOutput:
    """The step's best sentences, each cited with its source id; a loop-back request (seed 003)
    when fewer than two relevant sentences were found, asking the researcher for a broader step.

    Ranking: sentences naming more of the step title's own words first, then BM25 over the step's
    subject words, the question's key terms, the aspect the step asks for ("limitations") and its
    description's words. Relevance: a sentence must name one of the step title's own words and
    two core terms (step subject and question terms; one if there is only one), so words that merely
    came with the step (related terms, aspect words) never make an off-topic sentence relevant. One
    of the two may come from the source's title: a page titled "asyncio.tasks" need not repeat
    "asyncio" in its sentence about `gather()`.
    """
    broader = _broader(step, query)
    if not passages:
        return ObserveOutput(
            observation=f'No sources were found for "{step.title}".',
            source_ids=[],
            needs_more=True,
            suggested_agent="researcher",
            suggested_query=broader,
        )
    own_terms = _title_terms(step.title)
    core = [*own_terms, *_key_terms(query)]
    asked = [t for t in content_terms(f"{step.title} {step.description}") if t in ASPECT_TEMPLATE_WORDS]
    extra = [t for t in content_terms(step.description) if t not in TEMPLATE_WORDS]
    matcher = _Matcher([*core, *asked, *extra])
    core_terms = set(_Matcher(core).all_terms)
    title_terms = set(_Matcher(own_terms).all_terms) or core_terms
    sentences = [(p.source_id, s) for p in passages for s in _prose_sentences(p.text)]
    tokenized = [matcher.tokens(s) for _, s in sentences]
    in_title = {p.source_id: core_terms.intersection(matcher.tokens(p.title)) for p in passages}
    scores = bm25_scores(matcher.all_terms, tokenized)
    needed = min(2, len(core_terms))
    chosen: list[tuple[int, str]] = []
    per_source: Counter[int] = Counter()
    relevant = 0
    length = 0
    on_topic = [len(title_terms.intersection(t)) for t in tokenized]
    for i in sorted(range(len(sentences)), key=lambda i: (-on_topic[i], -round(scores[i], 9), i)):
        own = core_terms.intersection(tokenized[i])
        if scores[i] <= 0 or not on_topic[i] or len(own | in_title[sentences[i][0]]) < needed:
            continue
        relevant += 1
        source_id, sentence = sentences[i]
        if len(chosen) >= MAX_OBSERVATION_SENTENCES or per_source[source_id] >= MAX_SENTENCES_PER_SOURCE:
            continue
        if any(_near_duplicate(sentence, s) for _, s in chosen):
            relevant -= 1
            continue
        cited = _cite(sentence, source_id)
        if length + len(cited) + 1 > OBSERVATION_LIMIT:
            continue
        chosen.append((source_id, sentence))
        per_source[source_id] += 1
        length += len(cited) + 1
    if not chosen:
        read = _quote(unique(p.title for p in passages)[:3])
        return ObserveOutput(
            observation=(
                f"The {len(passages)} source(s) read for this step ({read}) have no sentence with "
                f"{'two of ' if needed == 2 else ''}its terms ({_quote(_Matcher(core).terms[:6])})."
            ),
            source_ids=[],
            needs_more=True,
            suggested_agent="researcher",
            suggested_query=broader,
        )
    observation = " ".join(_cite(s, n) for n, s in chosen)
    return ObserveOutput(
        observation=observation,
        source_ids=list(dict.fromkeys(n for n, _ in chosen)),
        needs_more=relevant < 2,
        suggested_agent="researcher" if relevant < 2 else None,
        suggested_query=broader if relevant < 2 else None,
    )


def _title_terms(title: str) -> list[str]:
    return [t for t in content_terms(title) if t not in TEMPLATE_WORDS]


def _broader(step: PlanStep, query: str) -> str:
    """A broader reformulation for a loop-back step: the step's subject alone, without the aspect
    it asked for ("Limitations and pitfalls of asyncio.gather" → "Overview of asyncio.gather")."""
    phrase = _strip_function_words(" ".join(w for w in _words(step.title) if w.lower() not in TEMPLATE_WORDS))
    if re.match(rf"{_QUESTION_WORDS}\b", step.title.strip(), re.I) or len(phrase.split()) > 5:
        phrase = subject_of(step.title)
    subject = phrase or subject_of(_split_clarified(query)[0]) or " ".join(_key_terms(query)[:3])
    broader = f"Overview of {subject}" if subject else f"Overview: {_short(_clean_clause(query), 8)}"
    return broader if broader.lower() != step.title.strip().lower() else f"Background on {subject or step.title}"


def _prose_sentences(text: str) -> list[str]:
    """Readable sentences of a passage: markup removed, code, tables and headings left out."""
    out = []
    for paragraph in _outside_code(text):
        for sentence in split_sentences(paragraph):
            sentence = _clean_sentence(sentence)
            if _is_prose(sentence):
                out.append(trim(sentence, MAX_SENTENCE_CHARS))
    return out


def _outside_code(text: str) -> list[str]:
    """Paragraphs with ``` fenced code removed (a fence may span paragraphs)."""
    in_code = False
    kept = []
    for paragraph in split_paragraphs(text):
        segments = paragraph.split("```")
        for k, segment in enumerate(segments):
            if not in_code and segment.strip():
                kept.append(segment.strip())
            if k < len(segments) - 1:
                in_code = not in_code
    return kept


def _clean_sentence(sentence: str) -> str:
    """Without markdown links, list/heading/quote marks and any `[n]` that would pass for ours;
    an API signature that opens the sentence ("asyncio.wait(fs, *, timeout=None) — Wait for ...")
    goes into backticks, so it reads as code inside prose."""
    s = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", sentence)
    s = re.sub(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])", r"\1", s)
    s = _CITATION.sub("", s)
    s = re.sub(r"^\s*(?:#{1,6}|>|[-*•]|\d{1,2}[.)])\s+", "", s)
    s = " ".join(s.split())
    signature = _SIGNATURE.match(s)
    if signature:
        s = f"`{signature.group(1)}` — {_capitalize(signature.group(2))}"
    return s


def _is_prose(sentence: str) -> bool:
    """A sentence of words: long enough, shaped like a sentence, not code, a table or a label.

    Code fences cannot always be tracked (a passage is an excerpt, a fence may open outside it),
    so code is also recognised by its shape: it starts in lower case ("rust,ignore ...") or has
    braces, `::`, `=>` or an assignment outside backticks.
    """
    if len(sentence) < 40 or len(sentence.split()) < 6:
        return False
    if not re.match(r"[A-Z0-9`\"'(*_“‘]", sentence) or not re.search(r"[.!?][\"”')\]*]*$", sentence):
        return False
    if sentence.count("|") >= 2 or sentence.startswith((">>>", "$ ")):
        return False
    outside = re.sub(r"`[^`]*`", "", sentence)
    if any(mark in outside for mark in ("{", "}", "::", "=>", " = ", "();")):
        return False
    letters = sum(c.isalpha() or c.isspace() for c in sentence)
    return letters >= 0.75 * len(sentence)


def _cite(sentence: str, source_id: int) -> str:
    """`[n]` before the sentence's final punctuation, so sentence splitting keeps it attached."""
    match = re.match(r"^(.*?)([.!?]+[\"”')\]]*)$", sentence)
    if match and match.group(1):
        return f"{match.group(1)} [{source_id}]{match.group(2)}"
    if sentence.endswith("…"):
        return f"{sentence.rstrip('…').rstrip()}… [{source_id}]."
    return f"{sentence} [{source_id}]."


# --- reflector --------------------------------------------------------------------------------------


def reflect_on(inp: ReflectInput) -> ReflectOutput:
    """Coverage and novelty, then the decision.

    coverage = share of the query's specific terms that cited observations mention;
    novelty  = share of the latest completed step's words that no earlier observation had.
    COMPLETE when coverage ≥ 0.8 (or no step is left) and the minimum is met; ADJUST when the latest
    step added little and query terms are uncovered (or nothing is left below the minimum);
    otherwise CONTINUE. Never COMPLETE below the minimum.
    """
    steps = inp.plan.steps
    completed = [s for s in steps if s.status is StepStatus.COMPLETED]
    pending = [s for s in steps if s.status in (StepStatus.PENDING, StepStatus.IN_PROGRESS)]
    done = inp.completed_steps
    evidence = [s for s in completed if _is_evidence(s)]
    terms = _key_terms(inp.topic_text(), limit=12)
    matcher = _Matcher(terms)
    covered = matcher.found(" ".join(_uncited(s.observation or "") for s in evidence))
    uncovered = [t for t in matcher.terms if t not in covered]
    coverage = len(covered) / len(matcher.terms) if matcher.terms else 1.0
    novelty, new, total, latest = _novelty(completed)
    figures = (
        f"coverage {coverage:.2f} ({len(covered)}/{len(matcher.terms)} query terms), "
        f"novelty {novelty:.2f} ({new}/{total} words new in {_quote([latest]) if latest else 'no step'}); "
        f"{done} of minimum {inp.min_steps} steps done, {len(pending)} pending"
    )
    low_novelty = novelty < NOVELTY_LOW
    changes = [f'Research "{t}" (no cited observation mentions it yet)' for t in uncovered[:5]]
    if done >= inp.min_steps and coverage >= COVERAGE_COMPLETE:
        return _reflection(ReflectionDecision.COMPLETE, f"{figures}: coverage reached {COVERAGE_COMPLETE}.")
    if done >= inp.min_steps and not pending:
        return _reflection(ReflectionDecision.COMPLETE, f"{figures}: no steps left and the minimum is met.")
    if not pending:
        missing = inp.min_steps - done
        more = changes or [f"{missing} more step(s) on aspects not yet researched"]
        return _reflection(
            ReflectionDecision.ADJUST, f"{figures}: no steps left below the minimum; plan {missing} more.", more
        )
    if low_novelty and uncovered:
        return _reflection(
            ReflectionDecision.ADJUST,
            f"{figures}: the latest step added little and {_quote(uncovered[:5])} are not covered.",
            changes,
        )
    reason = "the latest step added new material" if not low_novelty else "nothing uncovered to replan for"
    return _reflection(ReflectionDecision.CONTINUE, f"{figures}: {reason}; next step.")


def _reflection(decision: ReflectionDecision, reasoning: str, changes: list[str] | None = None) -> ReflectOutput:
    return ReflectOutput(decision=decision, reasoning=reasoning, suggested_changes=changes or [])


def _is_evidence(step: PlanStep) -> bool:
    """Only an observation that cites a source is evidence; 'nothing found' texts are not."""
    return bool(step.observation) and (bool(step.source_ids) or bool(_CITATION.search(step.observation or "")))


def _uncited(text: str) -> str:
    return _CITATION.sub("", text)


def _novelty(completed: list[PlanStep]) -> tuple[float, int, int, str]:
    """(novelty, new words, words, title) of the last completed step against the ones before it."""
    if not completed:
        return 0.0, 0, 0, ""
    latest = completed[-1]
    if not _is_evidence(latest):
        return 0.0, 0, 0, latest.title
    before = {_stem(t) for s in completed[:-1] if _is_evidence(s) for t in content_terms(_uncited(s.observation or ""))}
    words = list(dict.fromkeys(_stem(t) for t in content_terms(_uncited(latest.observation or ""))))
    new = [w for w in words if w not in before]
    return (len(new) / len(words) if words else 0.0), len(new), len(words), latest.title


# --- synthesizer ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sentence:
    text: str  # with its [n] markers
    ids: tuple[int, ...]


def write_report(inp: SynthesizeInput) -> SynthesizeOutput:
    """An extractive report: title, notes, summary, one section per completed step, sources."""
    question, answers, follow_up = _parts(inp.topic_text())
    known = {s.id for s in inp.sources}
    lines = [f"# {_escape_citations(' '.join(question.split())) or 'Research report'}", ""]
    if follow_up:
        lines += [f"*Follow-up to: {_escape_citations(follow_up)}*", ""]
    if answers:
        lines += [f"*Clarified: {_escape_citations(answers)}*", ""]
    if inp.notes:
        lines += ["\n>\n".join(f"> **Note:** {_escape_citations(n)}" for n in inp.notes), ""]
    cited: list[_Sentence] = []
    if inp.plan is None:
        body, cited = _direct_answer(inp.topic_text(), inp.passages, known)
        lines += body
    else:
        body, cited = _plan_sections(inp, known)
        lines += body
    used = [n for s in cited for n in s.ids]
    listed = sorted((s for s in inp.sources if s.id in set(used)), key=lambda s: s.id)
    if listed:
        lines += ["## Sources", ""]
        lines += [f"- [{s.id}] {_escape_citations(s.title)} — {s.url}" for s in listed]
        lines.append("")
    lines += ["---", "", DISCLAIMER]
    claims = _claims(cited)
    return SynthesizeOutput(markdown="\n".join(lines).rstrip() + "\n", claims=claims, engine=OfflineEngine.name)


def _plan_sections(inp: SynthesizeInput, known: set[int]) -> tuple[list[str], list[_Sentence]]:
    assert inp.plan is not None
    steps = [s for s in inp.plan.steps if s.status is StepStatus.COMPLETED and s.observation]
    sections: list[str] = []
    everything: list[_Sentence] = []
    for step in steps:
        sentences = _report_sentences(step.observation or "", known)
        found = [s for s in sentences if s.ids]
        # Steps often read the same pages: a finding is listed once, under the first step that found it.
        fresh = [s for s in found if not any(_near_duplicate(_uncited(s.text), _uncited(e.text)) for e in everything)]
        sections += [f"## {_escape_citations(step.title)}", ""]
        if fresh:
            sections += [f"- {s.text}" for s in fresh]
        elif found:
            sections.append("_This step's sources repeat findings listed above._")
        else:
            said = _escape_citations(_uncited(step.observation or "").strip())
            sections.append(f"_No cited findings for this step. {said}_")
        sections.append("")
        everything += fresh
    summary = _top_sentences(inp.topic_text(), everything, SUMMARY_SENTENCES, require_match=False)
    lines = ["## Summary", ""]
    if summary:
        lines += [" ".join(s.text for s in summary), ""]
    elif steps:
        lines += ["The steps below found no sentence in their sources that could be cited.", ""]
    else:
        lines += ["No findings were gathered before the research ended.", ""]
    lines += sections
    skipped = [s.title for s in inp.plan.steps if s.status is not StepStatus.COMPLETED]
    if skipped:
        lines += [f"Planned but not researched: {_escape_citations('; '.join(skipped))}.", ""]
    return lines, [*summary, *everything]


def _direct_answer(query: str, passages: list[Passage], known: set[int]) -> tuple[list[str], list[_Sentence]]:
    """No plan (a simple question): the passages' sentences that best match the question."""
    candidates = [
        _Sentence(_cite(s, p.source_id), (p.source_id,))
        for p in passages
        if p.source_id in known
        for s in _prose_sentences(p.text)
    ]
    chosen = _top_sentences(query, candidates, DIRECT_ANSWER_SENTENCES, require_match=True)
    lines = ["## Answer", ""]
    if chosen:
        lines += [f"- {s.text}" for s in chosen]
    else:
        lines.append("No sentence in the sources found matches the question.")
    return [*lines, ""], chosen


def _report_sentences(observation: str, known: set[int]) -> list[_Sentence]:
    """An observation's sentences with only known citations kept, split after each citation."""
    out = []
    for sentence in split_sentences(observation):
        start = 0
        pieces = []
        for match in _CITED_END.finditer(sentence):
            pieces.append(sentence[start : match.end()].strip())
            start = match.end()
        if sentence[start:].strip():
            pieces.append(sentence[start:].strip())
        for piece in pieces:
            text = _keep_known(piece, known)
            ids = tuple(dict.fromkeys(int(n) for m in _CITATION.finditer(text) for n in m.group(1).split(",")))
            if text:
                out.append(_Sentence(text, ids))
    return out


def _keep_known(text: str, known: set[int]) -> str:
    def keep(match: re.Match[str]) -> str:
        good = [n for n in (int(p) for p in match.group(1).split(",")) if n in known]
        return f"[{', '.join(map(str, good))}]" if good else ""

    return re.sub(r"\s+([.!?])", r"\1", _CITATION.sub(keep, text)).strip()


def _top_sentences(query: str, sentences: list[_Sentence], k: int, require_match: bool) -> list[_Sentence]:
    """The k sentences that best match the question (BM25), skipping near-duplicates. Without
    `require_match`, sentences that match nothing may follow, in their order (a summary's lead)."""
    if not sentences:
        return []
    matcher = _Matcher(_key_terms(query, limit=12) or content_terms(query))
    scores = bm25_scores(matcher.all_terms, [matcher.tokens(_uncited(s.text)) for s in sentences])
    chosen: list[_Sentence] = []
    for i in _ranked(scores):
        if require_match and scores[i] <= 0:
            break
        if any(_near_duplicate(_uncited(sentences[i].text), _uncited(c.text)) for c in chosen):
            continue
        chosen.append(sentences[i])
        if len(chosen) >= k:
            break
    return chosen


def _claims(sentences: list[_Sentence]) -> list[Claim]:
    claims: list[Claim] = []
    seen: set[str] = set()
    for sentence in sentences:
        text = re.sub(r"\s+([.!?,;:])", r"\1", _uncited(sentence.text)).strip()
        if sentence.ids and text and text.lower() not in seen:
            seen.add(text.lower())
            claims.append(Claim(text=text, source_ids=list(sentence.ids), verdict=Verdict.UNVERIFIED))
    return claims


def _escape_citations(text: str) -> str:
    """Text from elsewhere (a note, a title) may contain `[7]`: escaped, it cannot pass for a
    citation, and markdown still shows it as [7]."""
    return _CITATION.sub(lambda m: f"\\[{m.group(1)}\\]", text)


