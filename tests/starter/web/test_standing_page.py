"""/standing as a person uses it:
the form offers every option the home page does, and receivers; cron or every, never both
silently; it works without JavaScript; a finished research's "Research again on a schedule"
carries its whole request; every Delete asks first; at phone width nothing is cut off."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from temporalio.client import Client

from starter.client.requests import OPTIONS
from tests.starter.web.conftest import WebServer, WebWorker, csrf_for, running_app, web_config
from tests.starter.web.reports import showcase_result, store_research
from workflows.models import QueryMode, Sources

QUESTION = "How do Roman aqueducts keep a steady gradient over long distances?"


def labels(page: str) -> set[str]:
    return {html.unescape(m) for m in re.findall(r'<label for="[^"]+">([^<]+)</label>', page)}


async def test_the_standing_form_offers_every_option_the_home_form_does(
    open_web_server: WebServer,
) -> None:
    async with open_web_server.client(None) as client:
        home = (await client.get("/")).text
        standing = (await client.get("/standing")).text
    offered = {option.page for option in OPTIONS if option.page}
    assert offered <= labels(home) and offered <= labels(standing)
    assert {"Sources", "Token budget", "Cost budget (USD)"} <= offered
    assert "Notify (optional)" in labels(standing)


async def scheduled_request(temporal: Client, standing_id: str) -> dict[str, Any]:
    """The request each run of STANDING_ID starts with, as the schedule keeps it."""
    described = await temporal.get_schedule_handle(standing_id).describe()
    payload = described.schedule.action.args[0]  # type: ignore[attr-defined]
    return json.loads(payload.data)


async def test_without_javascript_the_form_creates_a_standing_research_with_its_options(
    web_worker: WebWorker, dev_client: Client
) -> None:
    # a receiver on this machine: allowed only where WEBHOOK_ALLOW_PRIVATE says so
    with running_app(web_config(web_worker, webhook_allow_private=True)) as server:
        await create_with_every_option(server, dev_client)


async def create_with_every_option(server: WebServer, dev_client: Client) -> None:
    form = {
        "csrf": csrf_for(server),
        "question": QUESTION,
        "every": "",
        "cron": "0 8 * * 1",
        "sources": Sources.DOCUMENTS.value,
        "mode": QueryMode.WEB.value,
        "language": "de",
        "max_tokens": "20000",
        "notify": "http://127.0.0.1:9/standing\n",
    }
    async with server.client(None) as client:
        created = await client.post("/standing", data=form)
        assert created.status_code == 303 and created.headers["location"] == "/standing?created=1"
        listed = (await client.get("/api/standing")).json()
    mine = [s for s in listed if s["question"] == QUESTION]
    assert len(mine) == 1 and mine[0]["cron"] == "0 8 * * 1" and mine[0]["every"] is None
    assert mine[0]["notify"] == 1
    asked = await scheduled_request(dev_client, mine[0]["id"])
    assert asked["sources"] == "documents" and asked["mode"] == "web"
    assert asked["language"] == "de" and asked["max_tokens"] == 20000


async def test_every_and_cron_both_typed_is_refused_with_the_form_kept(
    open_web_server: WebServer,
) -> None:
    form = {
        "csrf": csrf_for(open_web_server),
        "question": QUESTION,
        "every": "7d",
        "cron": "0 8 * * 1",
        "sources": "both",
    }
    async with open_web_server.client(None) as client:
        refused = await client.post("/standing", data=form)
    page = html.unescape(refused.text)
    assert refused.status_code == 422
    assert "give either every (e.g. 1d) or cron (e.g. '0 8 * * 1'), not both" in page
    assert QUESTION in page and 'value="0 8 * * 1"' in page
    assert re.search(r'<option value="both" selected>', page)


async def test_research_again_on_a_schedule_carries_the_whole_request(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    result = showcase_result().model_copy(
        update={"searched": Sources.BOTH, "mode": QueryMode.WEB, "language": "fr"}
    )
    research_id = store_research(web_worker.db_url, result, "again")
    async with open_web_server.client(None) as client:
        page = html.unescape((await client.get(f"/research/{research_id}")).text)
        again = re.search(
            r'<form method="get" action="/standing" class="again">(.*?)</form>', page, re.S
        )
        assert again is not None
        fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', again.group(1)))
        assert (
            fields["sources"] == "both" and fields["mode"] == "web" and fields["language"] == "fr"
        )
        filled = html.unescape((await client.get("/standing", params=fields)).text)
    assert re.search(r'<option value="both" selected>', filled)
    assert re.search(r'<option value="web" selected>', filled)
    assert re.search(r'<option value="fr" selected>', filled)
    assert result.query in filled


async def test_a_delete_without_javascript_asks_first(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    research_id = store_research(web_worker.db_url, showcase_result(), "asked")
    csrf = csrf_for(open_web_server)
    async with open_web_server.client(None) as client:
        asked = await client.post(f"/library/{research_id}/delete", data={"csrf": csrf})
        still = [e["id"] for e in (await client.get("/api/library?q=aqueducts")).json()]
        assert asked.status_code == 200 and "Are you sure?" in asked.text
        assert research_id in still
        done = await client.post(
            f"/library/{research_id}/delete", data={"csrf": csrf, "confirmed": "yes"}
        )
        gone = [e["id"] for e in (await client.get("/api/library?q=aqueducts")).json()]
    assert done.status_code == 303 and research_id not in gone
