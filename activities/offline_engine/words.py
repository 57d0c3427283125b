"""The offline engine's vocabulary and word tools: what every one of its rules counts with.

The engine decides from the words of its input, so which words are filler, aspects, verbs or
references is stated once, here, as tables a reader can check a decision against. The tools that
compare words (a possessive-blind base, a plural-blind stem, `_Matcher`, which maps inflections
onto the question's terms) and the small text shapers are shared by every role, so routing,
planning, observing, reflecting and reporting all see `races` as `race` in the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from workflows.kit.citations import CITATION
from workflows.text import WORD, content_terms, tokenize

# --- vocabulary -------------------------------------------------------------------------------------

#: Third-person pronouns and demonstratives that point outside a message when nothing else names
#: the subject ("Tell me more about it", "How does that work?").
PRONOUNS = (
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "they",
    "them",
    "their",
    "he",
    "she",
    "him",
    "her",
)

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
    system data output log logs""".split()
)

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
    replaced replace recommend recommended use uses used put puts place places keep keeps take
    takes fixes""".split()
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
    involved affecting affect deprecations requested main figures give found came compared
    others""".split()
)

#: Verbs that are nouns as well ("climate change", "the fall of Rome"), so VERBS cannot hold
#: them: after "did", "does" or "do" and a subject, with more of a noun phrase after them or at
#: the question's end, they are the question's own verb ("Why did the Roman Empire fall?").
NOUN_VERBS = frozenset(
    """change changes fall falls rise rises end ends spread spreads shape shapes influence
    influences form forms grow grows evolve evolves develop develops survive survives collapse
    collapses win wins lose loses transform transforms""".split()
)


def past_verb(word: str) -> bool:
    """A verb in the past ("caused", "discovered"), as it stands after "What" or "Who" in a
    question asked by its verb; "red", "speed" and "bed" are not."""
    low = word.lower()
    return len(low) > 4 and low.endswith("ed") and not low.endswith("eed")


#: Where a planned step's description goes on to quote the whole question (planning.py): the
#: query writer stops reading there, or every part's step would search for the other parts' words.
PART_OF_QUESTION = ", as part of the question: "

#: "How long", "how often", "how hot": after "how", the measure asked for, never a subject
#: ("How hot is the surface of Mercury?" asks of the surface of Mercury, not of "hot").
HOW_MEASURE = frozenset(
    """long often much many far old big soon fast large hot cold warm tall high deep wide thick
    heavy small short low bright dense massive""".split()
)

#: Words that make a question one about software: only such a question gets the planner's
#: software templates ("typical code or usage examples", "where the documentation is").
SOFTWARE_WORDS = frozenset(
    """code coding program programs programming software library libraries api apis function
    functions method methods class classes module modules package packages compile compiler
    compiles runtime database sql server servers http git docker kubernetes workflow workflows
    async await thread threads memory variable variables framework frameworks error errors
    exception exceptions bug bugs install deploy query queries python rust java javascript
    typescript golang go c++ kotlin swift ruby php linux bash shell cli command commands argument
    arguments parameter parameters type types decorator decorators closure closures lifetime
    lifetimes borrow checker iterator iterators generator generators struct structs trait traits
    pointer pointers compiler json yaml html css regex asyncio temporal llm model models token
    tokens prompt prompts script scripts test tests debugging encoding string strings
    mutex lock locks cache caching timeout timeouts retry retries""".split()
)

#: A word as typed: the shape of `workflows.text.tokenize`, case kept.
_WORD = WORD
#: Words that open a question: a new clause starts where one does.
_QUESTION_WORDS = (
    r"(?:what|how|why|when|where|which|who|whom|is|are|does|do|did|can|could|should|would|will)"
)

#: ", and" before a clause with a subject and a verb of its own ("..., and its error messages
#: must still reach the terminal"): another thing asked, not more of the same clause.
_OWN_CLAUSE = (
    r"(?:its|their|the|my|our|your|this|these|those|it|they|we|i|you)\s+(?:[\w'-]+\s+){0,3}"
    r"(?:must|should|can|could|will|would|may|might|need|needs)\b"
)


#: Where another thing asked begins: "and", "as well as" or a comma before a question word (or
#: "whether"), or ", and" before a clause of its own.
_NEW_CLAUSE = (
    rf"(?:,?\s+and(?:\s+also)?|\s+as\s+well\s+as)\s+(?=(?:{_QUESTION_WORDS}|whether)\b)"
    rf"|,\s+(?=(?:{_QUESTION_WORDS}|whether)\b)|,\s+and\s+(?={_OWN_CLAUSE})"
)

#: Two sentences sharing this share of their words say the same thing.
NEAR_DUPLICATE = 0.6


# --- words ------------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Word tokens as typed (case kept), for titles and phrases; same shape as `text.tokenize`."""
    return [m.group(0).rstrip(".") for m in _WORD.finditer(text)]


def _specific_terms(text: str) -> list[str]:
    """Content words that can name a subject: no filler, evaluations, aspects or pronouns."""
    return [
        t
        for t in content_terms(text)
        if t not in VAGUE and t not in ASPECT_WORDS and t not in PRONOUNS
    ]


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
    """Inflections of one word: `borrowing`~`borrow`, `tuples`~`tuple`; not `async`~`asyncio`.

    Words in other alphabets (no English endings to strip) meet when they share all but their
    last three letters, at least four: Russian `проверка`~`проверки`, `ссылок`~`ссылки`."""
    short, long = sorted((a, b), key=len)
    if a == b or (len(short) >= 4 and long.startswith(short) and long[len(short) :] in _ENDINGS):
        return True
    # A dropped e (`bake`~`baking`~`baked`) and f to ves (`loaf`~`loaves`).
    if (
        len(short) >= 4
        and short.endswith("e")
        and long.startswith(short[:-1])
        and long[len(short) - 1 :] in ("ing", "ed")
    ):
        return True
    if len(short) >= 4 and short.endswith("f") and long == f"{short[:-1]}ves":
        return True
    if a.isascii() or b.isascii() or not (a.isalpha() and b.isalpha()):
        return False
    shared = len(os.path.commonprefix([a, b]))
    return shared >= 4 and shared >= len(long) - 3


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


def plain_words(text: str) -> str:
    """TEXT's words alone, lower case, one space apart: for finding one text inside another
    whatever its punctuation and spacing (a quote inside the sentence it was copied from)."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _uncited(text: str) -> str:
    return CITATION.sub("", text)


def _quote(items: Iterable[str]) -> str:
    return ", ".join(f'"{i}"' for i in items)


# --- text shapes ------------------------------------------------------------------------------------


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


#: The words that only point at a subject ("the", "this"): never what names it.
DETERMINERS = frozenset("the a an this that these those its their our your my his her".split())
_AFTER_VERB = frozenset(
    "by to in on at from with for up out into over the a an its their all only".split()
)


def third_person(word: str, after: str) -> bool:
    """ "BM25 *ranks* by ...", "it *wakes* up": a verb after a noun phrase, by its -s and the
    preposition or article after it ("tasks and tasks" stays a noun phrase)."""
    low = word.lower()
    return (
        low.endswith("s")
        and not low.endswith(("ss", "us", "is"))
        and low.isalpha()
        and after in _AFTER_VERB
    )
