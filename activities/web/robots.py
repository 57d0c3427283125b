"""robots.txt for the crawler: how a response becomes rules, and the per-process cache of them.

RFC 9309: a 4xx (but 429) means no robots.txt, so every path is allowed; a 5xx or an unreachable
robots.txt means every path is disallowed, remembered for a minute only; at most 500 KiB is read.
Rules are kept a day per origin (scheme, host, port), for at most ROBOTS_CACHE_SIZE origins.
"""

from __future__ import annotations

from collections import OrderedDict

import httpx
from protego import Protego

from activities.web.charset import BodyDecoder

#: An origin's robots.txt: the parsed rules, True when there are none (allow all), or why every
#: path is disallowed (robots.txt unreachable).
RobotsRules = Protego | bool | str

ROBOTS_MAX_BYTES = 500 * 1024  # RFC 9309: parse at least 500 KiB, ignore the rest
ROBOTS_TTL_S = 24 * 3600.0
ROBOTS_FAILURE_TTL_S = 60.0
ROBOTS_CACHE_SIZE = 1024


async def robots_rules(response: httpx.Response) -> RobotsRules:
    status = response.status_code
    if 400 <= status < 500 and status != 429:
        return True  # no robots.txt: everything is allowed (429 "slow down" is no invitation)
    if not 200 <= status < 300:
        return f"robots.txt unreachable (HTTP {status})"
    body, decoder = bytearray(), BodyDecoder(response.headers.get("content-encoding"))
    async for raw in response.aiter_raw():
        body += decoder.decode(raw, ROBOTS_MAX_BYTES - len(body))
        if len(body) >= ROBOTS_MAX_BYTES:
            break
    return Protego.parse(bytes(body).decode("utf-8", errors="replace"))


class RobotsCache:
    """Each origin's rules until they expire (times from the event loop's clock); least recently
    stored origins are forgotten first beyond `size`."""

    def __init__(self, size: int = ROBOTS_CACHE_SIZE) -> None:
        self._size = size
        self._rules: OrderedDict[str, tuple[float, RobotsRules]] = OrderedDict()

    def get(self, origin: str, now: float) -> RobotsRules | None:
        cached = self._rules.get(origin)
        return cached[1] if cached and cached[0] > now else None

    def put(self, origin: str, rules: RobotsRules, expires: float) -> None:
        self._rules[origin] = (expires, rules)
        self._rules.move_to_end(origin)
        while len(self._rules) > self._size:
            self._rules.popitem(last=False)
