"""The research library as a person's client reads it: their own stored research only.

The library is the database every finished research is written to (storage/); the front ends
never open it themselves: the CLI's `history`, `show`, `export` and `library rename`, the MCP
tools and the web app's library, conversation and standing pages read it through here. So another
user's research is unknown in every front end alike, every report handed out is already as people
may see it (`public`: cleaned, local sources by name, titled as its owner renamed it), and a
library failure is one line (`ClientError`, UNREACHABLE).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import date, datetime
from typing import TypeVar

from temporalio.exceptions import ApplicationError

from starter.client.errors import ClientError, Kind
from starter.client.public import public
from starter.client.session import Session, local_owner
from starter.client.temporal import shown
from starter.client.titles import research_title, titled
from storage import revisions, standing, store

T = TypeVar("T")
#: The library's own shapes, as a front end names them.
StoredResearch = store.StoredResearch
LibraryEntry = store.LibraryEntry
FollowUp = store.FollowUp
StartedResearch = store.StartedResearch


def stored_owner(stored: StoredResearch | LibraryEntry, session: Session) -> str:
    """The owner of a library entry or stored research (the library's `owner` column; research
    from before owners is RESEARCH_USER's)."""
    owner = getattr(stored, "owner", None) or getattr(
        getattr(stored, "result", None), "owner", None
    )
    return str(owner or local_owner(session.cfg))


def read_library(query: Callable[[], T]) -> T:
    """Run a library read; its classified errors become one line (UNREACHABLE)."""
    try:
        return query()
    except ApplicationError as err:
        raise ClientError(err.message, Kind.UNREACHABLE) from None


async def read(query: Callable[[], T]) -> T:
    """`read_library` off the event loop: the web app's loop serves every page meanwhile."""
    return await asyncio.to_thread(read_library, query)


async def load(
    session: Session, research_id: str, version: int | None = None
) -> StoredResearch | None:
    """Research RESEARCH_ID as stored (anyone's: the caller checks the owner), at VERSION of its
    report (None: the latest), shown as people may see it; None when the library has none."""
    url = session.cfg.library.db_url
    try:
        stored = await read(lambda: store.load_research(url, research_id, version))
    except revisions.NoSuchVersion as err:
        raise ClientError(str(err), Kind.INVALID) from None
    if stored is None:
        return None
    shown_result = public(titled(stored.result, stored.title), session.cfg)
    return stored.model_copy(update={"result": shown_result})


async def stored_research(
    session: Session, research_id: str, version: int | None = None, owner: str | None = None
) -> StoredResearch:
    """OWNER's (default: the session's user's) stored research at VERSION of its report; another
    user's is unknown, and so is its version ("no version N" would say it exists)."""
    mine = owner or session.user
    try:
        stored = await load(session, research_id, version)
    except ClientError as err:
        if err.kind is not Kind.INVALID:
            raise
        await stored_research(session, research_id, owner=mine)  # someone else's: unknown
        raise
    if stored is None or stored_owner(stored, session) != mine:
        url = session.cfg.library.db_url
        raise ClientError(
            f"no stored research with id {shown(research_id)} in {where(url)}", Kind.NOT_FOUND
        )
    return stored


async def entries(
    session: Session,
    *,
    contains: str | None = None,
    limit: int = 20,
    owner: str | None = None,
    about: bool = True,
) -> list[LibraryEntry]:
    """OWNER's (default: the session's user's) stored research, newest first; CONTAINS: only what
    it finds in the question, title and (ABOUT) the clarifications and report, as the web
    library's search does."""
    url, who = session.cfg.library.db_url, owner or session.user
    found = (contains or "").strip() or None
    return await read(
        lambda: store.list_research(url, contains=found, limit=limit, owner=who, about=about)
    )


async def started(
    session: Session, owner: str, before: datetime | None, limit: int
) -> list[StartedResearch]:
    """OWNER's stored research that started before BEFORE, newest first, once per id."""
    url = session.cfg.library.db_url
    return await read(lambda: store.started_before(url, owner=owner, before=before, limit=limit))


async def follow_ups(session: Session, research_id: str, owner: str, limit: int) -> list[FollowUp]:
    """OWNER's finished follow-ups of RESEARCH_ID, in the order they were asked."""
    url = session.cfg.library.db_url
    return await read(lambda: store.follow_ups(url, research_id, owner=owner, limit=limit))


async def changed_runs(session: Session, standing_id: str) -> dict[str, bool]:
    """Which finished runs of a standing research found changes since the run before."""
    url = session.cfg.library.db_url
    return await read(lambda: standing.changed_runs(url, standing_id))


async def finished_on(session: Session, research_id: str) -> date | None:
    """The day RESEARCH_ID finished, as the library says (a reference file's access date for
    the pages it read); None when the library cannot tell."""
    try:
        stored = await load(session, research_id)
    except ClientError:
        return None
    return stored.finished_at.date() if stored is not None else None


async def delete(session: Session, owner: str, research_id: str) -> bool:
    """OWNER's stored research RESEARCH_ID removed (every run of it); False when none of
    OWNER's has that id."""
    url = session.cfg.library.db_url
    return bool(await read(lambda: store.delete_research(url, research_id, owner)))


async def rename(
    session: Session, owner: str, research_id: str, title: object
) -> LibraryEntry | None:
    """OWNER's stored research RESEARCH_ID titled TITLE (checked and cleaned: a `RequestError`
    when empty or too long); its library entry, or None when none of OWNER's has that id
    (another user's too). The CLI, the MCP tool and the web app rename through this."""
    new, url = research_title(title), session.cfg.library.db_url
    return await read(lambda: store.rename_research(url, research_id, owner, new))


def where(url: str) -> str:
    """The library named in a message: its URL with any password masked."""
    try:
        return store.safe(store.database_url(url))
    except Exception:  # noqa: BLE001 - only for a message
        return "RESEARCH_DB_URL"
