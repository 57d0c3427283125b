"""SearxNG: a self-hosted metasearch instance, asked through its JSON API (SEARXNG_URL)."""

from __future__ import annotations

from activities.providers.http import REQUEST_TIMEOUT_S, request_json, result_rows, to_hits
from workflows.activity_models import SearchHit


class Searxng:
    """A self-hosted SearxNG instance's JSON API (allowed by `search.formats` in its settings.yml)."""

    name = "searxng"

    def __init__(self, base_url: str, *, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self.base_url, self.timeout_s = base_url.rstrip("/"), timeout_s

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        reply = await request_json(
            self.name,
            "GET",
            f"{self.base_url}/search",
            self.timeout_s,
            params={"q": query, "format": "json"},
        )
        rows = (
            (r.get("url"), r.get("title"), r.get("content")) for r in result_rows(reply, "results")
        )
        return to_hits(self.name, rows, max_results)
