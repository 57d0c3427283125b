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

from activities.offline_engine.observing import _cite, _prose_sentences
from activities.offline_engine.questions import _key_terms, _question_parts
from activities.offline_engine.words import _Matcher, _near_duplicate, _ranked, _uncited
from workflows import language
from workflows.activity_models import (
    AboutQuestion,
    OutlineInput,
    OutlineOutput,
    ReportSection,
    SectionInput,
    SectionOutput,
    SummaryInput,
    SummaryOutput,
    SynthesizeInput,
    SynthesizeOutput,
)
from workflows.citations import CITATION, escape
from workflows.models import Claim, Passage, StepStatus, Verdict
from workflows.text import bm25_scores, content_terms, split_sentences

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

_CITED_END = re.compile(r"\[\d+(?:\s*,\s*\d+)*\][.!?]+[\"”')]*(?=\s|$)")


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
        lines += [f"- [{s.id}] {escape(s.title)} — {s.url}" for s in listed]
        lines.append("")
    lines += ["---", "", _footer(inp)]
    claims = _claims(cited)
    return SynthesizeOutput(markdown="\n".join(lines).rstrip() + "\n", claims=claims, engine=ENGINE_NAME)


# --- a long report in pieces: outline, sections, summary (workflows/reporting.py assembles them) ---


def outline(inp: OutlineInput) -> OutlineOutput:
    """One section per completed step with findings, in the plan's order, headed by its title."""
    sections = [
        ReportSection(heading=step.title, brief=step.description, step_indexes=[i])
        for i, step in enumerate(inp.plan.steps)
        if step.status is StepStatus.COMPLETED and step.observation
    ]
    return OutlineOutput(title=_title(inp), lead=_lead(inp), sections=sections, footer=_footer(inp),
                         engine=ENGINE_NAME)


def write_section(inp: SectionInput) -> SectionOutput:
    """The section's steps' cited sentences as a list; a finding an earlier section already
    told (its steps' observations are `told_before`) is not told again."""
    known = {s.id for s in inp.sources}
    told = [_uncited(s.text) for text in inp.told_before for s in _report_sentences(text, {*known, *_ids(text)})]
    found: list[_Sentence] = []
    said = ""
    for step in inp.steps:
        sentences = _report_sentences(step.observation or "", known)
        found += [s for s in sentences if s.ids]
        said = said or _uncited(step.observation or "").strip()
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
        body = "_This section's sources repeat findings listed above._"
    else:
        body = f"_No cited findings for this section. {escape(said)}_"
    return SectionOutput(markdown=body, claims=_claims(fresh))


def summarize(inp: SummaryInput) -> SummaryOutput:
    """The sentences of all findings that best match the question, as one paragraph."""
    known = {s.id for s in inp.sources}
    everything: list[_Sentence] = []
    for step in inp.steps:
        for sentence in _report_sentences(step.observation or "", known):
            if sentence.ids and not any(_near_duplicate(_uncited(sentence.text), _uncited(e.text)) for e in everything):
                everything.append(sentence)
    chosen = _top_sentences(inp, everything, SUMMARY_SENTENCES, require_match=False)
    if not chosen:
        return SummaryOutput(markdown="The sections below found no sentence in their sources that could be cited.")
    return SummaryOutput(markdown=" ".join(s.text for s in chosen), claims=_claims(chosen))


def _title(about: AboutQuestion) -> str:
    question, _, _ = _question_parts(about)
    return escape(" ".join(question.split())) or "Research report"


def _lead(about: AboutQuestion) -> str:
    """What the question follows up and how it was clarified, in italics under the title."""
    _, answers, follow_up = _question_parts(about)
    lines = []
    if follow_up:
        lines.append(f"*Follow-up to: {escape(follow_up)}*")
    if answers:
        lines.append(f"*Clarified: {escape(answers)}*")
    return "\n\n".join(lines)


def _footer(about: AboutQuestion) -> str:
    """The disclaimer, and when the reader asked for another language, that it was not written."""
    if about.language.split("-")[0] == "en":
        return DISCLAIMER
    return (
        f"*The offline engine cannot write {language.name(about.language)}: this report quotes its "
        f"sources in their own language and its headings are in English.*\n\n{DISCLAIMER}"
    )


def _ids(text: str) -> set[int]:
    return {int(n) for m in CITATION.finditer(text) for n in m.group(1).split(",")}


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
        sections += [f"## {escape(step.title)}", ""]
        if fresh:
            sections += [f"- {s.text}" for s in fresh]
        elif found:
            sections.append("_This step's sources repeat findings listed above._")
        else:
            said = escape(_uncited(step.observation or "").strip())
            sections.append(f"_No cited findings for this step. {said}_")
        sections.append("")
        everything += fresh
    summary = _top_sentences(inp, everything, SUMMARY_SENTENCES, require_match=False)
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
        lines += [f"Planned but not researched: {escape('; '.join(skipped))}.", ""]
    return lines, [*summary, *everything]


def _direct_answer(about: AboutQuestion, passages: list[Passage], known: set[int]) -> tuple[list[str], list[_Sentence]]:
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
            ids = tuple(dict.fromkeys(int(n) for m in CITATION.finditer(text) for n in m.group(1).split(",")))
            if text:
                out.append(_Sentence(text, ids))
    return out


def _keep_known(text: str, known: set[int]) -> str:
    def keep(match: re.Match[str]) -> str:
        good = [n for n in (int(p) for p in match.group(1).split(",")) if n in known]
        return f"[{', '.join(map(str, good))}]" if good else ""

    return re.sub(r"\s+([.!?])", r"\1", CITATION.sub(keep, text)).strip()


def _top_sentences(about: AboutQuestion, sentences: list[_Sentence], k: int, require_match: bool) -> list[_Sentence]:
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
            claims.append(Claim(text=text, source_ids=list(sentence.ids), verdict=Verdict.UNVERIFIED))
    return claims
