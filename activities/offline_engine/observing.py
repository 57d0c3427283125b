"""The researcher: a step's observation is its sources' best sentences, quoted and cited.

Extraction, not writing: a sentence is chosen, never composed. Which sentences count is the whole
craft, so it is stated here: prose only (code, tables, headings and labels are left out, by fence
and by shape), relevant only when it names the step's own words and the question's core terms
and is about the step's subject (workflows/text/subjects.py), ranked by BM25, near-duplicates
skipped, a few per source, each cited `[n]` before its final punctuation. A step that finds fewer than two relevant sentences asks for a broader step
(loop-back). The synthesizer's direct answer reuses the same sentence selection.
"""

from __future__ import annotations

import re
from collections import Counter

from activities.offline_engine.aspects import _strip_function_words
from activities.offline_engine.questions import (
    _key_terms,
    _question_and_qualifiers,
    subject_of,
)
from activities.offline_engine.words import (
    _QUESTION_WORDS,
    ASPECT_TEMPLATE_WORDS,
    TEMPLATE_WORDS,
    _capitalize,
    _clean_clause,
    _Matcher,
    _near_duplicate,
    _quote,
    _short,
    _stem,
    _uncited,
    _words,
    plain_words,
)
from workflows.activity_models import AboutQuestion, ObserveOutput
from workflows.kit.citations import CITATION
from workflows.models import OBSERVATION_LIMIT, Passage, PlanStep
from workflows.text import (
    bm25_scores,
    content_terms,
    split_paragraphs,
    split_sentences,
    subjects,
    tokenize,
    trim,
    unique,
)

_SIGNATURE = re.compile(
    r"^((?:async\s+|class\s+)?[A-Za-z_][\w.]*(?:\([^`]*?\))?)\s+[—–-]{1,2}\s+(\S.*)$"
)

#: Observation size: a handful of sentences, each short enough to read.
MAX_OBSERVATION_SENTENCES = 5
MAX_SENTENCES_PER_SOURCE = 3
MAX_SENTENCE_CHARS = 400


def observe_step(about: AboutQuestion, step: PlanStep, passages: list[Passage]) -> ObserveOutput:
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
    broader = _broader(step, about)
    if not passages:
        return _loop_back(f'No sources were found for "{step.title}".', broader)
    relevant, needed, core = _relevant_sentences(about, step, passages)
    chosen, found = _chosen(relevant)
    if not chosen:
        read = _quote(unique(p.title for p in passages)[:3])
        return _loop_back(
            f"The {len(passages)} source(s) read for this step ({read}) have no sentence with "
            f"{'two of ' if needed == 2 else ''}its terms ({_quote(_Matcher(core).terms[:6])}).",
            broader,
        )
    observation = " ".join(_cite(s, n) for n, s in chosen)
    return ObserveOutput(
        observation=observation,
        source_ids=list(dict.fromkeys(n for n, _ in chosen)),
        needs_more=found < 2,
        suggested_agent="researcher" if found < 2 else None,
        suggested_query=broader if found < 2 else None,
    )


def weighed_quotes(
    about: AboutQuestion, step: PlanStep, passages: list[Passage], quoted: list[tuple[int, str]]
) -> ObserveOutput:
    """A model's observation that only quotes (each of its sentences stands word for word in the
    source it cites), weighed as the engine weighs its own choice: the quotes it finds relevant to
    the step come first, in the engine's words of the sentence, then the engine's own best up to
    the observation's limits; with no relevant quote, the engine's own observation. A small model
    copies a sentence that is there but about something else ("Reviewers often look for clones
    added only to silence a borrow error" for "How does ownership work in Rust"), or one sentence
    where the step's sources hold five: the report is written from observations, and was thin."""
    relevant, _, _ = _relevant_sentences(about, step, passages)
    kept = [
        found
        for source_id, sentence in quoted
        for found in relevant
        if found[0] == source_id and _same_sentence(sentence, found[1])
    ]
    return _led_by(kept, relevant) or observe_step(about, step, passages)


def led_by_sources(
    about: AboutQuestion, step: PlanStep, passages: list[Passage], source_ids: list[int]
) -> ObserveOutput:
    """The step's relevant sentences with those of the sources a model chose first, then the
    others' up to the observation's limits. A small model's choice is a hint, not the whole step:
    SmolLM2 chose the page on a light's range alone for "How did the Fresnel lens change
    lighthouse range?", and quoted from it alone the observation was one sentence while the
    Fresnel lens's own page, read by the same step, held four; the report had one claim."""
    relevant, _, _ = _relevant_sentences(about, step, passages)
    first = [found for found in relevant if found[0] in source_ids]
    return _led_by(first, relevant) or observe_step(about, step, passages)


def _led_by(first: list[tuple[int, str]], relevant: list[tuple[int, str]]) -> ObserveOutput | None:
    """FIRST, then the rest of RELEVANT, chosen within the observation's limits; none without a
    first sentence (the caller's own observation then stands)."""
    if not first:
        return None
    rest = [r for r in relevant if r not in first]
    chosen, found = _chosen(list(dict.fromkeys(first)) + rest)
    return ObserveOutput(
        observation=" ".join(_cite(s, n) for n, s in chosen),
        source_ids=list(dict.fromkeys(n for n, _ in chosen)),
        needs_more=found < 2,
    )


def joined_by_quotes(
    about: AboutQuestion,
    step: PlanStep,
    passages: list[Passage],
    observation: str,
    source_ids: list[int],
) -> ObserveOutput:
    """A faithful observation of one sentence, followed by the step's relevant sentences it does
    not say already (those of the sources the model chose first), within the observation's
    limits. The model's words stay as they are; the report is written from observations, and a
    small model's one faithful sentence, where the step's sources held more, made it thin."""
    said = [(0, _uncited(sentence)) for sentence in split_sentences(observation)]
    relevant, _, _ = _relevant_sentences(about, step, passages)
    # A sentence the model put in its own words is not quoted beside it.
    unsaid = [r for r in relevant if not any(_paraphrases(s, r[1]) for _, s in said)]
    ordered = [r for r in unsaid if r[0] in source_ids] + [
        r for r in unsaid if r[0] not in source_ids
    ]
    added, _ = _chosen(ordered, said=said, length=len(observation) + 1)
    return ObserveOutput(
        observation=" ".join([observation, *(_cite(s, n) for n, s in added)]),
        source_ids=list(dict.fromkeys([*source_ids, *(n for n, _ in added)])),
        needs_more=len(said) + len(added) < 2,
    )


def _paraphrases(words: str, sentence: str) -> bool:
    """WORDS say SENTENCE again: four in five of their content words stand in it (a step's
    sentences share its subject's words, so fewer would call them all the same)."""
    own = {_stem(t) for t in content_terms(words)}
    theirs = {_stem(t) for t in content_terms(sentence)}
    return bool(own) and len(own & theirs) * 5 >= len(own) * 4


def _same_sentence(quote: str, sentence: str) -> bool:
    """A quote of this sentence: all of it, a part of it, or its words but for markup."""
    a, b = plain_words(_uncited(quote)), plain_words(_uncited(sentence))
    return (len(a) > 20 and a in b) or (bool(b) and b in a) or _near_duplicate(quote, sentence)


def _loop_back(observation: str, broader: str) -> ObserveOutput:
    """Nothing to cite: the observation says why, and a broader step is asked for."""
    return ObserveOutput(
        observation=observation,
        source_ids=[],
        needs_more=True,
        suggested_agent="researcher",
        suggested_query=broader,
    )


def _relevant_sentences(
    about: AboutQuestion, step: PlanStep, passages: list[Passage]
) -> tuple[list[tuple[int, str]], int, list[str]]:
    """The passages' relevant sentences as (source id, sentence), best first; how many core terms
    a sentence needs; the core terms (see `observe_step`)."""
    own_terms = _title_terms(step.title)
    core = [*own_terms, *_key_terms(about)]
    asked = [
        t for t in content_terms(f"{step.title} {step.description}") if t in ASPECT_TEMPLATE_WORDS
    ]
    extra = [t for t in content_terms(step.description) if t not in TEMPLATE_WORDS]
    matcher = _Matcher([*core, *asked, *extra])
    core_terms = set(_Matcher(core).all_terms)
    title_terms = set(_Matcher(own_terms).all_terms) or core_terms
    sentences = [(p.source_id, s) for p in passages for s in _prose_sentences(p.text)]
    tokenized = [matcher.tokens(s) for _, s in sentences]
    in_title = {p.source_id: core_terms.intersection(matcher.tokens(p.title)) for p in passages}
    scores = bm25_scores(matcher.all_terms, tokenized)
    needed = min(2, len(core_terms))
    on_topic = [len(title_terms.intersection(t)) for t in tokenized]
    ranked = sorted(range(len(sentences)), key=lambda i: (-on_topic[i], -round(scores[i], 9), i))
    # about the step's subject, not another one with the same kind of fact (a Martian
    # year's section never quotes Venus's rotation, however well its words match).
    about_step = subjects.subject(step.title, about.meant(), [(p.title, p.text) for p in passages])
    titles = {p.source_id: p.title for p in passages}
    relevant = [
        sentences[i]
        for i in ranked
        if scores[i] > 0
        and on_topic[i]
        and len(core_terms.intersection(tokenized[i]) | in_title[sentences[i][0]]) >= needed
        and about_step.other(sentences[i][1], [titles[sentences[i][0]]]) is None
    ]
    return relevant, needed, core


def _chosen(
    relevant: list[tuple[int, str]], said: list[tuple[int, str]] | None = None, length: int = 0
) -> tuple[list[tuple[int, str]], int]:
    """The sentences quoted, within the observation's limits (a few, a few per source, no near
    duplicates, OBSERVATION_LIMIT characters), and how many relevant sentences there were
    (near duplicates of a quoted one not counted). SAID, LENGTH characters long, is already in
    the observation: it counts toward the limits and is not repeated."""
    said = said or []
    chosen: list[tuple[int, str]] = []
    per_source: Counter[int] = Counter(n for n, _ in said)
    found = 0
    for source_id, sentence in relevant:
        found += 1
        if (
            len(said) + len(chosen) >= MAX_OBSERVATION_SENTENCES
            or per_source[source_id] >= MAX_SENTENCES_PER_SOURCE
        ):
            continue
        if any(_near_duplicate(sentence, s) for _, s in [*said, *chosen]):
            found -= 1
            continue
        cited = _cite(sentence, source_id)
        if length + len(cited) + 1 > OBSERVATION_LIMIT:
            continue
        chosen.append((source_id, sentence))
        per_source[source_id] += 1
        length += len(cited) + 1
    return chosen, found


def _title_terms(title: str) -> list[str]:
    return [t for t in content_terms(title) if t not in TEMPLATE_WORDS]


def _broader(step: PlanStep, about: AboutQuestion) -> str:
    """A broader reformulation for a loop-back step: the step's subject alone, without the aspect
    it asked for ("Limitations and pitfalls of asyncio.gather" → "Overview of asyncio.gather")."""
    phrase = _strip_function_words(
        " ".join(w for w in _words(step.title) if w.lower() not in TEMPLATE_WORDS)
    )
    if re.match(rf"{_QUESTION_WORDS}\b", step.title.strip(), re.I) or len(phrase.split()) > 5:
        phrase = subject_of(step.title)
    subject = (
        phrase or subject_of(_question_and_qualifiers(about)[0]) or " ".join(_key_terms(about)[:3])
    )
    broader = (
        f"Overview of {subject}"
        if subject
        else f"Overview: {_short(_clean_clause(about.topic_text()), 8)}"
    )
    return (
        broader
        if broader.lower() != step.title.strip().lower()
        else f"Background on {subject or step.title}"
    )


# --- sentence selection -----------------------------------------------------------------------------


def _prose_sentences(text: str) -> list[str]:
    """Readable sentences of a passage: markup removed, code, tables and headings left out."""
    out = []
    for paragraph in _outside_code(text):
        for sentence in split_sentences(paragraph):
            sentence = _clean_sentence(sentence)
            if _quotable(sentence):
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
    s = CITATION.sub("", s)
    s = re.sub(r"^\s*(?:#{1,6}|>|[-*•]|\d{1,2}[.)])\s+", "", s)
    s = " ".join(s.split())
    signature = _SIGNATURE.match(s)
    if signature:
        s = f"`{signature.group(1)}` — {_capitalize(signature.group(2))}"
    return s


_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def _quotable(sentence: str) -> bool:
    """A sentence of words: long enough, shaped like a sentence, not code, a table or a label.

    Code fences cannot always be tracked (a passage is an excerpt, a fence may open outside it),
    so code is also recognised by its shape: it starts in lower case ("rust,ignore ...") or has
    braces, `::`, `=>` or an assignment outside backticks.
    """
    unspaced = bool(_UNSPACED.search(sentence))  # Chinese, Japanese: words are not spaced
    if (
        len(sentence) < (15 if unspaced else 40)
        or len(tokenize(sentence) if unspaced else sentence.split()) < 6
    ):
        return False
    first = sentence[0]
    # In any script: a capital, a caseless letter (CJK, Arabic), a digit or an opening mark; a
    # lower-case start is code ("rust,ignore ...") or a fragment.
    if not (
        first.isupper()
        or (first.isalpha() and not first.islower())
        or first.isdigit()
        or first in "`\"'(*_“‘"
    ):
        return False
    if not re.search(r"[.!?。！？][\"”')\]*]*$", sentence):
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
    match = re.match(r"^(.*?)([.!?。！？]+[\"”')\]]*)$", sentence)
    if match and match.group(1):
        return f"{match.group(1)} [{source_id}]{match.group(2)}"
    if sentence.endswith("…"):
        return f"{sentence.rstrip('…').rstrip()}… [{source_id}]."
    return f"{sentence} [{source_id}]."
