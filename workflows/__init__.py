"""Workflow code: deterministic, no I/O. `DeepResearchWorkflow` lives in `workflows.research`.

In floors, each importing only itself and the floors below (tests/workflow/test_layers.py holds
the line), so a reader can start at either end:

1. text/: pure functions over words (tokens, stems, claim parts, languages, redaction).
2. the shapes, the top-level modules: request, record, spending, models, events, activity_models,
   report_models, roles, activity_role, patches, standing_messages, revising_messages.
3. kit/: pure functions over the shapes (citations, verification, the judge, evidence, papers,
   follow-ups, routing's first layers, the matching of findings and sources, report sections).
4. accounting/: a research's state and its accounts (parts, state, stages, budgets, model use,
   the clock, the call policy).
5. the stages, none importing another: loop/, checks/, standing/.
6. over the stages: steering/ (a person's reviews, the critic's loop) and revising/.
7. research.py: the workflow, run() top to bottom.

The activities and the starter import the first three floors and the modules of the workflow
classes only.
"""
