"""DuckDuckGo, keyless, through the `ddgs` package."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from temporalio.exceptions import ApplicationError

from activities.providers.http import REQUEST_TIMEOUT_S, one_line, result_rows, to_hits, unavailable
from workflows.activity_models import SearchHit


class DuckDuckGo:
    """Keyless search through `ddgs`, which is blocking (it runs in a thread) and is the only
    provider that cannot be pointed at a test double: tests replace `ddgs.DDGS`."""

    name = "duckduckgo"

    def __init__(self, *, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        import ddgs  # deferred: the workflow sandbox imports this module for names only
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        def text() -> list[dict[str, Any]]:
            return ddgs.DDGS(timeout=math.ceil(self.timeout_s)).text(query, max_results=max_results)

        try:
            rows = await asyncio.to_thread(text)
        except RatelimitException:
            raise ApplicationError(
                "duckduckgo is rate limiting this machine (429)", type="SearchRateLimited"
            ) from None
        except TimeoutException:
            raise unavailable(f"duckduckgo did not answer within {self.timeout_s:g} s") from None
        except DDGSException as exc:
            if (
                str(exc) == "No results found."
            ):  # how ddgs says that every engine answered with nothing
                return []
            raise unavailable(f"duckduckgo search failed: {one_line(str(exc))[:200]}") from None
        found = ((r.get("href"), r.get("title"), r.get("body")) for r in result_rows(rows))
        return to_hits(self.name, found, max_results)
