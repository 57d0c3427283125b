"""Routing by rule: does the latest message say enough to research, and if not, what to ask.

Seven ambiguity rules, tried in order (ordinal reference, pronoun, definite or possessive reference,
a choice without options, superlative or comparative without scope, evaluation without target, no
subject); the first that fires sends the conversation to clarification, and the clarifier runs the
same rules, so the question it asks names exactly what the routing decision found missing: the
referent of "it" or "them", the code that "my code" is, the options "which one" chooses between,
what "the most important" is measured against, what "how many" counts.

Routing judges the *latest* message: a pronoun or a definite reference ("the paper") must be
resolved inside it or by an earlier mention of the same noun, because the research runs on the
message (plus clarification answers), not on the whole conversation. The exception the design asks
for: "the second point" is resolved by a numbered list or sections in the previous answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from activities.offline_engine.cues import (
    CHOICE,
    COMPARATIVES,
    DEFINITE,
    LIST_LINE,
    MOST,
    NUMBERED_REF,
    ORDINAL_NOUNS,
    ORDINAL_REF,
    ORDINALS,
    PASTABLE,
    PRONOUN_BASE,
    PUBLICATIONS,
    QUALIFIER_PREPS,
    SCOPE_PHRASE,
    SUFFICIENCY,
    SUPERLATIVES,
    TARGETLESS,
)
from activities.offline_engine.questions import subject_of
from activities.offline_engine.vagueness import (
    counts_as_option,
    unmeasured_evaluation,
    unresolved_pronoun,
)
from activities.offline_engine.words import (
    REFERENTIAL,
    VAGUE,
    VERBS,
    _capitalize,
    _clean_clause,
    _quote,
    _specific_terms,
    _stem,
    _words,
)
from workflows.activity_models import ClarifyInput, ClarifyOutput, RouteInput, RouteOutput
from workflows.models import Message, RoutingDecision, Speaker
from workflows.text import STOPWORDS, tokenize, unique

# --- the router and the clarifier -------------------------------------------------------------------


def route_by_rule(inp: RouteInput) -> RouteOutput:
    """Orchestrator layer 3 by rule. Layers 1–2 (limit, reply shortcut) are the workflow's."""
    latest, earlier = _split_conversation(inp.messages)
    if latest is None:
        return RouteOutput(
            decision=RoutingDecision.RESEARCH,
            reasoning="No user message to judge: research by default.",
        )
    found = find_ambiguity(latest, earlier)
    if isinstance(found, Ambiguity):
        return RouteOutput(decision=RoutingDecision.CLARIFICATION, reasoning=found.reasoning)
    return RouteOutput(decision=RoutingDecision.RESEARCH, reasoning=found)


def clarification_question(inp: ClarifyInput) -> ClarifyOutput:
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


# --- ambiguity rules --------------------------------------------------------------------------------


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

    Rules in order: ordinal reference, pronoun, definite or possessive reference, a choice
    without options, superlative/comparative without scope, evaluation without target, no
    subject at all. Only the ordinal rule reads the
    earlier conversation's structure; the definite-reference rule reads it for an antecedent.
    Every rule but the last stays silent when the message carries enough specific words of its
    own: a normal question must never be asked back.
    """
    text = " ".join(message.split())
    specific = _specific_terms(text)
    for rule in (
        _ordinal_rule,
        _pronoun_rule,
        _definite_rule,
        _choice_rule,
        _scope_rule,
        _target_rule,
        _subject_rule,
    ):
        found = rule(text, specific, earlier)
        if found is not None:
            return found
    return _research_reasoning(text, specific)


def _ordinal_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | str | None:
    """ "The second point" is resolved by the previous answer's numbered items or sections.

    Returns the RESEARCH reasoning (a str) when it resolves. A message with two specific words
    besides the ordinal phrase is self-contained ("the first step to install Rust").
    """
    match = ORDINAL_REF.search(text)
    index = ORDINALS.get(match.group(1).lower()) if match else None
    if match is None:
        numbered = NUMBERED_REF.search(text)
        if numbered is None:
            return None
        match, index = numbered, int(numbered.group(1))
    phrase = match.group(0)
    own = [
        t
        for t in specific
        if t not in ORDINALS and not re.fullmatch(ORDINAL_NOUNS, t) and not t.isdigit()
    ]
    if len(own) >= 2:
        return None
    previous = next((m.content for m in reversed(earlier) if m.role is Speaker.ASSISTANT), "")
    items = len(LIST_LINE.findall(previous))
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
    """A pronoun with no noun before it to stand for points outside the message ("Tell me more
    about it", "Is it thread-safe?"; vagueness.py says which words point and what resolves them).

    In a follow-up (an earlier question of the user's that was answered) the pronoun refers to
    that question's subject, and the message is clear; returns the RESEARCH reasoning then. An
    assistant message alone (seed 000's "Tell me more about it" after a remark on RAG) is no
    antecedent: the user never said what they were asking about.
    """
    pronoun = unresolved_pronoun(text)  # "Is it thread-safe?": what comes after "it" is said of it
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
            f'What does "{PRONOUN_BASE.get(pronoun, pronoun) if pronoun in ("its", "their") else pronoun}" refer to, '
            f"and which aspect of {'them' if PRONOUN_BASE.get(pronoun, pronoun) == 'they' else 'it'} "
            "would you like to know more about?"
        ),
    )


def _answered_subject(earlier: list[Message]) -> str:
    """The subject of the latest user question in `earlier` that an assistant message answered."""
    for i in range(len(earlier) - 1, -1, -1):
        message = earlier[i]
        if message.role is Speaker.USER and _specific_terms(message.content):
            answered = any(m.role is Speaker.ASSISTANT for m in earlier[i + 1 :])
            return subject_of(message.content) if answered else ""
    return ""


def _definite_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | None:
    """ "The paper" with no name, no qualifier and no earlier mention cannot be looked up.

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
    unresolved: list[tuple[str, str, str]] = []  # (determiner, noun, phrase)
    for match in DEFINITE.finditer(text.lower()):
        noun = match.group(2)
        if noun not in REFERENTIAL:
            continue
        if _qualified(text[match.end() :]) or _stem(noun) in earlier_words:
            continue
        unresolved.append((match.group(1), noun, match.group(0)))
    if not unresolved:
        return None
    determiner, noun, phrase = unresolved[-1]
    if determiner in ("my", "our", "your") and noun in PASTABLE:
        question = (
            f"Could you paste {'the' if determiner == 'your' else 'your'} {noun}, with the error message you get "
            "and what you expected it to do?"
        )
    elif noun == "one" and "other" in phrase:
        question = 'Which two things do you mean by "the other one"? Could you name both, or the one you asked about?'
    elif noun in PUBLICATIONS:
        question = f"Which {noun} do you mean? Could you give its title, authors or a link?"
    elif noun in PASTABLE:
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
    return (
        word[:1].isupper() or any(c.isdigit() for c in word) or "." in word or word[:1] in "\"'`“"
    )


def _qualified(rest: str) -> bool:
    """Whether the words right after a definite noun name it: a name, or a preposition + a name
    or specific word ("of DAIL-SQL", "by Zhang")."""
    words = [w.rstrip(".") for w in re.findall(r"[\"'`“]?[A-Za-z0-9_][A-Za-z0-9_'+#.-]*", rest)[:4]]
    if not words:
        return False
    if _is_name(words[0]):
        return True
    if words[0].lower() in QUALIFIER_PREPS:
        return any(
            _is_name(w)
            or (
                w.lower() not in STOPWORDS
                and w.lower() not in REFERENTIAL
                and w.lower() not in VAGUE
            )
            for w in words[1:]
        )
    return False


def _choice_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | None:
    """ "Which one is better?" chooses between options it never names.

    Silent when the options are there: named with "or", "vs" or a list, or two specific words
    ("Which one is faster, Vec or VecDeque?", "Which one of the JSON crates parses fastest?").
    """
    match = CHOICE.search(text)
    if match is None:
        return None
    words = tokenize(text)
    if any(w in ("or", "vs", "versus", "between") for w in words) or "," in text:
        return None
    anchors = [
        t for t in specific if t not in VERBS and t not in REFERENTIAL and counts_as_option(t)
    ]
    if len(anchors) >= 2:
        return None
    return Ambiguity(
        rule="choice without options",
        trigger=match.group(0),
        reasoning=f'"{match.group(0)}" chooses between options the message never names.',
        question=(
            "Which options are you choosing between? Could you name them, and say what matters most "
            "to you (for example speed, safety or simplicity)?"
        ),
    )


def _scope_rule(text: str, specific: list[str], earlier: list[Message]) -> Ambiguity | None:
    """ "Best" needs a problem and a measure; "better" needs something to compare with.

    A superlative ("best", "fastest", "the most important") is scoped by a phrase that names
    where it is measured ("the best approach for text-to-SQL") or by two specific words of its own
    besides the superlative ("the highest accuracy in Zhang 2024"); a comparative by
    "than/vs/or/for ..." or by two specific words ("how can I better understand lifetimes" is not
    a comparison).
    """
    words = tokenize(text)
    most = MOST.search(text)
    superlative = next((w for w in words if w in SUPERLATIVES), None) or (
        most.group(0).lower() if most else None
    )
    if superlative:
        adjective = most.group(2).lower() if most and superlative == most.group(0).lower() else ""
        anchors = [t for t in specific if t not in VERBS and t not in (adjective, superlative)]
        scope = SCOPE_PHRASE.search(text[text.lower().find(superlative.split()[-1]) :])
        scoped = bool(scope and _specific_terms(scope.group(1)))
        if not anchors or (len(anchors) == 1 and not scoped):
            thing = f' "the {superlative} {anchors[0]}"' if anchors else ""
            return Ambiguity(
                rule="superlative without scope",
                trigger=superlative,
                reasoning=(
                    f'Superlative "{superlative}"{" in" + thing if thing else ""} has no scope: '
                    f"{superlative} for what problem, and by which measure?"
                ),
                question=(
                    f"{_capitalize(superlative)} for what problem, and by which measure "
                    "(for example accuracy, speed or cost)?"
                    if not anchors
                    else f"{_capitalize(superlative)} for what? Could you say what you are trying to do, or in which "
                    f"area, so I know which {anchors[0]} matters most there?"
                ),
            )
    comparative = next((w for w in words if w in COMPARATIVES), None)
    has_target = any(
        w in ("than", "vs", "versus", "or", "compared", "compare", "between", "over", "for")
        for w in words
    )
    judged = unmeasured_evaluation(text)  # "Is Rust faster?", "Which is more idiomatic?"
    if judged and judged.comparative:
        comparative, has_target = judged.word, False
    if comparative and not has_target and (len(specific) < 2 or judged):
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
    judged = unmeasured_evaluation(text)  # "Is Python safe?", "Is the crate reliable in general?"
    if judged and not judged.comparative:
        words = [judged.word]
    if not words or words[-1] not in TARGETLESS and not judged:
        return None
    word = words[-1]
    if re.search(r"\b(for|to|than|compared|versus|vs)\s+\S", text.lower()):
        return None
    if word not in SUFFICIENCY and len(specific) >= 2 and not judged:
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
    counting = re.match(r"\s*how\s+(many|much)\b", text, re.I)
    return Ambiguity(
        rule="no subject",
        trigger=said,
        reasoning=f'The message names no subject: "{said}" has no content word that could be researched.',
        question=(
            f"How {counting.group(1).lower()} of what? Could you name what should be counted, and where "
            "(for example in which language, library or document)?"
            if counting
            else "What topic should I research? Could you name the subject and what you want to know about it?"
        ),
    )


def _research_reasoning(text: str, specific: list[str]) -> str:
    """Why the message can be researched: the names and concrete terms it gives."""
    words = _words(text)
    names = unique(
        w
        for i, w in enumerate(words)
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
