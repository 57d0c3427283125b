"""Every `workflow.patched` id in one place, with when and why it was added.

A patch id marks a change of what a research records in history: a history recorded before the
change replays the old way (`workflow.patched` is False there), a new one takes the new way. Ids
are never renamed or reused (running researches and tests/workflow/histories replay by them);
an id may go only once no history without it can still be running, with a written reason. The
commit named is the one that added the id (`git show <commit>`).

Workflow code asks `applied(ID)`, not `workflow.patched(ID)`: a research started now records one
marker for all the ids of `ALL_OF_2026_11_24` instead of one each (and Temporal adds a search
attribute upsert to every marker: 15 events fewer for a light research, 20 for a medium one). A
history recorded before has no such marker: its first `applied` finds none (the SDK remembers
that answer for the whole run) and each id is asked as before. An id added later is asked alone.
"""

from __future__ import annotations

from temporalio import workflow

#: 2026-11-23, 3facaee: every cited sentence is checked against its evidence.
VERIFICATION = "claim-verification"
#: 2026-11-23, 3facaee: the research is saved to the library when it ends.
LIBRARY = "research-library"
#: 2026-11-23, 2693ab1 (issue 11): the critic's refining loop and the report review.
REFINING = "refining-loop"
#: 2026-11-23, 42ba156 (hardening): a loop-back request is judged for relevance before it adds a step.
LOOP_BACK_RELEVANCE = "loop-back-relevance"
#: 2026-11-23, 0f63d58 (issue 12): medium and extended reports are written section by section.
SECTIONED_REPORT = "sectioned-report"
#: 2026-11-23, deb59c4 (issue 13): the planner and the coordinator write the search queries.
QUERIES_WITH_PLAN = "queries-with-plan"
#: 2026-11-23, deb59c4 (issue 13): steps the plan marks independent are researched at once.
CONCURRENT_STEPS = "concurrent-steps"
#: 2026-11-24 (issue 20): "research what is missing" goes through the wave loop (reflection,
#: loop-backs, budgets, continue-as-new) instead of a serial loop of its own.
REFINE_THROUGH_LOOP = "refine-through-loop"
#: 2026-11-24 (issue 23): reviews only when a person asked for them: an `auto` report review
#: only when the research is `attended`, a plan review not again for each reflector ADJUST
#: (unless `review_replans`), and a report revised after review says so in its closing lines.
REVIEWS_WHEN_ASKED = "reviews-when-asked"
#: 2026-11-24 (issue 23): a call is admitted against the budgets by what its role's calls
#: cost so far in the research (with a margin), not by its `max_tokens`; until the first step is
#: researched, the reserve is only the report's one call; under a budget, a wave holds only the
#: steps the budget could pay for at once.
BUDGET_FROM_SERVED = "budget-from-served"
#: 2026-11-24 (issue 24): searches and reads of the local corpus run as local activities (one
#: marker event each, no task queue round trip), web page reads stay regular activities.
LOCAL_ACTIVITIES = "local-activities"
#: 2026-11-24 (issue 24): the coordinator classifies the question alongside the first routing call
#: (its result used when that call sends the question to research, dropped when it asks back).
CLASSIFY_WHILE_ROUTING = "classify-while-routing"
#: 2026-11-24 (issue 23): "the second one", "the last idea", "idea 2" name a point of the previous
#: answer in a follow-up, as "the second point" did (`Conversation.pointer_nouns` 2). Added to the
#: ids of 2026-11-24 before they were released (no research outside this machine had the marker).
FOLLOW_UP_NOUNS = "follow-up-nouns"
#: 2026-11-24 (issue 24): every id above, in one marker, for researches started from then on.
ALL_OF_2026_11_24 = "all-of-2026-11-24"
#: 2026-11-26 (issue 28): a research whose model has answered none of its calls fails when a call
#: runs out of retries for lack of any answer, instead of going on with every role's fallback.
#: Asked alone, and only at that moment: a research its model answers records no marker.
MODEL_ANSWERS = "model-answers"
#: 2026-11-27 (issue 32): notifications (the research asks which channels are configured and
#: starts a notifier when it completes, fails or waits for a person) and, for a run of a standing
#: research, the comparison with its previous run. Asked once, when the research begins.
STANDING_AND_NOTICES = "standing-and-notices"
#: 2026-11-26 (issue 31): a step whose observation over every page it read would not fit the
#: budget observes its passages cut to what fits (workflows/step_budget.py) instead of stopping
#: the research before it. Asked alone, and only when a step would not fit.
BUDGET_FITS_STEP = "budget-fits-a-step"
#: 2026-11-26 (issue 31, item 6): a report revised after review goes back to the person for
#: another round (at most `reviews.MAX_REVIEW_ROUNDS` in all) instead of completing by itself; the
#: last round's revision is final. Asked alone, when a report review begins.
REPORT_REVIEW_ROUNDS = "report-review-rounds"
#: 2026-11-27 (issue 36): a cited sentence is checked against what was read of its sources,
#: deterministically (workflows/alignment.py), and a model's judge decides only after passing
#: canaries made from that evidence (one more call per research). Asked once, when the report is
#: verified.
MEASURED_CITATIONS = "measured-citations"
#: 2026-11-27 (issue 36, item 6): a standing research's run is compared with its previous run by
#: what its findings rest on and say, and by each source's fingerprint, not by wording; a run
#: whose findings are only reworded is no change and sends no `standing.changed` notice. Asked
#: alone, once the previous run was read (histories before it compare by wording).
FINDINGS_MATCHED = "findings-matched"

ALL = (
    VERIFICATION,
    LIBRARY,
    REFINING,
    LOOP_BACK_RELEVANCE,
    SECTIONED_REPORT,
    QUERIES_WITH_PLAN,
    CONCURRENT_STEPS,
    REFINE_THROUGH_LOOP,
    REVIEWS_WHEN_ASKED,
    BUDGET_FROM_SERVED,
    LOCAL_ACTIVITIES,
    CLASSIFY_WHILE_ROUTING,
    FOLLOW_UP_NOUNS,
    ALL_OF_2026_11_24,
    MODEL_ANSWERS,
    STANDING_AND_NOTICES,
    BUDGET_FITS_STEP,
    REPORT_REVIEW_ROUNDS,
    MEASURED_CITATIONS,
    FINDINGS_MATCHED,
)
#: The ids `ALL_OF_2026_11_24` stands for (never add to it: a later id is asked alone).
_OF_2026_11_24 = frozenset(
    {
        VERIFICATION,
        LIBRARY,
        REFINING,
        LOOP_BACK_RELEVANCE,
        SECTIONED_REPORT,
        QUERIES_WITH_PLAN,
        CONCURRENT_STEPS,
        REFINE_THROUGH_LOOP,
        REVIEWS_WHEN_ASKED,
        BUDGET_FROM_SERVED,
        LOCAL_ACTIVITIES,
        CLASSIFY_WHILE_ROUTING,
        FOLLOW_UP_NOUNS,
    }
)


def applied(patch_id: str) -> bool:
    """`workflow.patched(patch_id)`, answered by one marker for the ids it covers (module docstring)."""
    if patch_id in _OF_2026_11_24 and workflow.patched(ALL_OF_2026_11_24):
        return True
    return workflow.patched(patch_id)
