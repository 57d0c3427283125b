"""A research and its follow-ups as one conversation (what users of Perplexica and Open WebUI
expect): the research page lists the questions before it and the follow-ups asked after
it, finished and running, in the order asked, each a link; never another user's."""

from __future__ import annotations

import html
import re

from tests.starter.web.conftest import WebServer, WebWorker, wait_for
from tests.starter.web.reports import SHOWCASE_QUESTION, showcase_result, store_research

SECOND = "How did keepers settle disputes about the lamp?"
THIRD = "Tell me more about the second point"
OTHERS = "A question of another user's"


def turns(text: str) -> list[tuple[str, str]]:
    """The conversation's turns as the page lists them: (question, what it says of the turn)."""
    nav = re.search(r'<nav[^>]*aria-label="Conversation"[^>]*>(.*?)</nav>', text, re.S)
    if nav is None:
        return []
    found = []
    for item in re.findall(r"<li>(.*?)</li>", nav.group(1), re.S):
        words = html.unescape(" ".join(re.sub(r"<[^>]+>", " ", item).split()))
        question, said = words.rsplit(" (", 1)
        found.append((question, said.rstrip(")")))
    return found


async def test_a_research_page_lists_its_conversation_in_order_never_another_users(
    open_web_server: WebServer, web_worker: WebWorker
) -> None:
    first = store_research(web_worker.db_url, showcase_result(), "thread")
    follows = showcase_result().model_copy(update={"query": SECOND, "follow_up_of": first})
    second = store_research(web_worker.db_url, follows, "thread")
    theirs = showcase_result().model_copy(
        update={"query": OTHERS, "follow_up_of": first, "owner": "mallory"}
    )
    store_research(web_worker.db_url, theirs, "thread")
    async with open_web_server.client(None) as client:
        made = await client.post("/api/research", json={"question": THIRD, "follow_up_of": second})
        assert made.status_code == 201, made.text
        third = made.json()["id"]
        await wait_for(client, f"/api/research/{third}", lambda s: True)
        try:
            on_second = (await client.get(f"/research/{second}")).text
            on_first = (await client.get(f"/research/{first}")).text
            on_third = (await client.get(f"/research/{third}")).text
        finally:
            await client.post(f"/api/research/{third}/cancel")
        alone = store_research(web_worker.db_url, showcase_result(), "alone")
        on_alone = (await client.get(f"/research/{alone}")).text

    expected = [
        (SHOWCASE_QUESTION, "completed"),
        (SECOND, "this research"),
        (THIRD, "running"),
    ]
    assert turns(on_second) == expected
    assert turns(on_first)[0] == (SHOWCASE_QUESTION, "this research")
    assert [q for q, _ in turns(on_first)] == [SHOWCASE_QUESTION, SECOND, THIRD]
    assert [q for q, _ in turns(on_third)] == [SHOWCASE_QUESTION, SECOND, THIRD]
    for shown in (on_first, on_second, on_third):
        assert OTHERS not in shown
    assert (
        f'<a href="/research/{first}">' in on_second
        and f'<a href="/research/{third}">' in on_second
    )
    assert turns(on_alone) == []  # a research with no other turn has no conversation list
