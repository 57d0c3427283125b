"""The synthesizer: an extractive report from the cited observations, and the claims it makes.

Nothing is paraphrased, so nothing can be made up: the summary and each step's section are
sentences the researcher quoted, with their `[n]`, a finding listed once however many steps found
it, and only cited sources listed; the report ends by saying it was made offline by extraction.
Text from elsewhere (notes, titles, the question) has its `[n]` escaped, so the only citations in
the report are the engine's own, and every cited sentence becomes a claim for verification.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from activities.offline_engine.asking import ask_of, unanswered
from activities.offline_engine.aspects import decompose
from activities.offline_engine.observing import _cite, _prose_sentences
from activities.offline_engine.questions import _key_terms, _question_parts
from activities.offline_engine.words import _Matcher, _near_duplicate, _ranked, _uncited
from workflows.activity_models import (
    AboutQuestion,
    SynthesizeInput,
    SynthesizeOutput,
)
from workflows.kit.citations import CITATION, escape, origin, reference
from workflows.models import Claim, Passage, PlanStep, StepStatus, Verdict
from workflows.report_models import (
    OutlineInput,
    OutlineOutput,
    ReportSection,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
)
from workflows.text import bm25_scores, content_terms, language, split_sentences

#: The engine's name, as its reports record it (`OfflineEngine.name`).
ENGINE_NAME = "offline"

#: Report size: sentences in the summary, and in a direct answer.
SUMMARY_SENTENCES = 3
DIRECT_ANSWER_SENTENCES = 5

DISCLAIMER = (
    "*Made offline by extractive methods (BM25 sentence ranking over the sources read), with no LLM: "
    "the findings above are sentences quoted from the sources they cite, not written or checked by a model. "
    "For written reports, configure an LLM: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local "
    "OpenAI-compatible server such as Ollama or vLLM.*"
)

_CITED_END = re.compile(CITATION.pattern + r"[.!?]+[\"”')]*(?=\s|$)")


@dataclass(frozen=True)
class _Sentence:
    text: str  # with its [n] markers
    ids: tuple[int, ...]


def write_report(inp: SynthesizeInput) -> SynthesizeOutput:
    """An extractive report: title, notes, summary, one section per completed step, sources."""
    known = {s.id for s in inp.sources}
    lines = [f"# {_title(inp)}", ""]
    if _lead(inp):
        lines += [_lead(inp), ""]
    if inp.notes:
        lines += ["\n>\n".join(f"> **Note:** {escape(n)}" for n in inp.notes), ""]
    cited: list[_Sentence] = []
    if inp.plan is None:
        body, cited = _direct_answer(inp, inp.passages, known)
        lines += body
    else:
        body, cited = _plan_sections(inp, known)
        lines += body
    used = [n for s in cited for n in s.ids]
    listed = sorted((s for s in inp.sources if s.id in set(used)), key=lambda s: s.id)
    if listed:
        lines += ["## Sources", ""]
        lines += [f"- [{s.id}] {reference(s)} — {s.url} ({origin(s)})" for s in listed]
        lines.append("")
    lines += ["---", "", _footer(inp)]
    claims = _claims(cited)
    return SynthesizeOutput(
        markdown="\n".join(lines).rstrip() + "\n", claims=claims, engine=ENGINE_NAME
    )


# --- a long report in pieces: outline, sections, summary (workflows/checks/reporting.py assembles them) ---


def outline(inp: OutlineInput) -> OutlineOutput:
    """One section per completed step with findings of its own, in the plan's order, headed by its
    title; a step whose findings all repeat an earlier step's joins that step's section, and the
    steps that found nothing citable share one closing section (no heading stands over nothing)."""
    groups = _step_groups(inp.plan.steps, {s.id for s in inp.sources})
    sections = [
        ReportSection(
            heading=inp.plan.steps[g[0]].title,
            brief=inp.plan.steps[g[0]].description,
            step_indexes=g,
        )
        for g in groups.findings
    ]
    if groups.empty:
        sections.append(
            ReportSection(
                heading=NOT_FOUND_HEADING,
                brief="What the sources did not say.",
                step_indexes=groups.empty,
            )
        )
    return OutlineOutput(
        title=_title(inp),
        lead=_lead(inp),
        sections=sections,
        footer=_footer(inp),
        engine=ENGINE_NAME,
    )


#: The closing section of the steps whose sources had no sentence to cite.
NOT_FOUND_HEADING = "Not found in the sources"


@dataclass(frozen=True)
class _Groups:
    findings: list[
        list[int]
    ]  # step indexes per section: the step with fresh findings, then its repeats
    empty: list[int]  # completed steps with no cited sentence


def _step_groups(steps: list[PlanStep], known: set[int]) -> _Groups:
    """Completed steps grouped for the report: findings told once, under the first step that found
    them; a step with nothing new joins the latest section it repeats; steps without findings apart."""
    groups: list[list[int]] = []
    empty: list[int] = []
    told: list[tuple[int, str]] = []  # (group, finding) in the order found
    for i, step in enumerate(steps):
        if step.status is not StepStatus.COMPLETED or not step.observation:
            continue
        found = [_uncited(s.text) for s in _report_sentences(step.observation, known) if s.ids]
        if not found:
            empty.append(i)
            continue
        repeats = [next((g for g, t in told if _near_duplicate(f, t)), None) for f in found]
        if all(r is not None for r in repeats):
            # The latest section it repeats: an earlier one would tell that section's findings
            # before it, and leave it nothing to say (write_section's `told_before`).
            groups[max(r for r in repeats if r is not None)].append(i)
            continue
        groups.append([i])
        told += [(len(groups) - 1, f) for f, r in zip(found, repeats, strict=False) if r is None]
    return _Groups(groups, empty)


def write_section(inp: SectionInput) -> SectionOutput:
    """The section's steps' cited sentences as a list; a finding an earlier section already
    told (its steps' observations are `told_before`) is not told again. A section of steps that
    found nothing says, step by step, what was looked for and why nothing could be cited."""
    known = {s.id for s in inp.sources}
    told = [
        _uncited(s.text)
        for text in inp.told_before
        for s in _report_sentences(text, {*known, *_ids(text)})
    ]
    found = [
        s for step in inp.steps for s in _report_sentences(step.observation or "", known) if s.ids
    ]
    fresh: list[_Sentence] = []
    for sentence in found:
        plain = _uncited(sentence.text)
        if not any(_near_duplicate(plain, t) for t in told) and not any(
            _near_duplicate(plain, _uncited(f.text)) for f in fresh
        ):
            fresh.append(sentence)
    if fresh:
        body = "\n".join(f"- {s.text}" for s in fresh)
    elif found:
        body = "_The findings of this section are listed above._"
    else:
        body = "\n".join(_not_found(step) for step in inp.steps)
    return SectionOutput(markdown=body, claims=_claims(fresh))


def _not_found(step: PlanStep) -> str:
    """ "- Storing sourdough loaves: the 3 sources read have no sentence with ..." (one line)."""
    said = escape(_uncited(step.observation or "").strip()) or "nothing was found."
    return f"- {escape(step.title)}: {said}"


def summarize(inp: SummaryInput) -> SummaryOutput:
    """The findings that best answer the question, as one paragraph (see `_summary`)."""
    known = {s.id for s in inp.sources}
    everything: list[_Sentence] = []
    by_step: list[list[_Sentence]] = []
    for step in inp.steps:
        fresh: list[_Sentence] = []
        for sentence in _report_sentences(step.observation or "", known):
            if sentence.ids and not any(
                _near_duplicate(_uncited(sentence.text), _uncited(e.text)) for e in everything
            ):
                everything.append(sentence)
                fresh.append(sentence)
        by_step.append(fresh)
    text, chosen = _summary(inp, by_step)
    return SummaryOutput(
        markdown=text
        or "The sections below found no sentence in their sources that could be cited.",
        claims=_claims(chosen),
    )


#: Sentences that send the reader elsewhere rather than say something: no summary leads with them.
_POINTER = re.compile(
    r"^(?:for\s+(?:more|further)\s+(?:information|details)|see\b|refer\s+to)", re.I
)


def _summary(about: AboutQuestion, by_step: list[list[_Sentence]]) -> tuple[str, list[_Sentence]]:
    """(paragraph, the findings it quotes), from each step's new findings in the plan's order.

    A finding qualifies when it names the question's subject and what the question asks of it
    (asking.py) and at least one of its key terms; those that say more of what was asked come
    first, pointers ("For more information, see ...") last. A one-aspect question is answered
    by the step that asked it as asked (the plan's first), in the researcher's order; a question
    of several aspects gets one finding per aspect in turn. When findings exist but none qualifies, the summary says plainly that the sources do
    not answer the question and quotes nothing: a sentence about the subject is not an answer."""
    findings = [f for step in by_step for f in step]
    if not findings:
        return "", []
    question = _question_parts(about)[0]
    ask = ask_of(question)
    matcher = _Matcher(_key_terms(about, limit=12) or content_terms(about.topic_text()))

    def qualifies(f: _Sentence) -> bool:
        return ask.answers(_uncited(f.text)) and bool(matcher.found(_uncited(f.text)))

    steps = [[f for f in step if qualifies(f)] for step in by_step]
    if decompose(question).kind == "single":
        order = [f for step in steps for f in step]
    else:  # round robin: the first finding of each aspect, then the second ...
        order = [
            step[k]
            for k in range(max(map(len, steps), default=0))
            for step in steps
            if k < len(step)
        ]
    # the findings that say most of what was asked first, pointers last (a stable sort: else
    # in the order above)
    order.sort(
        key=lambda f: (
            bool(_POINTER.match(_uncited(f.text).strip())),
            -len(ask.asked_in(_uncited(f.text))),
        )
    )
    chosen = order[:SUMMARY_SENTENCES]
    if chosen:
        return " ".join(s.text for s in chosen), chosen
    return unanswered(ask, [_uncited(f.text) for f in findings]), []


def _title(about: AboutQuestion) -> str:
    """The question as meant (a pasted answer, such as code, stays in "Clarified")."""
    question, _, _ = _question_parts(about)
    return escape(" ".join(question.split("\n", 1)[0].split())) or "Research report"


def _lead(about: AboutQuestion) -> str:
    """What was asked (when the title is the clarified question), what it follows up and how it
    was clarified, in italics under the title."""
    question, answers, follow_up = _question_parts(about)
    lines = []
    if " ".join(question.split()) != " ".join(about.query.split()):
        lines.append(f"*Asked: {escape(' '.join(about.query.split()))}*")
    if follow_up:
        lines.append(f"*Follow-up to: {escape(follow_up)}*")
    if answers:
        lines.append(f"*Clarified: {escape(answers)}*")
    if said := _language_line(about):
        lines.append(said)
    return "\n\n".join(lines)


def _footer(about: AboutQuestion) -> str:
    """The disclaimer (the language the report is in is said once, at the top: `_lead`)."""
    return DISCLAIMER


def _language_line(about: AboutQuestion) -> str:
    """When another language was asked for, what the reader gets instead, said once and plainly."""
    if about.language.split("-")[0] == "en":
        return ""
    return (
        f"*This report is not in {language.name(about.language)}: the offline engine cannot translate, "
        "so it quotes its sources in their own language under English headings.*"
    )


def _ids(text: str) -> set[int]:
    return {int(n) for m in CITATION.finditer(text) for n in m.group(1).split(",")}


def _plan_sections(inp: SynthesizeInput, known: set[int]) -> tuple[list[str], list[_Sentence]]:
    """The summary, a section per group of steps (see `_step_groups`), then the steps that found
    nothing, under one heading."""
    assert inp.plan is not None
    steps = inp.plan.steps
    groups = _step_groups(steps, known)
    sections: list[str] = []
    everything: list[_Sentence] = []
    by_group: list[list[_Sentence]] = []
    for group in groups.findings:
        found = [
            s for i in group for s in _report_sentences(steps[i].observation or "", known) if s.ids
        ]
        fresh: list[_Sentence] = []
        for sentence in found:
            if not any(
                _near_duplicate(_uncited(sentence.text), _uncited(e.text))
                for e in [*everything, *fresh]
            ):
                fresh.append(sentence)
        sections += [f"## {escape(steps[group[0]].title)}", "", *(f"- {s.text}" for s in fresh), ""]
        everything += fresh
        by_group.append(fresh)
    if groups.empty:
        sections += [
            f"## {NOT_FOUND_HEADING}",
            "",
            *(_not_found(steps[i]) for i in groups.empty),
            "",
        ]
    text, summary = _summary(inp, by_group)
    if not text:
        text = (
            "The steps below found no sentence in their sources that could be cited."
            if groups.empty
            else "No findings were gathered before the research ended."
        )
    lines = ["## Summary", "", text, "", *sections]
    skipped = [s.title for s in steps if s.status is not StepStatus.COMPLETED]
    if skipped:
        lines += [f"Planned but not researched: {escape('; '.join(skipped))}.", ""]
    return lines, [*summary, *everything]


def _direct_answer(
    about: AboutQuestion, passages: list[Passage], known: set[int]
) -> tuple[list[str], list[_Sentence]]:
    """No plan (a simple question): the passages' sentences that best match the question."""
    candidates = [
        _Sentence(_cite(s, p.source_id), (p.source_id,))
        for p in passages
        if p.source_id in known
        for s in _prose_sentences(p.text)
    ]
    chosen = _top_sentences(about, candidates, DIRECT_ANSWER_SENTENCES, require_match=True)
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
            ids = tuple(
                dict.fromkeys(
                    int(n) for m in CITATION.finditer(text) for n in m.group(1).split(",")
                )
            )
            if text:
                out.append(_Sentence(text, ids))
    return out


def _keep_known(text: str, known: set[int]) -> str:
    def keep(match: re.Match[str]) -> str:
        good = [n for n in (int(p) for p in match.group(1).split(",")) if n in known]
        return f"[{', '.join(map(str, good))}]" if good else ""

    return re.sub(r"\s+([.!?])", r"\1", CITATION.sub(keep, text)).strip()


def _top_sentences(
    about: AboutQuestion, sentences: list[_Sentence], k: int, require_match: bool
) -> list[_Sentence]:
    """The k sentences that best match the question (BM25), skipping near-duplicates. Without
    `require_match`, sentences that match nothing may follow, in their order (a summary's lead)."""
    if not sentences:
        return []
    matcher = _Matcher(_key_terms(about, limit=12) or content_terms(about.topic_text()))
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
            claims.append(
                Claim(text=text, source_ids=list(sentence.ids), verdict=Verdict.UNVERIFIED)
            )
    return claims
