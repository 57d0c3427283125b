"""How often a standing research may run: specs read, and their pace measured from what Temporal
compiled them into.

`every` is parsed here (`30m`, `1d12h`); a cron goes to Temporal as it is and is measured after
Temporal compiled it (`describe()` shows a cron only as structured calendars and intervals), so
`@every 1s`, a seven-field cron with a seconds field and any shorthand Temporal accepts are judged by
what Temporal will actually run, not by a second parser that could disagree with it. The red team of
a red-team round ran three `@every 1s` schedules at 41 emails a minute; a minute apart is the fastest pace.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import timedelta

from temporalio.client import ScheduleIntervalSpec, ScheduleRange, ScheduleSpec

from starter.client.errors import ClientError, Kind
from starter.client.temporal import shown

#: Shortest and longest `every`: a run a minute is already a lot of research.
MIN_EVERY, MAX_EVERY = timedelta(minutes=1), timedelta(days=366)
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
#: How long a missed run may be late and still run (once, with SKIP) after downtime.
MAX_CATCHUP = timedelta(days=1)
DAY_S = 86_400


def parse_every(text: str) -> timedelta:
    """`30m`, `12h`, `1d`, `7d`, `2w`, `1d12h`: one line naming what is allowed otherwise (a
    number too large for a date, `99999999999d`, is out of range, not an overflow)."""
    given = str(text).strip().lower()
    parts = re.findall(r"(\d+)\s*([smhdw])", given)
    if not parts or re.sub(r"\d+\s*[smhdw]", "", given).strip():
        raise ClientError(
            f"invalid every {shown(given)}: use a duration such as 30m, 12h, 1d or 7d", Kind.INVALID
        )
    seconds = sum(int(n) * UNITS[u] for n, u in parts)
    if not MIN_EVERY.total_seconds() <= seconds <= MAX_EVERY.total_seconds():
        raise ClientError(f"invalid every {shown(given)}: use 1m to 366d", Kind.INVALID)
    return timedelta(seconds=seconds)


def check_cron(expr: str) -> str:
    """EXPR with its spaces made single. Six fields are refused: Temporal reads them as minute to
    year, most cron tools (and people) as seconds first, so `*/30 * * * * *` would run every 30
    minutes for one reader and every 30 seconds for the other."""
    expr = " ".join(str(expr).split())
    fields = expr.split(" ")
    timed = fields[1:] if fields[0].startswith(("CRON_TZ=", "TZ=")) else fields
    if len(timed) == 6:
        raise ClientError(
            f"invalid cron {shown(expr)}: six fields read differently from tool to tool; use "
            "five (minute hour day month weekday) or seven (second first, year last)",
            Kind.INVALID,
        )
    if not (5 <= len(timed) <= 7) and not (timed and timed[0].startswith("@")):
        raise ClientError(
            f"invalid cron {shown(expr)}: use five fields, e.g. '0 8 * * 1' (Mondays 08:00 UTC)",
            Kind.INVALID,
        )
    return expr


def spec_of(every: str | None, cron: str | None) -> tuple[ScheduleSpec, timedelta]:
    """The schedule's spec and its catch-up window."""
    if bool(every) == bool(cron):
        raise ClientError(
            "give either every (e.g. 1d) or cron (e.g. '0 8 * * 1'), not both", Kind.INVALID
        )
    if every:
        interval = parse_every(every)
        return ScheduleSpec(intervals=[ScheduleIntervalSpec(every=interval)]), min(
            interval, MAX_CATCHUP
        )
    return ScheduleSpec(cron_expressions=[check_cron(cron or "")]), MAX_CATCHUP


def _values(ranges: Sequence[ScheduleRange], first: int, last: int) -> list[int]:
    """The values a calendar field takes (no range: every value; `end` 0 or below `start`: one)."""
    if not ranges:
        return list(range(first, last + 1))
    found: set[int] = set()
    for r in ranges:
        found.update(range(r.start, max(r.start, r.end) + 1, max(r.step, 1)))
    return sorted(found)


def shortest_gap_s(spec: ScheduleSpec) -> float:
    """The shortest time between two runs of a compiled spec, in seconds (a bound that is
    reached: two seconds of one minute, or an interval)."""
    gaps = [i.every.total_seconds() for i in spec.intervals]
    seconds = sorted({s for c in spec.calendars for s in _values(c.second, 0, 59)})
    if len(seconds) > 1:
        steps = [b - a for a, b in zip(seconds, seconds[1:], strict=False)]
        gaps.append(min([*steps, 60 - seconds[-1] + seconds[0]]))
    elif seconds:
        gaps.append(60.0)
    if len(spec.intervals) + (1 if spec.calendars else 0) > 1:
        gaps.append(0.0)  # a union of kinds can fire twice at once; one spec never makes one
    return min(gaps) if gaps else math.inf


def runs_per_day(spec: ScheduleSpec) -> int:
    """At most how many runs a compiled spec starts in one day (its busiest day)."""
    runs = sum(math.ceil(DAY_S / max(i.every.total_seconds(), 1)) for i in spec.intervals)
    for c in spec.calendars:
        runs += (
            len(_values(c.second, 0, 59))
            * len(_values(c.minute, 0, 59))
            * len(_values(c.hour, 0, 23))
        )
    return runs


def check_pace(spec: ScheduleSpec, given: str) -> None:
    """Refuse a spec that runs more often than once a minute: one line, INVALID."""
    gap = shortest_gap_s(spec)
    if gap < MIN_EVERY.total_seconds():
        raise ClientError(
            f"invalid schedule {shown(given)}: it would run {gap:g}s apart; "
            "runs must be at least a minute apart",
            Kind.INVALID,
        )
