"""The research library as a person's client reads it: their own stored research only.

The library is the database every finished research is written to (storage/); the
CLI's `history`, `show`, `export` and `library rename`, and the MCP tools read it through here, so
another user's research is unknown in every front end alike, and a library error is one line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from temporalio.exceptions import ApplicationError

from starter.client import research_client
from starter.client.errors import ClientError, Kind
from starter.client.session import Session
from starter.client.temporal import shown
from starter.client.titles import research_title, titled
from storage import revisions, store
from storage.public_names import PublicNames

T = TypeVar("T")


def stored_research(
    session: Session, research_id: str, version: int | None = None
) -> store.StoredResearch:
    """The user's stored research at VERSION of its report (None: the latest)."""
    url = session.cfg.research_db_url
    try:
        stored = read_library(lambda: store.load_research(url, research_id, version))
    except revisions.NoSuchVersion as err:
        stored_research(session, research_id)  # someone else's: unknown, not "no version N"
        raise ClientError(str(err), Kind.INVALID) from None
    mine = session.user
    if stored is not None and research_client.stored_owner(stored, session.cfg) != mine:
        stored = None  # another user's: unknown here, like an id that does not exist
    if stored is None:
        raise ClientError(
            f"no stored research with id {shown(research_id)} in {where(url)}", Kind.NOT_FOUND
        )
    public = PublicNames.of(session.cfg).model(titled(stored.result, stored.title))  # by name
    return stored.model_copy(update={"result": public})


async def rename(
    url: str, owner: str, research_id: str, title: object
) -> store.LibraryEntry | None:
    """OWNER's stored research RESEARCH_ID titled TITLE (checked and cleaned: a `RequestError`
    when empty or too long), off the event loop; its library entry, or None when none of OWNER's
    has that id (another user's too). The CLI, the MCP tool and the web app rename through this."""
    new = research_title(title)
    return await asyncio.to_thread(
        read_library, lambda: store.rename_research(url, research_id, owner, new)
    )


def read_library(query: Callable[[], T]) -> T:
    """Run a library read; its classified errors become the CLI's one line, exit 2."""
    try:
        return query()
    except ApplicationError as err:
        raise ClientError(err.message, Kind.UNREACHABLE) from None


def where(url: str) -> str:
    try:
        return store.safe(store.database_url(url))
    except Exception:  # noqa: BLE001 - only for a message
        return "RESEARCH_DB_URL"
