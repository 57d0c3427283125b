"""The crawler's SSRF guard: which addresses a fetched URL may reach, checked where the socket opens.

URLs come from search results and from an LLM, so any of them may point into the worker's own
network: a database on localhost, an admin panel on 10.0.0.1, or the cloud metadata service that
hands out credentials. The guard refuses those, and it refuses them *at the connection*:

- `AddressGuard.addresses(host, port)` resolves a host once, refuses it if ANY of its addresses is
  not public, and remembers the checked answer for a few seconds.
- `guarded_transport(guard)` is an httpx transport whose sockets open only to those checked
  addresses (an httpcore network backend that asks the guard instead of the system resolver).

Why a network backend rather than rewriting URLs to IP literals: there is no second DNS lookup
between the check and the connect (no DNS-rebinding window); every request the client makes (page,
robots.txt, each redirect hop) passes the same gate, with no code path that can forget it; and TLS
stays standard, since the URL keeps its hostname, so SNI, certificate verification and the
connection pool all key on the name, never mixing two sites that share an IP.

CRAWL_ALLOW_PRIVATE=1 lets the crawler reach loopback, private, link-local and site-local
addresses (a local test web, an intranet wiki); cloud metadata endpoints stay refused whatever the
setting.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network

import httpcore
import httpx

IPAddress = IPv4Address | IPv6Address
#: host, port -> the addresses it resolves to (tests swap in their own).
Resolver = Callable[[str, int], Awaitable[list[str]]]

#: Instance metadata services: they hand out cloud credentials to anything that asks from inside.
METADATA_ADDRESSES = frozenset(
    ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, ...
        "169.254.170.2",  # AWS ECS task credentials
        "169.254.170.23",  # AWS EKS pod identity
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
        "fd00:ec2::254",  # AWS over IPv6
        "fd00:ec2::23",  # AWS EKS pod identity over IPv6
    )
)
METADATA_HOSTS = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
ALLOW_HINT = "(set CRAWL_ALLOW_PRIVATE=1 to allow)"

_NAT64 = ip_network("64:ff9b::/96")
_NAT64_LOCAL = ip_network("64:ff9b:1::/48")


class Refused(Exception):
    """A URL or address the crawler must not reach; `reason` is one line for the person reading."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def check_url(url: httpx.URL) -> None:
    """What can be refused from the URL alone, before any DNS lookup."""
    if url.scheme not in ("http", "https"):
        raise Refused(
            f"refused: {url.scheme or 'missing'} scheme (only http and https pages are read)"
        )
    if url.userinfo:
        raise Refused("refused: credentials in the URL (user:password@)")
    host = url.raw_host.decode("ascii").rstrip(".").lower()
    if not host:
        raise Refused("refused: no host in the URL")
    if host in METADATA_HOSTS:
        raise Refused(f"refused: cloud metadata address {host}")


def classify(ip: IPAddress) -> tuple[str, bool] | None:
    """None for a public address, else (what it is, whether CRAWL_ALLOW_PRIVATE may lift the refusal).

    IPv6 site-local addresses (fec0::/10) are deprecated but still private in practice, and Python
    counts them as global: they are refused like private addresses.
    IPv6 forms that carry an IPv4 address inside (mapped, compatible, 6to4, Teredo, NAT64) are judged
    by that IPv4 address: ::ffff:127.0.0.1 is loopback, whatever Python's flags say about it.
    """
    if ip in METADATA_ADDRESSES:
        return "cloud metadata address", False
    if isinstance(ip, IPv6Address) and (inner := _embedded_ipv4(ip)) is not None:
        return classify(inner)
    if ip.is_unspecified:
        return "unspecified address", False
    if ip.is_multicast:
        return "multicast address", False
    if ip.is_loopback:
        return "loopback address", True
    if ip.is_link_local:
        return "link-local address", True
    if (
        isinstance(ip, IPv6Address) and ip.is_site_local
    ):  # fec0::/10, deprecated (RFC 3879), still routed inside
        return "site-local address", True
    if ip.is_reserved:
        return "reserved address", False
    if ip.is_private or (isinstance(ip, IPv6Address) and ip in _NAT64_LOCAL):
        return "private address", True
    if not ip.is_global:  # e.g. 100.64.0.0/10, carrier-grade NAT
        return "non-public address", True
    return None


def _embedded_ipv4(ip: IPv6Address) -> IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    value = int(ip)
    if ip in _NAT64 or 1 < value < 2**32:  # NAT64, or IPv4-compatible ::a.b.c.d
        return IPv4Address(value & 0xFFFFFFFF)
    return None


def _parse_ip(text: str) -> IPAddress | None:
    """An IP literal without its IPv6 zone (fe80::1%eth0 is judged as fe80::1), or None for a name."""
    try:
        return ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


async def system_resolver(host: str, port: int) -> list[str]:
    """One getaddrinfo call, off the event loop (asyncio runs it in a thread)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class AddressGuard:
    """Resolves hosts, refuses the ones that reach non-public addresses, remembers the verdict.

    The answer is kept for `ttl_s` so that the crawler's early check (clear error before anything is
    sent) and the connection itself share one lookup. Raises `Refused`, or `socket.gaierror` when the
    name does not resolve.
    """

    def __init__(
        self,
        allow_private: bool,
        resolver: Resolver | None = None,
        ttl_s: float = 30.0,
        max_hosts: int = 1024,
    ) -> None:
        self.allow_private = allow_private
        self._resolve = resolver or system_resolver
        self._ttl_s = ttl_s
        self._max_hosts = max_hosts
        self._checked: OrderedDict[tuple[str, int], tuple[float, list[str]]] = OrderedDict()

    async def addresses(self, host: str, port: int) -> list[str]:
        literal = _parse_ip(host)
        if literal is not None:
            self._check(literal, shown=host)
            return [host]
        key = (host.lower(), port)
        cached = self._checked.get(key)
        if cached and cached[0] > time.monotonic():
            return cached[1]
        found = list(dict.fromkeys(await self._resolve(host, port)))
        if not found:
            raise socket.gaierror(socket.EAI_NONAME, f"{host} has no address")
        for address in found:
            ip = _parse_ip(address)
            if ip is None:
                raise Refused(
                    f"refused: {host} resolved to something that is not an address ({address})"
                )
            self._check(ip, shown=address, host=host)
        self._checked[key] = (time.monotonic() + self._ttl_s, found)
        self._checked.move_to_end(key)
        while len(self._checked) > self._max_hosts:
            self._checked.popitem(last=False)
        return found

    def _check(self, ip: IPAddress, shown: str, host: str | None = None) -> None:
        verdict = classify(ip)
        if verdict is None:
            return
        what, liftable = verdict
        if liftable and self.allow_private:
            return
        where = f"{host} resolves to {what} {shown}" if host else f"{what} {shown}"
        raise Refused(f"refused: {where}" + (f" {ALLOW_HINT}" if liftable else ""))


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's socket opener, made to connect only to addresses the guard has checked."""

    def __init__(self, guard: AddressGuard) -> None:
        self._guard = guard
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        # Every address was checked, so trying the next one when one is unreachable (an IPv6
        # address on an IPv4-only network) is as safe as trying the first.
        failure: Exception | None = None
        for address in await self._guard.addresses(host, port):
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self, *args: object, **kwargs: object
    ) -> httpcore.AsyncNetworkStream:
        raise Refused("refused: unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def guarded_transport(guard: AddressGuard, limits: httpx.Limits) -> httpx.AsyncHTTPTransport:
    """An httpx transport (HTTP/1.1, no proxies from the environment) that connects through `guard`.

    httpx has no public way to hand httpcore a network backend, so the transport's connection pool
    is replaced by an identical one that has it. If httpx ever renames that attribute this fails
    loudly here instead of silently connecting unguarded.
    """
    transport = httpx.AsyncHTTPTransport(trust_env=False, limits=limits)
    if not isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        raise RuntimeError(
            "this httpx version has no replaceable connection pool: cannot install the SSRF guard"
        )
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        http1=True,
        http2=False,
        network_backend=_GuardedBackend(guard),
    )
    return transport
