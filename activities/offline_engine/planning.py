"""The planner: which steps to take (the coordinator and the query writer are coordinating.py).

It reads the question's surface form (questions.py), so its reasoning can name what it counted:
a plan of one step per aspect, topped up with aspect templates ("Limitations and pitfalls of X",
aspect_templates.py) to the depth's minimum.

Planner `min_steps` / `max_steps` count NEW steps: the workflow has already subtracted the
completed ones (as the OpenAI engine reads them too). A replan therefore adds only new steps, those
covering the reflector's uncovered terms first, and never repeats a completed step.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from activities.offline_engine.asking import subject_title
from activities.offline_engine.aspect_templates import (
    ENTITY_TEMPLATES,
    GENERAL_TASK_TEMPLATES,
    GENERAL_TEMPLATES,
    TASK_TEMPLATES,
    about_software,
)
from activities.offline_engine.aspects import _SCOPE, Decomposition, _join, decompose
from activities.offline_engine.questions import (
    _FRONTED,
    _focus,
    _question_and_qualifiers,
)
from activities.offline_engine.words import (
    PART_OF_QUESTION,
    TEMPLATE_WORDS,
    VAGUE,
    _capitalize,
    _clean_clause,
    _end,
    _Matcher,
    _quote,
    _short,
    _specific_terms,
    _stem,
    _words,
)
from workflows.activity_models import (
    AboutQuestion,
    PlanInput,
    PlanOutput,
    StepDraft,
)
from workflows.text import STOPWORDS, content_terms, unique

_TASK = re.compile(
    r"^how\s+(?:do|can|should|would|could)\s+(?:i|you|we|one)\s+(.+)$|^how\s+to\s+(.+)$", re.I
)
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")


def make_plan(inp: PlanInput) -> PlanOutput:
    """First plan: one step per aspect, then templates up to the minimum. Replan (or a first plan
    a reviewer sent back with feedback): only new steps, for the feedback's terms first, never
    repeating a completed step's title."""
    question, _ = _question_and_qualifiers(inp)
    room = max(0, inp.max_steps)
    wanted = min(max(1, inp.min_steps), room) if room else 0
    candidates, how = _candidate_steps(inp, inp.background)
    if not inp.completed_steps:
        steps = _fit([c for c in candidates if c.origin == "aspect"], room)
        templates = [c for c in candidates if c.origin == "template"]
        steps += templates[: max(0, wanted - len(steps))]
        drafts = [StepDraft(title=c.title, description=c.description) for c in steps]
        thought = (
            f"Rule-based decomposition: {how}; "
            f"{sum(c.origin == 'template' for c in steps)} template step(s) added to reach the minimum of {inp.min_steps}."
        )
        if inp.feedback:  # a first plan a reviewer sent back: keep it, add steps for what was asked
            extra = _replan(inp, candidates, room, 0).steps
            titles = {d.title.lower() for d in drafts}
            drafts = [*drafts, *(d for d in extra if d.title.lower() not in titles)]
            if (
                len(drafts) > room
            ):  # the reviewer's additions first, then the rest of the first plan
                added = drafts[len(drafts) - len(extra) :]
                drafts = [*drafts[: max(0, room - len(added))], *added][:room]
            thought += f" Revised for the reviewer's feedback: {'; '.join(inp.feedback)[:200]}."
        return PlanOutput(
            title=f"Research plan: {_short(question.split(chr(10), 1)[0], 14)}",
            thought=thought,
            steps=drafts,
        )
    return _replan(inp, candidates, room, wanted)


@dataclass(frozen=True)
class _Candidate:
    title: str
    description: str
    origin: str  # "aspect", "template" or "feedback"


def _candidate_steps(about: AboutQuestion, background: str) -> tuple[list[_Candidate], str]:
    """Every step the question suggests, aspects first, with a sentence saying how they were found."""
    question, answers = _question_and_qualifiers(about)
    subject, from_answers = _focus(about, background)
    parts = decompose(question)
    related = _related_terms(background, about.topic_text())
    context = f" Related terms from the first search: {', '.join(related)}." if related else ""
    aspects, skip, how = _aspects(parts, question, _clarified(about), subject, from_answers)
    if parts.subject and not from_answers:
        subject = parts.subject
    elif parts.kind == "single" and not from_answers:
        # Templates name the thing asked about ("sourdough starter"), never a verb or a measure
        # the question happens to start with ("feed", "long"); a question naming no thing gets none.
        named = subject_title(question)
        subject = _with_scope(named, _clean_clause(question)) if named else ""
    if aspects:
        aspects[0] = _Candidate(
            aspects[0].title, aspects[0].description + context, aspects[0].origin
        )
    task = _TASK.match(_clean_clause(question)) if parts.kind == "single" else None
    software = about_software(f"{question} {answers}")
    if task:
        x = _short(task.group(1) or task.group(2), 8)
        table = TASK_TEMPLATES if software else GENERAL_TASK_TEMPLATES
        templates = [(t.format(x=x), d.format(x=x)) for k, t, d in table if k != "standard"]
    elif not subject:
        templates = []
    else:
        works = "work" if _plural(subject) else "works"
        subject = _with_of(subject, question)
        templates = [
            (t.format(x=subject, X=_capitalize(subject), works=works), d.format(x=subject))
            for k, t, d in (ENTITY_TEMPLATES if software else GENERAL_TEMPLATES)
            if k not in skip
        ]
    extra = [_Candidate(_short(t, 16), d, "template") for t, d in templates]
    return _distinct([*aspects, *extra]), how


def _with_of(subject: str, question: str) -> str:
    """ "atmosphere" + "How thick is the atmosphere of Venus" → "atmosphere of Venus": the thing
    asked about with whose it is, so a template names it whole."""
    found = re.search(
        rf"\b{re.escape(subject)}\s+of\s+((?:the\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)", question
    )
    return f"the {subject} of {found.group(1)}" if found else subject


def _clarified(about: AboutQuestion) -> str:
    """What the person's answers and the follow-up add, as sentences for a step's description."""
    answered = "; ".join(about.clarifications).strip()
    clarified = f" The user clarified: {answered}." if answered else ""
    if about.follows_up.strip():
        clarified += f" It follows up: {_clean_clause(about.follows_up)}."
    return clarified


def _aspects(
    parts: Decomposition, question: str, clarified: str, subject: str, from_answers: bool
) -> tuple[list[_Candidate], set[str], str]:
    """One step per aspect of the question (its compared items, clauses, enumerated items, or the
    question itself); the templates the aspects make redundant; how they were found."""
    aspects: list[_Candidate] = []
    skip: set[str] = set()
    scope = f" {parts.scope}" if parts.scope else ""
    if parts.kind == "comparison":
        for item in parts.items:
            others = _join([i for i in parts.items if i != item])
            they = _plural(item)
            aspects.append(
                _Candidate(
                    _short(f"{item}{scope}"),
                    f"What {item} {'are' if they else 'is'}, how {'they behave' if they else 'it behaves'} and when "
                    f"{'they are' if they else 'it is'} used{scope}: the facts needed to compare "
                    f"{'them' if they else 'it'} with {others}.",
                    "aspect",
                )
            )
        aspects.append(
            _Candidate(
                _short(f"Comparison of {parts.subject}"),
                f"Differences between {parts.subject}: behaviour, performance, typical use and trade-offs.",
                "aspect",
            )
        )
        return (
            aspects,
            {"alternatives", "definition", "how"},
            (f"a comparison of {_quote(parts.items)}, one step each plus a comparison step"),
        )
    if parts.kind in ("clauses", "enumeration"):
        for item in parts.items:
            aspects.append(
                _Candidate(
                    _capitalize(_short(f"{item}{scope}")),
                    f"Find what the sources say about {item}{scope}{PART_OF_QUESTION}{_end(question)}{clarified}",
                    "aspect",
                )
            )
        skip = {"how"} if parts.kind == "enumeration" else set()
        kind = "clauses" if parts.kind == "clauses" else "enumerated items"
        return aspects, skip, f"{len(parts.items)} {kind} ({_quote(parts.items)})"
    title = _capitalize(_short(parts.items[0] if parts.items else question))
    if from_answers:
        title = _short(f"{title} ({subject})", 16)
    aspects.append(
        _Candidate(title, f"Answer the question directly: {_end(question)}{clarified}", "aspect")
    )
    opening = title.lower()
    if opening.startswith("how"):
        skip = {"how"}
    elif re.match(r"what(?:'s|\s+is|\s+are)\b", opening):
        skip = {"definition"}
    return aspects, skip, "one aspect (the question as asked)"


def _with_scope(subject: str, clause: str) -> str:
    """ "ownership" + "What is ownership in Rust" → "ownership in Rust": templates keep the scope."""
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
    """ "Python decorators", "list and tuple": plural; "asyncio.gather", "Rust's borrow checker": not."""
    words = phrase.lower().split()
    if not words:
        return False
    last = words[-1]
    if " and " in f" {phrase.lower()} " and not re.search(
        r"\b(?:in|for|with|on|under|when|within|using)\b", phrase.lower()
    ):
        return True
    return (
        last.endswith("s")
        and not last.endswith(("ss", "us", "is", "'s"))
        and "." not in last
        and len(last) > 3
    )


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
        t
        for t in content_terms(background)
        if _stem(t) not in asked
        and t not in VAGUE
        and not any(c.isdigit() for c in t)
        and len(t) > 2
    )
    return [t for t, n in counts.most_common() if n >= 2][:limit]


def _replan(inp: PlanInput, candidates: list[_Candidate], room: int, wanted: int) -> PlanOutput:
    """New steps only: those covering the feedback first, then unused aspects and templates."""
    question, _ = _question_and_qualifiers(inp)
    done_titles = {s.title.strip().lower() for s in inp.completed_steps}
    done_terms = [{_stem(t) for t in content_terms(s.title)} for s in inp.completed_steps]
    focus = _feedback_terms(inp.feedback)

    def repeats(c: _Candidate) -> bool:
        terms = {_stem(t) for t in content_terms(c.title)}
        return c.title.strip().lower() in done_titles or any(
            terms and terms <= d for d in done_terms
        )

    fresh = [c for c in candidates if not repeats(c)]
    covering: list[_Candidate] = []
    for term in focus:
        # A step whose title names the term, else one whose description does, else a new one.
        hit = next(
            (c for c in fresh if c not in covering and _Matcher([term]).found(c.title)), None
        ) or next(
            (c for c in fresh if c not in covering and _Matcher([term]).found(c.description)), None
        )
        if hit is None:
            if not _term_title(term, question):
                continue  # "How long?": a question that names no thing has no term to research apart
            hit = _Candidate(
                _term_title(term, question),
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
    return PlanOutput(
        title=f"Research plan: {_short(question.split(chr(10), 1)[0], 14)}",
        thought=thought,
        steps=drafts,
    )


def _term_title(term: str, question: str) -> str:
    """A step for an uncovered term, named by the question's own phrase around it ("handle
    recoverable errors" for "handle"), so it reads as part of the question, not "More on handle"."""
    words = _words(_clean_clause(question))
    at = next((i for i, w in enumerate(words) if _Matcher([term]).found(w)), None)
    if at is None:  # a term the feedback brought: it names itself
        return f"More on {term}"
    phrase: list[str] = []
    for word in words[at:]:
        if phrase and (word.lower() in _PHRASE_ENDS or len(phrase) >= 6):
            break
        phrase.append(word)
    while phrase and phrase[-1].lower() in STOPWORDS:
        phrase.pop()
    subject = subject_title(question)
    if len(phrase) >= 2:
        return _capitalize(" ".join(phrase))
    if subject and not _Matcher([term]).found(subject):
        return _short(f"{_capitalize(term)} in {subject}", 12)
    return f"More on {term}" if subject else ""  # "How long?": "long" is no thing to research


#: Words where a phrase taken from the question ends: a new clause or a qualifier begins.
_PHRASE_ENDS = frozenset(
    "but when while if because after before during with without for to".split()
)

_FEEDBACK_FILLER = frozenset(
    """step steps uncovered aspects aspect query term terms cover covers covering include including add
    mention discuss focus more less detail details drop remove skip instead plan
    critic critique report reports found naming named missing incomplete answer answers""".split()
)


def _feedback_terms(feedback: list[str]) -> list[str]:
    """What the feedback asks to cover: quoted terms, else its specific words."""
    terms: list[str] = []
    for item in feedback:
        quoted = _QUOTED.findall(item)
        if quoted:
            terms.extend(q.strip() for q in quoted)
        else:
            terms.extend(
                t
                for t in _specific_terms(item)
                if t not in TEMPLATE_WORDS and t not in _FEEDBACK_FILLER and not t.isdigit()
            )
    return unique(terms)[:5]
