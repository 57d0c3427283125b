"""The verifier's hand on what a model writes: text that the sources do not hold is not kept.

A strong model writes findings and reports from what it read; a small one (SmolLM2-135M behind
llama.cpp answers in valid JSON, constrained by the schema, with words of its own) writes fluent
text the sources do not say, or cites nothing. So the writing roles check the model's text with
the same lexical measure the workflow's verifier uses (`workflows/kit/verification.lexical_verdict`):

- a step's observation needs at least one cited sentence that its cited passages hold; otherwise
  the engine writes it from those passages, extractively (the offline engine's method), keeping
  the model's choice of sources (all the step read when those hold nothing on the step) and its
  loop-back request. An observation that only quotes (a small model copies a sentence) is a
  choice of sentences, weighed as the engine weighs its own: an off-step quote gives way to the
  engine's, and one sentence where the sources hold more is joined by the engine's best;
- a report (or a section, or the summary) needs `MIN_GROUNDED` claims its cited evidence holds
  (or all of them when fewer were possible); otherwise the engine composes it from the evidence,
  extractively, every sentence quoted and cited, and says so in the report;
- routing follows the engine's rules where they find a reference no model can resolve ("tell me
  more about it" with nothing before it), and a question back must be a question about what the
  person said (else the engine's own question is asked) that asks something the conversation
  left open: one that only repeats it (a small model hands the person's question back word for
  word) is not asked; the research goes on, or the engine asks its own where its rules find the
  question vague (`repeats`);
- a judge's verdict never sinks a claim that stands word for word in the evidence it cites;
- most of a plan's steps, its title, and one of a set of search queries must share a content word
  with the question (or the step): a small model echoes its schema ("StepDraft", "$defs/Steps"),
  and a step about nothing searches for nothing. What is left out is made up by the engine's
  own planner and query writer, so the research still has the steps its depth asks for.

So the model decides what it can decide well at its size (which sources a step rests on, whether
a step needs more, routing, plans, queries, reflection) and the sentences a reader gets are
either the model's own, verified, or the sources' own, quoted.
"""

from __future__ import annotations

from typing import Any, TypeVar

from activities.offline_engine.aspects import decompose
from activities.offline_engine.reporting import DISCLAIMER
from activities.offline_engine.words import plain_words
from workflows import activity_models as m
from workflows.kit.citations import CITATION, cited_ids
from workflows.kit.verification import lexical_verdict
from workflows.models import Claim, Evidence, RoutingDecision, Verdict
from workflows.report_models import SectionInput, SectionOutput
from workflows.text import content_terms, split_sentences, stem

#: Supported claims a report must hold to be kept as the model wrote it.
MIN_GROUNDED = 3
#: What a composed report says about itself (the reader must know who wrote its sentences).
COMPOSED_NOTE = (
    "The model's draft of this text was not borne out by the sources it cited, so the sentences "
    "above are quoted from those sources, ranked by the engine (extractively), each with its "
    "citation."
)
#: A text a model wrote that the engine may compose again from the evidence: a report, a section.
Written = TypeVar("Written", m.SynthesizeOutput, SectionOutput)


def _evidence_of(ids: list[int], evidence: list[Evidence]) -> list[str]:
    return [e.text for e in evidence if e.source_id in ids]


def verdict(text: str, ids: list[int], evidence: list[Evidence]) -> Verdict:
    """The workflow verifier's lexical verdict on one cited claim: SUPPORTED when its words
    stand in one cited paragraph, PARTIAL when half of them stand in what it cites (a
    paraphrase), UNSUPPORTED for words of the model's own."""
    held = _evidence_of(ids, evidence)
    if not held:
        return Verdict.UNSUPPORTED
    found = lexical_verdict(CITATION.sub("", text), held).verdict
    # The lexical check always reaches a verdict; its type leaves room for a check not made.
    return found if found is not None else Verdict.UNSUPPORTED


def borne_out(verdicts: list[Verdict], wanted: int) -> bool:
    """Text is kept as the model wrote it when `wanted` of its cited sentences at least paraphrase
    what they cite and most do; and, unless one stands in its sources word for word, two thirds
    do. The deterministic verifier calls a faithful paraphrase at most partial (only a judge can
    tell it from a stitched claim), so a capable model writing in its own words is kept (issue
    36); a small model's inventions share too few words with the sources to pass."""
    plausible = sum(1 for v in verdicts if v is not Verdict.UNSUPPORTED)
    return (
        plausible >= max(1, wanted)
        and plausible * 2 > len(verdicts)
        and (Verdict.SUPPORTED in verdicts or plausible * 3 >= len(verdicts) * 2)
    )


def grounded_observation(observation: str, passages: list[m.Passage]) -> bool:
    """The observation's cited sentences are borne out by the passages they cite."""
    pool = [Evidence(source_id=p.source_id, position=0, text=p.text) for p in passages]
    verdicts = [
        verdict(sentence, ids, pool)
        for sentence in split_sentences(observation)
        if (ids := cited_ids(sentence))
    ]
    return borne_out(verdicts, 1)


def quotes_only(observation: str, passages: list[m.Passage]) -> list[tuple[int, str]]:
    """The observation's sentences with the source each stands in word for word, when all of its
    cited sentences do (the model chose sentences and wrote none); else none."""
    pool = [Evidence(source_id=p.source_id, position=0, text=p.text) for p in passages]
    quoted: list[tuple[int, str]] = []
    for sentence in split_sentences(observation):
        ids = cited_ids(sentence)
        if not ids:
            continue
        holding = [n for n in ids if verbatim(sentence, [n], pool)]
        if not holding:
            return []
        quoted.append((holding[0], CITATION.sub("", sentence).strip()))
    return quoted


def enough(claims: list[Claim], evidence: list[Evidence]) -> bool:
    """A written text is kept when its claims are borne out, `MIN_GROUNDED` of them at least
    (fewer when the evidence has fewer paragraphs to offer)."""
    verdicts = [verdict(c.text, c.source_ids, evidence) for c in claims]
    return borne_out(verdicts, min(MIN_GROUNDED, len(evidence)))


def evidence_for(inp: m.SynthesizeInput | SectionInput) -> list[Evidence]:
    """What a report's claims must stand in: what was read of the sources (or, in inputs recorded
    before it was sent, the evidence pool), or for a direct answer (no plan) the passages the
    background search read."""
    if inp.read or inp.evidence or isinstance(inp, SectionInput):
        return inp.read or inp.evidence
    return [
        Evidence(source_id=p.source_id, position=0, text=p.text)
        for p in inp.passages
        if p.source_id
    ]


def verbatim(text: str, ids: list[int], evidence: list[Evidence]) -> bool:
    """The claim's words, in order, stand in a cited evidence paragraph (case and spacing aside)."""
    needle = plain_words(CITATION.sub("", text))
    return len(needle) > 20 and any(needle in plain_words(t) for t in _evidence_of(ids, evidence))


def composed(
    written: Written,
    extractive: m.SynthesizeOutput | SectionOutput,
    note: str = COMPOSED_NOTE,
) -> Written:
    """The extractive text in place of the model's, saying so (usage stays the model's call)."""
    markdown = extractive.markdown.replace(DISCLAIMER, "").rstrip().removesuffix("---").rstrip()
    return written.model_copy(
        update={"markdown": f"{markdown}\n\n_{note}_\n", "claims": extractive.claims}
    )


def about(text: str, *subjects: str) -> bool:
    """`text` shares a content word with one of `subjects` (the question, a step's title)."""
    wanted = {t for subject in subjects for t in content_terms(subject)}
    return bool(wanted & set(content_terms(text)))


def on_topic_steps(steps: list[m.StepDraft], question: str) -> list[m.StepDraft]:
    """The plan's steps, unless most are about nothing the question says: then only those that
    are (a model that plans sensibly keeps its whole plan, words of its own included)."""
    kept = [s for s in steps if about(s.title, question)]  # what the step is called is what
    # it searches for: a schema's word ("StepDraft") over a sensible description searches nothing
    return steps if len(kept) * 2 >= len(steps) else kept


def parts_missed(question: str, steps: list[Any]) -> list[str]:
    """The parts of a question of several ("How long is a year on Mars and how tall is Olympus
    Mons?") that no step is about: a small model plans the first part and forgets the rest. A part
    is about its own words, not the ones it shares with the other parts."""
    parts = decompose(question)
    if len(parts.items) < 2:
        return []
    terms = [set(content_terms(item)) for item in parts.items]
    # By title: a step's description often quotes the whole question, every part included.
    said = [set(content_terms(s.title)) for s in steps]
    missed = []
    for i, item in enumerate(parts.items):
        own = terms[i] - set().union(*(t for j, t in enumerate(terms) if j != i))
        if own and not any(own & words for words in said):
            missed.append(item)
    return missed


def steps_for(parts: list[str], drafted: list[m.StepDraft]) -> list[m.StepDraft]:
    """The engine's steps for the parts the model's plan missed, one per part, in order."""
    chosen: list[m.StepDraft] = []
    for part in parts:
        own = set(content_terms(part))
        # By title: a drafted step's description quotes the whole question, every part included.
        scored = [(len(own & set(content_terms(s.title))), s) for s in drafted if s not in chosen]
        best = max(scored, key=lambda pair: pair[0], default=(0, None))
        step = best[1] if best[0] else None
        chosen.append(step or m.StepDraft(title=part[:1].upper() + part[1:], description=part))
    return chosen


def on_topic_queries(queries: list[str], *subjects: str) -> list[str]:
    """The queries, unless none is about the question or its step (then none)."""
    return queries if any(about(q, *subjects) for q in queries) else []


def overruled(decided: m.RouteOutput, rules: m.RouteOutput) -> bool:
    """The engine's routing rules (activities/offline_engine/routing.py) prevail over a model
    that would research what they find the conversation leaves open, beyond what any model can
    resolve: a pronoun or an ordinal with nothing before it, a superlative without a scope. A
    model that asks back where the rules would not is followed (its question is checked)."""
    return (
        decided.decision is RoutingDecision.RESEARCH
        and rules.decision is RoutingDecision.CLARIFICATION
    )


def asks_about(question: str, said: str) -> bool:
    """A question back is a question, about the conversation it asks about."""
    return question.rstrip().endswith("?") and "{" not in question and about(question, said)


#: What the research's notes say when the model's question back was not asked.
ECHO_SKIPPED = (
    "The model's question back repeated the question, so it was not asked; the engine's rules "
    "found the question clear, and it was researched as asked."
)
ECHO_REPLACED = (
    "The model's question back repeated the question, so it was not asked; the engine's own "
    "question was asked instead."
)
#: Words any question back may use whatever it asks ("Could you say what exactly you mean?"): they
#: name nothing the person could answer.
ASKING_WORDS = frozenset(
    """mean meant exactly specific specifically particular like know want interested looking
    aspect aspects detail details clarify question asking asked say said could would""".split()
)
#: A question back whose words are the conversation's but for at most this share repeats it.
NEW_WORDS_SHARE = 0.2


def repeats(question: str, said: str) -> bool:
    """A question back that asks nothing the conversation left open: (nearly) all its words are
    the conversation's own ("How did lighthouse keepers live?" handed back, with or without a
    "Could you tell me"), or it has none beyond asking words ("What do you mean?"). A question
    about an open point names it: a period, a place, the options to choose between."""
    asked = {stem(w) for w in content_terms(question) if w not in ASKING_WORDS}
    if not asked:
        return True
    heard = {stem(w) for w in content_terms(said)}
    new = [w for w in asked if not any(_variant(w, h) for h in heard)]
    return len(new) <= NEW_WORDS_SHARE * len(asked)


def _variant(a: str, b: str) -> bool:
    """Two stems of one word ("liv" of lived, "live"): equal, or one the other's start of four
    letters or more, a short ending apart."""
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 3 and len(long) - len(short) <= 2 and long.startswith(short))
