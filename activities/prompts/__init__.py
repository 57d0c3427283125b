"""The role prompts and their loader, kept together: one `agent_<role>.md` file per prompt (front
matter naming its variables, then the template) and `loader.py`, which reads them, renders them,
prefers Langfuse's managed copy when one is configured and healthy, and pushes the files there.

A package rather than a folder of data beside a module, so the templates and the code that knows
their format move, ship and are reviewed as one unit.
"""
