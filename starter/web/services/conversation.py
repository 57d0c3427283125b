"""A research and its follow-ups as one conversation (what users of Perplexica and Open WebUI
expect): the research page lists every turn of the thread, the earlier questions it follows
and the follow-ups asked after it, each a link, the one shown marked as such.

Earlier turns come from each research's own `follow_up_of` (up the chain, as far as MAX_TURNS);
later ones from the library (finished follow-ups: its `follow_up_of` column) and from Temporal
(running ones: the `follows` memo the research client writes). Only the person's own research is
ever read, so a thread never shows another user's question; a turn that cannot be read (Temporal
forgot it and the library never had it) is left out rather than failing the page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starter.client import research_client
from starter.web.deps import ApiError, Backend, within
from starter.web.models import ResearchView
from storage import store

#: Turns shown before and after the research on the page, at most.
MAX_TURNS = 8
#: Running research looked at to find this one's running follow-ups.
SCAN_RUNNING = 200
#: How long the running follow-ups may take to find (the page shows the rest without them).
RUNNING_S = 3.0


@dataclass(frozen=True)
class Turn:
    id: str
    question: str
    #: `current` (the page's own research), `running`, or the finished research's outcome.
    state: str


async def thread(
    research_id: str,
    view: ResearchView,
    user: str,
    app: Backend,
    read: Callable[[str], Awaitable[ResearchView | None]],
) -> list[Turn]:
    """The conversation the research is part of, oldest turn first; empty when it has no other
    turn. `read` is the page's owner-checked view of a research (None for another user's, as
    for one that cannot be read)."""
    found = view.live or view.result
    earlier = await _earlier(found.follow_up_of if found else None, read)
    later = await _later(research_id, user, app)
    if not earlier and not later:
        return []
    return [*earlier, Turn(research_id, view.heading, "current"), *later]


async def _earlier(
    follows: str | None, read: Callable[[str], Awaitable[ResearchView | None]]
) -> list[Turn]:
    turns: list[Turn] = []
    seen: set[str] = set()
    while follows and follows not in seen and len(turns) < MAX_TURNS:
        seen.add(follows)
        earlier = await read(follows)
        if earlier is None:  # another user's, or forgotten: the thread stops here
            break
        state = "running" if earlier.live is not None else _outcome(earlier)
        turns.insert(0, Turn(follows, earlier.heading, state))
        found = earlier.live or earlier.result
        follows = found.follow_up_of if found else None
    return turns


def _outcome(view: ResearchView) -> str:
    return view.result.outcome.value if view.result is not None else "closed"


async def _later(research_id: str, user: str, app: Backend) -> list[Turn]:
    """The follow-ups asked after the research, and theirs in turn, in the order asked."""
    try:
        running = await within(_running_follow_ups(user, app), RUNNING_S)
    except (ApiError, TimeoutError, RuntimeError):  # Temporal away: the library's turns only
        running = {}
    turns: dict[str, Turn] = {}
    frontier = [research_id]
    while frontier and len(turns) < MAX_TURNS:
        follows = frontier.pop(0)
        stored = await app.library(
            lambda url, follows=follows: store.follow_ups(url, follows, owner=user, limit=MAX_TURNS)
        )
        for turn in [
            Turn(e.workflow_id, e.title or e.query, e.outcome) for e in stored
        ] + running.get(follows, []):
            if turn.id not in turns and turn.id != research_id:
                turns[turn.id] = turn
                frontier.append(turn.id)
    return list(turns.values())[:MAX_TURNS]


async def _running_follow_ups(user: str, app: Backend) -> dict[str, list[Turn]]:
    """USER's running follow-ups, by the research each follows (the `follows` memo)."""
    client = await app.temporal()
    found: dict[str, list[Turn]] = {}
    async for wf in client.list_workflows(
        research_client.visibility_query(True, None), limit=SCAN_RUNNING
    ):
        memo = await research_client.memo_of(wf, app.cfg)
        if memo["follows"] and memo["owner"] == user:
            question = str(memo["question"] or wf.id)
            found.setdefault(str(memo["follows"]), []).insert(0, Turn(wf.id, question, "running"))
    return found
