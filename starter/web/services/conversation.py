"""A research and its follow-ups as one conversation (what users of Perplexica and Open WebUI
expect): the research page lists every turn of the thread, the earlier questions it follows
and the follow-ups asked after it, each a link, the one shown marked as such.

Earlier turns come from each research's own `follow_up_of` (up the chain, as far as MAX_TURNS);
later ones from the client (`followup.later_turns`: finished follow-ups from the library, running
ones from Temporal by the `follows` memo the research client writes). Only the person's own research is
ever read, so a thread never shows another user's question; a turn that cannot be read (Temporal
forgot it and the library never had it) is left out rather than failing the page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starter.client.errors import ClientError
from starter.client.followup import MAX_TURNS, Turn, later_turns
from starter.web.deps import Backend
from starter.web.models import ResearchView


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
    try:
        later = await later_turns(app.session, research_id, user)
    except ClientError:  # the library unreadable: the page shows without the later turns
        later = []
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
