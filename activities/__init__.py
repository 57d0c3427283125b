"""Activities: everything that touches the outside world (LLMs, search, pages), retried by Temporal."""
