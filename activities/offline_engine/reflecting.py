"""The reflector: enough research, or more, decided from two figures it reports.

Coverage is the share of the question's specific terms that cited observations mention; novelty is
the share of the latest step's words that no earlier observation had. The thresholds are constants
here so a reasoning such as "coverage 0.67 (2/3 query terms)" can be checked by hand.

An observation counts as evidence only when it cites a source: "nothing was found" texts mention
the query's words but cover nothing.
"""

from __future__ import annotations

from activities.offline_engine.questions import _key_terms
from activities.offline_engine.words import _Matcher, _quote, _stem, _uncited
from workflows.activity_models import ReflectInput, ReflectOutput
from workflows.kit.citations import CITATION
from workflows.models import PlanStep, ReflectionDecision, StepStatus
from workflows.text import content_terms

#: Reflection thresholds.
COVERAGE_COMPLETE = 0.8
NOVELTY_LOW = 0.2


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
    terms = _key_terms(inp, limit=12)
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
        return _reflection(
            ReflectionDecision.COMPLETE, f"{figures}: coverage reached {COVERAGE_COMPLETE}."
        )
    if done >= inp.min_steps and not pending:
        return _reflection(
            ReflectionDecision.COMPLETE, f"{figures}: no steps left and the minimum is met."
        )
    if not pending:
        missing = inp.min_steps - done
        more = changes or [f"{missing} more step(s) on aspects not yet researched"]
        return _reflection(
            ReflectionDecision.ADJUST,
            f"{figures}: no steps left below the minimum; plan {missing} more.",
            more,
        )
    if low_novelty and uncovered:
        return _reflection(
            ReflectionDecision.ADJUST,
            f"{figures}: the latest step added little and {_quote(uncovered[:5])} are not covered.",
            changes,
        )
    reason = (
        "the latest step added new material"
        if not low_novelty
        else "nothing uncovered to replan for"
    )
    return _reflection(ReflectionDecision.CONTINUE, f"{figures}: {reason}; next step.")


def _reflection(
    decision: ReflectionDecision, reasoning: str, changes: list[str] | None = None
) -> ReflectOutput:
    return ReflectOutput(decision=decision, reasoning=reasoning, suggested_changes=changes or [])


def _is_evidence(step: PlanStep) -> bool:
    """Only an observation that cites a source is evidence; 'nothing found' texts are not."""
    return bool(step.observation) and (
        bool(step.source_ids) or bool(CITATION.search(step.observation or ""))
    )


def _novelty(completed: list[PlanStep]) -> tuple[float, int, int, str]:
    """(novelty, new words, words, title) of the last completed step against the ones before it."""
    if not completed:
        return 0.0, 0, 0, ""
    latest = completed[-1]
    if not _is_evidence(latest):
        return 0.0, 0, 0, latest.title
    before = {
        _stem(t)
        for s in completed[:-1]
        if _is_evidence(s)
        for t in content_terms(_uncited(s.observation or ""))
    }
    words = list(dict.fromkeys(_stem(t) for t in content_terms(_uncited(latest.observation or ""))))
    new = [w for w in words if w not in before]
    return (len(new) / len(words) if words else 0.0), len(new), len(words), latest.title
