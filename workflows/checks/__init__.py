"""Reporting and checking: the report written (in one call or by sections), its claims verified
(through the kit's deterministic verifier, then a calibrated judge), the critic, sections off the
subject and retracted papers, and what the reader is told about it.
"""
