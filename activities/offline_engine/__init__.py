"""The `offline` engine: every research role by classic information retrieval, no LLM, no network.

`OfflineEngine` (engine.py, where the design is described) is the package's one interface. The
other modules are its parts, in the order a research meets them: words.py (vocabulary, tokens,
stemming), questions.py (what a question asks) and aspects.py (its parts), routing.py, planning.py
(with aspect_templates.py), observing.py, reflecting.py, reporting.py, and checks.py (verifier,
reviser, critic). Names with a leading
underscore are shared between these modules only.
"""

from activities.offline_engine.engine import OfflineEngine

__all__ = ["OfflineEngine"]
