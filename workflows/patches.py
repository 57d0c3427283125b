"""The record of the workflow's patches (`workflow.patched` ids), release line by release line.

A patch id marks a change of what a research records in history: a history recorded before the
change replays the old way (`workflow.patched(ID)` is False there), a research started after takes
the new way. Ids are never renamed or reused: running researches and the stored histories in
tests/workflow/histories replay by them.

## Before v0.1.0: every gate folded on 2026-11-27

The product had not been released: no research outside the developers' machines ran code from
before v0.1.0. So on 2026-11-27 every gate was folded: only the new path of each is
left, the old paths and the code only they used are gone, and the stored histories were recorded
again from real runs of the folded code (tests/workflow/histories/record.py). A research started
on v0.1.0 records no patch marker. The ids below are retired: never use them again. Each with the
date and commit that added it and what it gated:

- `claim-verification` (2026-11-23, 3facaee): every cited sentence checked against its evidence.
- `research-library` (2026-11-23, 3facaee): the research saved to the library when it ends.
- `refining-loop` (2026-11-23, 2693ab1): the critic's refining loop and report review.
- `loop-back-relevance` (2026-11-23, 42ba156): a loop-back request judged for relevance first.
- `sectioned-report` (2026-11-23, 0f63d58): medium and extended reports by sections.
- `queries-with-plan` (2026-11-23, deb59c4): the planner and coordinator write queries.
- `concurrent-steps` (2026-11-23, deb59c4): independent steps researched at once.
- `refine-through-loop` (2026-11-24, 799a589): "research what is missing" through the
  wave loop instead of a serial loop of its own.
- `reviews-when-asked` (2026-11-24, 42bd4df): an `auto` report review only when
  attended, no plan review for each ADJUST re-plan, a revision says so in its closing lines.
- `budget-from-served` (2026-11-24, 90ccf02): calls admitted at what their role's calls
  cost so far (not at `max_tokens`), a smaller reserve before the first step, waves cut to budget.
- `local-activities` (2026-11-24, ab7e676): corpus searches and reads as local
  activities.
- `classify-while-routing` (2026-11-24, ab7e676): the coordinator classifies alongside
  the first routing call.
- `follow-up-nouns` (2026-11-24, 60cc14e): "the second one", "the last idea", "idea 2"
  name a point of the previous answer.
- `all-of-2026-11-24` (2026-11-24, d53ee0a): one marker for the ids of 2026-11-24 (the
  `applied()` helper answered them by it).
- `model-answers` (2026-11-26, 7154214): a research its model never answered fails.
- `budget-fits-a-step` (2026-11-26, 96aaf09): a step that would not fit the budget
  observes its passages cut to what fits (workflows/accounting/step_budget.py).
- `report-review-rounds` (2026-11-26, 7be4c8b): a revised report goes back to the
  person for another round, at most `reviews.MAX_REVIEW_ROUNDS`.
- `standing-and-notices` (2026-11-26, 00ab8d1): notifications, and a standing research's
  comparison with its previous run.
- `measured-citations` (2026-11-27, 13f0e8c): cited sentences checked against what was
  read, deterministically, a model's judge only after passing its canaries.
- `findings-matched` (2026-11-27, d9fe88b): standing runs compared by what findings rest
  on and say, not by wording.

## From v0.1.0 on: each patch through samples-python's `patching/` cycle

A released research may be running when a worker is upgraded, so a change of what a research
records goes through three steps, each its own release, with its date written beside the id below:

1. `workflow.patched(ID)`: new researches take the new path, histories without the marker the old.
2. `workflow.deprecate_patch(ID)`, the old path deleted, once no history without the marker can
   still be running (past the longest a research may wait, and the stored histories re-recorded).
3. The call removed, once no history recorded before step 2 can still be running; the id moves to
   `RETIRED` and is never used again.

Workflow code calls `workflow.patched(ID)` / `workflow.deprecate_patch(ID)` with the constant
defined here, directly (one marker per id; no helper in between). No id was in use at v0.1.0.

    #: patched 2026-MM-DD (issue N, commit), deprecated 2026-MM-DD, removed 2026-MM-DD: what it gates.
    EXAMPLE_ID = "example-id"
"""

from __future__ import annotations

#: Every id retired so far (never reuse one): the gates folded before v0.1.0 (2026-11-27).
RETIRED = frozenset(
    {
        "claim-verification",
        "research-library",
        "refining-loop",
        "loop-back-relevance",
        "sectioned-report",
        "queries-with-plan",
        "concurrent-steps",
        "refine-through-loop",
        "reviews-when-asked",
        "budget-from-served",
        "local-activities",
        "classify-while-routing",
        "follow-up-nouns",
        "all-of-2026-11-24",
        "model-answers",
        "budget-fits-a-step",
        "report-review-rounds",
        "standing-and-notices",
        "measured-citations",
        "findings-matched",
    }
)
#: patched 2026-11-27: under a token or cost budget, prompts are estimated from
#: what the model is shown (not what was read, kept for the guard), the report's reserve counts
#: the background only without a plan, and the first step's observation leaves room for the
#: one-call report over what it adds, or is bought alone (workflows/accounting/step_budget.py). Asked once, when a research
#: with a budget begins; researches without one record no marker.
REPORT_AS_AFFORDED = "report-as-afforded"

#: patched 2026-11-27: a research cancelled with a report announces research.cancelled
#: (before, a cancelled research sent no notice at all).
CANCELLED_NOTICE = "cancelled-notice"

#: patched 2026-12-02: an ADJUST re-plan keeps the pending steps a person
#: approved (in their order, under their titles) and adds its own after them (before, it replaced
#: them). Asked only at an ADJUST with approved steps still to run (workflows/loop/approved.py).
APPROVED_STEPS_KEPT = "approved-steps-kept"

#: patched 2026-12-02: a standing research's scheduled run first counts its owner's
#: running research (the `owner_running` activity) and is skipped at RESEARCH_RUNNING_PER_USER
#: (workflows/standing/admission.py). Asked only by runs of a standing research.
SCHEDULED_RUNS_COUNTED = "scheduled-runs-counted"

#: patched 2026-12-02: a report with a cited sentence about another subject
#: than its section asks is not accepted, whatever the critic said (workflows/checks/checking.py).
#: Asked only when the critic accepted such a report.
SECTIONS_ON_SUBJECT = "sections-on-subject"

#: patched 2026-12-02: a trusted judge's word is final: it is asked about every
#: cited claim with evidence but a verbatim quote (before, only about those the word check could
#: not settle for certain), so a sentence the word check calls unsupported (a negation, a number,
#: a name) is put to it before it is rewritten or taken out (workflows/kit/judging.py). Asked
#: only when a model's judge checks the report.
JUDGE_HAS_LAST_WORD = "judge-has-last-word"

#: patched 2026-12-02: a person who asked to review the plan gets a plan to
#: review even when the coordinator finds the question simple (before, it was answered directly,
#: with no plan and no review). Asked only then (workflows/loop/planning.py `coordinate`).
REVIEWED_PLAN_NOT_SKIPPED = "reviewed-plan-not-skipped"

#: The ids in use (patched or deprecated), for the test that no id is reused.
ACTIVE: frozenset[str] = frozenset(
    {
        REPORT_AS_AFFORDED,
        CANCELLED_NOTICE,
        APPROVED_STEPS_KEPT,
        SCHEDULED_RUNS_COUNTED,
        SECTIONS_ON_SUBJECT,
        JUDGE_HAS_LAST_WORD,
        REVIEWED_PLAN_NOT_SKIPPED,
    }
)
