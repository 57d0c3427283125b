"""One user's quota checked and used by one process at a time, on every replica.

The red team's 30 concurrent creates of standing research all passed a cap of 20, and ten
concurrent `every=2m` creates made 7,200 runs a day against 1,440: each create counted the user's
schedules, then made its own, and every count ran before any create. Now a create (and a "run
now") holds the user's lease while it counts and creates:

- `held(cfg, key)`: the lease is a row of `quota_locks` in the research library's database (the
  one every replica and the CLI share), taken by inserting it: the primary key lets exactly one
  insert win in SQLite and PostgreSQL alike, with no transaction held open over Temporal calls.
  The others wait (polling, up to WAIT_S, then LIMITED with Retry-After). A holder that died
  leaves a row that expires after LEASE_S. A library that cannot be reached falls back to a lock
  of this process (exact within one replica), with a warning.
- `created(...)` / `lately(...)`: the standing research made in the last RECENT_S, kept in
  `standing_created`, so the next holder counts them even while Temporal's list of schedules (a
  visibility store, which lags) does not show them yet.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import cast

from sqlalchemy import Table, delete, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from settings import Settings
from starter.client.errors import ClientError, Kind
from storage.schema import QuotaLockRow, StandingCreatedRow

log = logging.getLogger(__name__)

LOCKS = cast(Table, QuotaLockRow.__table__)
CREATED = cast(Table, StandingCreatedRow.__table__)
#: How long a holder may hold a lease before others may take it (a create takes seconds); how
#: long a waiter waits; how often it looks; how long a new standing research counts from the table.
LEASE_S, WAIT_S, POLL_S, RECENT_S = 120, 60.0, 0.05, 600
#: Per-process locks, for a library that cannot be reached (per event loop and key).
_LOCAL: dict[tuple[int, str], asyncio.Lock] = {}


def _engine(cfg: Settings) -> Engine:
    from storage import store

    return store.engine_for(store.database_url(cfg.library.db_url))


def _take(cfg: Settings, key: str, holder: str) -> bool:
    """One try: True when the lease row was inserted (an expired one is removed first)."""
    engine = _engine(cfg)
    now = int(time.time())
    with engine.begin() as db:
        db.execute(delete(LOCKS).where(LOCKS.c.key == key, LOCKS.c.expires_at < now))
    try:
        with engine.begin() as db:
            db.execute(LOCKS.insert().values(key=key, holder=holder, expires_at=now + LEASE_S))
    except IntegrityError:
        return False
    return True


def _give_back(cfg: Settings, key: str, holder: str) -> None:
    with _engine(cfg).begin() as db:
        db.execute(delete(LOCKS).where(LOCKS.c.key == key, LOCKS.c.holder == holder))


@asynccontextmanager
async def held(cfg: Settings, key: str) -> AsyncIterator[None]:
    """Enter holding KEY's lease (module docstring); LIMITED when it stays taken for WAIT_S."""
    holder = uuid.uuid4().hex
    try:
        shared = await _acquire(cfg, key, holder)
    except SQLAlchemyError as err:
        log.warning("quota checked in this process only: the library is unavailable (%s)", err)
        shared = False
    if not shared:
        async with _LOCAL.setdefault((id(asyncio.get_running_loop()), key), asyncio.Lock()):
            yield
        return
    try:
        yield
    finally:
        try:
            await asyncio.to_thread(_give_back, cfg, key, holder)
        except SQLAlchemyError as err:  # it expires after LEASE_S
            log.warning("quota lease %s not given back: %s", key, type(err).__name__)


async def _acquire(cfg: Settings, key: str, holder: str) -> bool:
    deadline = time.monotonic() + WAIT_S
    while not await asyncio.to_thread(_take, cfg, key, holder):
        if time.monotonic() > deadline:
            raise ClientError(
                "another change of yours is still being made: try again in a minute",
                Kind.LIMITED,
                retry_after_s=60,
            )
        await asyncio.sleep(POLL_S)
    return True


def _record(cfg: Settings, owner: str, standing_id: str) -> None:
    now = int(time.time())
    with _engine(cfg).begin() as db:
        db.execute(delete(CREATED).where(CREATED.c.created_at < now - RECENT_S))
        db.execute(CREATED.insert().values(standing_id=standing_id, owner=owner, created_at=now))


def _recent(cfg: Settings, owner: str) -> list[str]:
    since = int(time.time()) - RECENT_S
    with _engine(cfg).connect() as db:
        rows = db.execute(
            select(CREATED.c.standing_id).where(
                CREATED.c.owner == owner, CREATED.c.created_at >= since
            )
        )
        return [row[0] for row in rows]


async def created(cfg: Settings, owner: str, standing_id: str) -> None:
    try:
        await asyncio.to_thread(_record, cfg, owner, standing_id)
    except SQLAlchemyError as err:
        log.warning("new standing research not recorded in the library: %s", type(err).__name__)


async def lately(cfg: Settings, owner: str) -> list[str]:
    """OWNER's standing research made in the last RECENT_S (some may be deleted since)."""
    try:
        return await asyncio.to_thread(_recent, cfg, owner)
    except SQLAlchemyError:
        return []
