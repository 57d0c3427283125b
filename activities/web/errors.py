"""What goes wrong with one page, in the crawler's words (shared by the crawler and its helpers)."""

from __future__ import annotations


class CrawlError(Exception):
    """A page that could not be read: `reason` says why in one line, `retryable` if trying later may help."""

    def __init__(self, reason: str, *, retryable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


class PageTimeout(CrawlError):
    """The page did not arrive within the per-page time cap (slow server, or one trickling bytes)."""
