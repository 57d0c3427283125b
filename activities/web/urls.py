"""URLs as the crawler reads them: a redirect's Location kept from httpx and checked hop by hop,
a URL made usable (or refused) before any request, and the small texts its reasons show.
"""

from __future__ import annotations

import httpx

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


async def take_location(response: httpx.Response) -> None:
    r"""Move a redirect's Location out of httpx's sight, into `response.extensions`.

    Redirects are followed by `_follow`, each hop checked; but httpx builds the next request of
    every redirect even when it does not follow it, and raises a bare InvalidURL for a Location it
    cannot rebuild (`http:\\host\path`), losing the page with no reason. The crawler reads the
    Location itself (`redirect_location`) and refuses a malformed one as a CrawlError.
    """
    if response.status_code in REDIRECT_STATUSES and "location" in response.headers:
        response.extensions["crawler_location"] = response.headers["location"]
        del response.headers["location"]


def redirect_location(response: httpx.Response) -> str | None:
    if response.status_code in REDIRECT_STATUSES:
        return (
            response.extensions.get("crawler_location") or response.headers.get("location") or None
        )
    return None


def next_hop(url: httpx.URL, location: str) -> httpx.URL:
    r"""Where a redirect from `url` to `location` leads, or InvalidURL/UnicodeError for a malformed
    Location: backslashes or control characters (browsers read `http:\\host\path` as another host,
    URL joining as a path on this one: no reading is safe), or http(s) without a host."""
    if "\\" in location or any(ord(c) < 0x20 or ord(c) == 0x7F for c in location):
        raise httpx.InvalidURL("backslash or control character in the Location")
    target = httpx.URL(location)
    if target.scheme in ("http", "https") and not target.raw_host:
        raise httpx.InvalidURL("a scheme but no host in the Location")
    return usable(url.join(target))


def usable(url: httpx.URL) -> httpx.URL:
    r"""`url` without its fragment, or InvalidURL/UnicodeError now rather than later: httpx accepts
    some URLs it cannot rebuild (`http:\\host\path` joined to a page has a path without its
    leading slash), and an A-label that is not Punycode (`xn--`) fails only when the host is read."""
    url = url.copy_with(fragment=None)
    url.copy_with(raw_path=b"/robots.txt")  # what _robots_for builds from it
    _ = url.host
    if len(url.raw_host) > 253 or any(len(label) > 63 for label in url.raw_host.split(b".")):
        raise httpx.InvalidURL(
            "host name too long"
        )  # DNS limits; IDNA would fail later, at the lookup
    return url


def shown(text: str, limit: int = 100) -> str:
    """A server's or a URL's text, fit for a one-line reason: cut, control characters replaced."""
    return "".join(c if c.isprintable() else "?" for c in text[:limit])


def port_of(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def size_text(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.3g} MiB"
    return f"{n / 1024:.0f} KiB" if n >= 1024 else f"{n} bytes"
