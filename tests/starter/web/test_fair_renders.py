"""One user's many loads of a very large report page do not stand in front of
another user's page. The real server renders; the order the pages come back in is what is
checked (no wall-clock threshold)."""

from __future__ import annotations

import asyncio
import time
import uuid

from starter.web.guard.fair import FairSlots
from tests.starter.web.conftest import WebWorker, running_app, web_config
from tests.starter.web.reports import _result, store_research
from workflows.models import Source

SOURCES = [Source(id=i, url=f"https://example.org/{i}", title=f"Source {i}") for i in range(1, 11)]
PARAGRAPH = "The census counted quokkas on the island, with **care** and `code` [1] [2]. " * 3


def _report(paragraphs: int) -> str:
    return "# Quokkas\n\n" + "\n\n".join(f"{PARAGRAPH} [{i % 10 + 1}]" for i in range(paragraphs))


async def test_a_users_backlog_of_heavy_pages_does_not_hold_back_anothers_page(
    web_worker: WebWorker,
) -> None:
    tag = uuid.uuid4().hex[:6]
    heavy_user, light_user = f"hana-{tag}", f"ivan-{tag}"
    tokens = {heavy_user: f"hana-token-{tag}-0123456789", light_user: f"ivan-token-{tag}-012345"}
    heavy = store_research(
        web_worker.db_url, _result("Q heavy", _report(450), SOURCES, [], [], owner=heavy_user)
    )
    light = store_research(
        web_worker.db_url, _result("Q light", _report(3), SOURCES, [], [], owner=light_user)
    )
    config = web_config(web_worker, tokens, web_renders=2, web_renders_per_user=1)
    finished: list[str] = []
    with running_app(config, tokens) as server:
        async with server.client(heavy_user) as hana, server.client(light_user) as ivan:

            async def load(client, research_id: str, who: str) -> None:  # type: ignore[no-untyped-def]
                page = await client.get(f"/research/{research_id}")
                assert page.status_code == 200, page.text[:300]
                finished.append(who)

            backlog = [asyncio.create_task(load(hana, heavy, "heavy")) for _ in range(8)]
            await asyncio.sleep(0.5)  # the backlog is in; now the other user's page
            await load(ivan, light, "light")
            await asyncio.gather(*backlog)
    # served while the backlog was still there (it was last of all, behind every heavy page)
    assert finished.index("light") < len(finished) - 3, finished


async def test_a_freed_slot_goes_to_the_user_who_waited_with_fewest_held() -> None:
    slots = FairSlots(total=1, per_user=1)
    order: list[str] = []

    async def work(user: str, label: str) -> None:
        async with slots.slot(user):
            order.append(label)
            await asyncio.sleep(0.01)

    tasks = [asyncio.create_task(work("a", f"a{i}")) for i in range(4)]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(work("b", "b0")))
    started = time.monotonic()
    await asyncio.gather(*tasks)
    assert order.index("b0") <= 1, order
    assert time.monotonic() - started >= 0  # every task ran to its end
