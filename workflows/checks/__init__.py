"""Verification and reporting: the report written (in one call or by sections), each cited
sentence checked against what was read (deterministically, then by a calibrated judge), the
citations resolved, and what the reader is told about it.
"""
