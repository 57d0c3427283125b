"""A source's fingerprint: the sha256 of its whole text as read, spacing folded.

A standing research compares it between runs (workflows/kit/source_match.py): a source whose text
changed is told from one merely read again, and the same document uploaded twice under two names
from two documents. Computed where a page or document is read, over its whole text before it is
trimmed to the step's passages (the workflow only ever sees those, and may not hash anyway).
"""

from __future__ import annotations

import hashlib


def content_digest(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()
