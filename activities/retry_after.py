"""How long a throttled endpoint asks us to wait, for LLM endpoints and search APIs alike.

A 429's wait becomes Temporal's next retry delay (`ApplicationError(next_retry_delay=...)`), so
the server's own word beats the retry policy's backoff. Capped: a longer wait is the backoff's
business, and a worker slot should not sit idle for an hour on one header.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from datetime import timedelta

#: Longest wait a 429's Retry-After may ask for.
RETRY_AFTER_CAP_S = 60.0


def retry_after(headers: Mapping[str, str], cap_s: float = RETRY_AFTER_CAP_S) -> timedelta | None:
    """The wait asked for by `retry-after-ms` (OpenAI's), else `retry-after` in seconds or as an
    HTTP date; None (the policy's backoff) when the server said nothing usable or nothing positive."""
    try:
        if headers.get("retry-after-ms") is not None:
            seconds = float(headers["retry-after-ms"]) / 1000
        else:
            value = (headers.get("retry-after") or "").strip()
            try:
                seconds = float(value)
            except ValueError:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError, IndexError, KeyError):
        return None
    return timedelta(seconds=min(seconds, cap_s)) if seconds > 0 else None
