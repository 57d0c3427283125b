"""The `offline` engine: every research role by classic information retrieval, no LLM, no network.

Being split into one module per concern; for now routing.py still holds the whole engine.
"""

from activities.offline_engine.routing import OfflineEngine

__all__ = ["OfflineEngine"]
