"""What makes a session end and sign-in attempts slow down (used by starter/web/identity/auth.py):

- `Revocations`: the sessions signed out before they expired, kept in the research library's
  database (table `web_revoked_sessions`, revision 0008 of its migrations: storage/web_tables.py,
  the web app's own part of it), so every replica that shares the
  library refuses a signed-out cookie at once. The replica that signed out also remembers it in
  memory (so it holds while the library is unreachable); the others ask the database.
- `Attempts`: failed sign-ins and Bearer tokens, counted per client address (and in all, as a
  backstop): more than MAX_FAILURES in WINDOW_S and that client is refused (429, one line, with
  Retry-After) until the window has passed, even with the right token. The backstop (ALL_FAILURES
  from everyone in WINDOW_S) answers wrong tokens 429 but never a right one, so no one can lock
  every user out by failing from many addresses. Successful sign-ins of one
  user are limited too (MAX_SIGNINS_PER_USER in WINDOW_S), so a leaked token cannot mint sessions
  without end. Counts live in this process (each replica counts its own).
- `open_secret(folder)`: the random key of an install without tokens, made once and kept in
  `FOLDER/web-secret` (mode 0600): its CSRF tokens differ from every other install's.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from collections import defaultdict, deque
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from storage import web_tables

log = logging.getLogger(__name__)

#: Failed attempts one client may make in WINDOW_S; all clients together, ALL_FAILURES.
WINDOW_S = 60.0
MAX_FAILURES = 10
ALL_FAILURES = 200
MAX_SIGNINS_PER_USER = 30


class Revocations:
    def __init__(self, db_url: str) -> None:
        self.db_url = db_url
        self.local: dict[str, int] = {}

    def revoke(self, session_id: str, expires_at: int) -> None:
        self.local[session_id] = expires_at
        now = int(time.time())
        self.local = {k: v for k, v in self.local.items() if v > now}
        try:
            web_tables.revoke(self.db_url, session_id, expires_at)
        except SQLAlchemyError as err:
            log.warning(
                "sign-out recorded on this replica only: the library is unavailable (%s)",
                type(err).__name__,
            )

    def revoked(self, session_id: str) -> bool:
        if session_id in self.local:
            return True
        try:
            return web_tables.is_revoked(self.db_url, session_id)
        except SQLAlchemyError:
            return False  # the library is unreachable: what this replica knows decides


class Attempts:
    def __init__(self) -> None:
        self.failures: dict[str, deque[float]] = defaultdict(deque)
        self.everyone: deque[float] = deque()
        self.signins: dict[str, deque[float]] = defaultdict(deque)

    def wait_s(self, client: str) -> float:
        """0 when CLIENT may try; else how long it must wait (its own failures only)."""
        now = time.monotonic()
        mine = _trim(self.failures.get(client), now)
        if mine is not None and len(mine) >= MAX_FAILURES:
            return mine[0] + WINDOW_S - now
        return 0.0

    def everyone_wait_s(self) -> float:
        """0 unless all clients together failed ALL_FAILURES times in the window: then how long
        until that passes. The backstop refuses failures only: a right token is never held back
        by what other addresses sent."""
        now = time.monotonic()
        everyone = _trim(self.everyone, now)
        if everyone is not None and len(everyone) >= ALL_FAILURES:
            return everyone[0] + WINDOW_S - now
        return 0.0

    def failed(self, client: str) -> None:
        now = time.monotonic()
        self.failures[client].append(now)
        self.everyone.append(now)
        if len(self.failures) > 10_000:  # forget the quiet ones
            for key in [k for k, v in self.failures.items() if not _trim(v, now)]:
                del self.failures[key]

    def signed_in(self, user: str) -> float:
        """Records a sign-in of USER; 0 when allowed, else how long to wait."""
        now = time.monotonic()
        mine = _trim(self.signins[user], now)
        assert mine is not None
        if len(mine) >= MAX_SIGNINS_PER_USER:
            return mine[0] + WINDOW_S - now
        mine.append(now)
        return 0.0


def _trim(times: deque[float] | None, now: float) -> deque[float] | None:
    while times and times[0] <= now - WINDOW_S:
        times.popleft()
    return times


def open_secret(folder: Path) -> str:
    """This install's random secret, made on first use; a read-only folder: one for this run."""
    path = Path(folder) / "web-secret"
    try:
        text = path.read_text().strip()
        if len(text) >= 32:
            return text
    except OSError:
        pass
    value = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(value + "\n")
    except FileExistsError:
        return open_secret_existing(path, value)
    except OSError as err:
        log.warning("the web app's secret could not be kept in %s: %s", path, err.strerror)
    return value


def open_secret_existing(path: Path, fallback: str) -> str:
    try:
        text = path.read_text().strip()
    except OSError:
        return fallback
    return text if len(text) >= 32 else fallback
