"""Standing research and notices: what changed since the previous run (findings and sources
matched by what they rest on), the notices sent when a research completes, fails, waits or
finds changes, and the notifier workflow.
"""
