"""Tavily's search API (TAVILY_API_KEY; TAVILY_BASE_URL to point it elsewhere)."""

from __future__ import annotations

from activities.providers.http import REQUEST_TIMEOUT_S, request_json, result_rows, to_hits
from workflows.activity_models import SearchHit

TAVILY_URL = "https://api.tavily.com"


class Tavily:
    name = "tavily"

    def __init__(
        self, api_key: str, *, base_url: str = TAVILY_URL, timeout_s: float = REQUEST_TIMEOUT_S
    ) -> None:
        self._key, self.base_url, self.timeout_s = api_key, base_url.rstrip("/"), timeout_s

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        reply = await request_json(
            self.name,
            "POST",
            f"{self.base_url}/search",
            self.timeout_s,
            key_var="TAVILY_API_KEY",
            secret=self._key,
            json={"query": query, "max_results": max_results, "search_depth": "basic"},
            headers={"Authorization": f"Bearer {self._key}"},
        )
        rows = (
            (r.get("url"), r.get("title"), r.get("content")) for r in result_rows(reply, "results")
        )
        return to_hits(self.name, rows, max_results)
