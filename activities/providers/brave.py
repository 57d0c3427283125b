"""Brave Search's web API (BRAVE_API_KEY; BRAVE_BASE_URL to point it elsewhere)."""

from __future__ import annotations

from activities.providers.http import REQUEST_TIMEOUT_S, plain, request_json, result_rows, to_hits
from workflows.activity_models import SearchHit

BRAVE_URL = "https://api.search.brave.com"
BRAVE_MAX_COUNT = 20


class Brave:
    name = "brave"

    def __init__(
        self, api_key: str, *, base_url: str = BRAVE_URL, timeout_s: float = REQUEST_TIMEOUT_S
    ) -> None:
        self._key, self.base_url, self.timeout_s = api_key, base_url.rstrip("/"), timeout_s

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        reply = await request_json(
            self.name,
            "GET",
            f"{self.base_url}/res/v1/web/search",
            self.timeout_s,
            key_var="BRAVE_API_KEY",
            secret=self._key,
            params={"q": query, "count": min(max_results, BRAVE_MAX_COUNT)},
            headers={"X-Subscription-Token": self._key, "Accept": "application/json"},
        )
        # Brave marks the query's words with <strong> and escapes entities in titles and descriptions.
        results = result_rows(reply, "web", "results")
        rows = ((r.get("url"), plain(r.get("title")), plain(r.get("description"))) for r in results)
        return to_hits(self.name, rows, max_results)
