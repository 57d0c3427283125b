"""The web app's own table in the library's database, which no other audience reads: the web
sessions signed out before they expired (`web_revoked_sessions`, revision 0008), so every replica
of the web app that shares the library refuses a signed-out cookie at once.

Kept apart from the research library's tables (schema.py) and its reads (store.py): only the web
app's sessions (starter/web/identity/sessions.py) reach it, through `revoke` and `is_revoked`.
"""

from __future__ import annotations

import time

from sqlalchemy import Integer, String, delete, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from storage.database import database_url, engine_for
from storage.schema import Base


class RevokedSessionRow(Base):
    """A web session signed out before it expired: every replica refuses its cookie."""

    __tablename__ = "web_revoked_sessions"
    session_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[int] = mapped_column(Integer)


def revoke(db_url: str, session_id: str, expires_at: int) -> None:
    """SESSION_ID signed out until EXPIRES_AT (the rows of sessions expired since go); signing
    out twice is once. A database failure is raised (SQLAlchemyError): the caller decides."""
    now = int(time.time())
    try:
        with engine_for(database_url(db_url)).begin() as db:  # migrated: the table exists
            db.execute(delete(RevokedSessionRow).where(RevokedSessionRow.expires_at < now))
            db.execute(
                insert(RevokedSessionRow).values(session_id=session_id, expires_at=expires_at)
            )
    except IntegrityError:
        pass  # signed out twice


def is_revoked(db_url: str, session_id: str) -> bool:
    """Whether SESSION_ID was signed out (SQLAlchemyError when the database cannot say)."""
    with engine_for(database_url(db_url)).connect() as db:
        found = db.execute(
            select(RevokedSessionRow.session_id).where(RevokedSessionRow.session_id == session_id)
        ).first()
    return found is not None
