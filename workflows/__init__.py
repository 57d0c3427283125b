"""Workflow code: deterministic, no I/O. `DeepResearchWorkflow` lives in `workflows.research`."""
