"""The command-line starter: `python -m starter ...` starts, follows and inspects research.

It is a Temporal client only: it never runs workflow or activity code, so it needs no API keys.
"""
