"""The crawler against a real local web of normal and hostile pages (tests/support/hostile_web.py).

Every test talks to a real socket; the only fakes are DNS answers for made-up hostnames.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
from collections.abc import AsyncIterator, Iterator
from ipaddress import ip_address
from typing import Any

import pypdfium2
import pytest
import pytest_asyncio

from activities.web import crawler as crawler_module
from activities.web.charset import decode_text, document_type
from activities.web.crawler import Crawler, CrawlError, FetchedPage
from activities.web.netguard import classify
from settings import Settings
from tests.support.hostile_web import (
    ARTICLE_PARAGRAPHS,
    LATIN1_TEXT,
    PDF_TEXT,
    HostileWeb,
    Page,
    pdf_bytes,
    redirect,
)

CAP = 200_000
PAGE_TIMEOUT_S = 1.5
USER_AGENT = "DeepResearchBot/0.1 (+https://github.com/deep-research/deep-research)"


def crawl_settings(**overrides: Any) -> Settings:
    """Explicit values for every crawler setting: neither the environment nor a .env file leaks in."""
    values: dict[str, Any] = {
        "crawl_allow_private": True,  # HostileWeb lives on 127.0.0.1
        "crawl_user_agent": USER_AGENT,
        "crawl_max_bytes": CAP,
        "crawl_page_timeout_s": PAGE_TIMEOUT_S,
        "crawl_concurrency": 4,
        "crawl_per_host": 2,
        "crawl_host_gap_s": 0.0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


@pytest.fixture
def web() -> Iterator[HostileWeb]:
    with HostileWeb() as served:
        yield served


@pytest_asyncio.fixture
async def crawler() -> AsyncIterator[Crawler]:
    instance = Crawler(crawl_settings())
    yield instance
    await instance.aclose()


async def refusal(crawler: Crawler, url: str) -> CrawlError:
    with pytest.raises(CrawlError) as caught:
        await crawler.fetch(url)
    return caught.value


# --- normal pages ---------------------------------------------------------------------------------


async def test_an_article_comes_back_as_raw_html_with_its_charset(
    web: HostileWeb, crawler: Crawler
) -> None:
    page = await crawler.fetch(web.url("/article"))

    assert (page.url, page.status, page.content_type, page.charset) == (
        web.url("/article"),
        200,
        "text/html",
        "utf-8",
    )
    assert not page.truncated
    assert ARTICLE_PARAGRAPHS[1].encode() in page.body


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/plain.txt", "text/plain"),
        ("/notes.md", "text/markdown"),
        ("/no-type", "text/html"),  # no Content-Type at all: sniffed
    ],
)
async def test_text_pages_are_typed_by_header_or_by_their_first_bytes(
    web: HostileWeb, crawler: Crawler, path: str, content_type: str
) -> None:
    assert (await crawler.fetch(web.url(path))).content_type == content_type


@pytest.mark.parametrize("path", ["/doc.pdf", "/lying-pdf"])
async def test_a_pdf_is_recognised_even_when_served_as_html(
    web: HostileWeb, crawler: Crawler, path: str
) -> None:
    page = await crawler.fetch(web.url(path))

    assert (page.content_type, page.charset) == ("application/pdf", None)
    text = pypdfium2.PdfDocument(page.body)[0].get_textpage().get_text_range()
    assert PDF_TEXT[1] in text


@pytest.mark.parametrize(
    "path", ["/latin1", "/latin1-header"]
)  # charset in <meta http-equiv>, in the header
async def test_a_latin1_page_decodes_with_its_accents(
    web: HostileWeb, crawler: Crawler, path: str
) -> None:
    page = await crawler.fetch(web.url(path))

    assert page.charset == "cp1252"
    assert LATIN1_TEXT in page.text()


# --- robots.txt -----------------------------------------------------------------------------------


async def test_robots_txt_is_obeyed_and_the_disallowed_page_is_never_requested(
    web: HostileWeb, crawler: Crawler
) -> None:
    error = await refusal(crawler, web.url("/private/secret"))

    assert (error.reason, error.retryable) == ("blocked by robots.txt", False)
    assert web.paths() == ["/robots.txt"]


async def test_robots_txt_is_read_once_per_origin(web: HostileWeb, crawler: Crawler) -> None:
    await asyncio.gather(
        *(crawler.fetch(web.url(path)) for path in ("/article", "/plain.txt", "/notes.md"))
    )
    await crawler.fetch(web.url("/doc.pdf"))
    assert web.count("/robots.txt") == 1

    await crawler.fetch(f"http://localhost:{web.port}/article")  # another host, so another origin
    assert web.count("/robots.txt") == 2


async def test_robots_rules_that_name_our_bot_apply_to_us(crawler: Crawler) -> None:
    robots = "User-agent: DeepResearchBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
    with HostileWeb(robots=robots) as web:
        error = await refusal(crawler, web.url("/article"))

        assert error.reason == "blocked by robots.txt"
        assert web.count("/article") == 0


ROBOTS_CASES = [
    # robots.txt response, what happens to /article (RFC 9309 2.3.1)
    (Page(status=404), None),
    (Page(status=410), None),
    (Page(status=503), "blocked: robots.txt unreachable (HTTP 503)"),
    (redirect("/elsewhere/robots.txt"), "blocked by robots.txt"),  # followed: it disallows /article
    (
        redirect("http://169.254.169.254/robots.txt"),
        "blocked: robots.txt unreachable (refused: cloud metadata",
    ),
]


@pytest.mark.parametrize(("robots", "blocked"), ROBOTS_CASES)
async def test_a_missing_robots_txt_allows_all_and_an_unreachable_one_blocks_all(
    web: HostileWeb, crawler: Crawler, robots: Page, blocked: str | None
) -> None:
    web.route("/robots.txt", robots)
    web.route("/elsewhere/robots.txt", Page("User-agent: *\nDisallow: /article\n", "text/plain"))

    if blocked is None:
        assert (await crawler.fetch(web.url("/article"))).status == 200
    else:
        assert (await refusal(crawler, web.url("/article"))).reason.startswith(blocked)
        assert web.count("/article") == 0


async def test_pages_and_robots_txt_are_asked_for_with_the_configured_user_agent(
    web: HostileWeb,
) -> None:
    agent = "TestBot/9.9 (+https://example.org/testbot)"
    crawler = Crawler(crawl_settings(crawl_user_agent=agent))
    await crawler.fetch(web.url("/article"))
    await crawler.aclose()

    assert [(hit.path, hit.headers["User-Agent"]) for hit in web.hits] == [
        ("/robots.txt", agent),
        ("/article", agent),
    ]


# --- redirects ------------------------------------------------------------------------------------

REDIRECT_CASES = [
    # path, final path or the refusal
    ("/chain/5", "/chain/0"),
    ("/chain/6", "too many redirects (more than 5)"),
    ("/loop", "redirect loop"),
    ("/redirect-to-private", "blocked by robots.txt"),
    (
        "/redirect-to-metadata",
        "refused: cloud metadata address 169.254.169.254",
    ),  # even with CRAWL_ALLOW_PRIVATE
    ("/to-file", "refused: file scheme"),
]


@pytest.mark.parametrize(("path", "outcome"), REDIRECT_CASES)
async def test_every_redirect_hop_is_checked_again(
    web: HostileWeb, crawler: Crawler, path: str, outcome: str
) -> None:
    web.route("/to-file", redirect("file:///etc/passwd"))

    if outcome.startswith("/"):
        assert (await crawler.fetch(web.url(path))).url == web.url(outcome)
    else:
        error = await refusal(crawler, web.url(path))
        assert error.reason.startswith(outcome)
        assert not error.retryable
    assert "/private/secret" not in web.paths()


@pytest.mark.parametrize(
    "location",
    [
        "http:\\\\host\\path",  # httpx itself raises InvalidURL on it, even when not following
        "https:\\\\evil.example\\x",
        "/ok\\..\\private/secret",
        "http://xn--/",  # an A-label that is not Punycode
        "http://" + "a" * 300 + ".example/",  # a label IDNA cannot encode
        "http:/no-host",
    ],
)
async def test_a_malformed_redirect_is_a_crawl_error_not_a_crash(
    web: HostileWeb, crawler: Crawler, location: str
) -> None:
    web.route("/bad-location", redirect(location))

    error = await refusal(crawler, web.url("/bad-location"))

    assert error.reason.startswith("redirect to an invalid URL (")
    assert not error.retryable
    assert web.paths() == ["/robots.txt", "/bad-location"]  # the Location was never followed


@pytest.mark.parametrize(
    "url",
    [
        "http://xn--/",
        "http://" + "a" * 300 + ".example/",
        "http://\x00x/",
        "http://[::1/",
        "http://a:99999/",
    ],
)
async def test_a_malformed_url_is_a_crawl_error_not_a_crash(crawler: Crawler, url: str) -> None:
    error = await refusal(crawler, url)

    assert not error.retryable
    assert error.reason.startswith(("not a valid URL (", "could not resolve"))


# --- hostile bodies -------------------------------------------------------------------------------


async def test_a_page_that_trickles_times_out_at_the_page_limit(
    web: HostileWeb, crawler: Crawler
) -> None:
    started = time.monotonic()
    error = await refusal(crawler, web.url("/slow"))

    assert (error.reason, error.retryable) == ("timed out after 1.5 s", True)
    # The page trickles for a minute: ended at the limit, with room for a busy machine.
    assert PAGE_TIMEOUT_S <= time.monotonic() - started < PAGE_TIMEOUT_S + 5


@pytest.mark.parametrize("path", ["/huge", "/bomb", "/bomb-deflate"])
async def test_an_endless_or_compressed_html_page_is_cut_at_the_byte_cap(
    web: HostileWeb, crawler: Crawler, path: str
) -> None:
    page = await crawler.fetch(web.url(path))

    assert (page.content_type, page.truncated, len(page.body)) == ("text/html", True, CAP)


def _streamed_pdf(handler: Any) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/pdf")
    handler.end_headers()
    handler.wfile.write(pdf_bytes() + b"%" + b" " * (CAP * 2))


@pytest.mark.parametrize(
    "path", ["/huge.pdf", "/streamed.pdf"]
)  # with a Content-Length, without one
async def test_a_pdf_over_the_cap_is_refused_because_a_cut_pdf_is_unreadable(
    web: HostileWeb, crawler: Crawler, path: str
) -> None:
    web.route("/streamed.pdf", _streamed_pdf)

    error = await refusal(crawler, web.url(path))

    assert (error.reason, error.retryable) == ("larger than 195 KiB", False)


@pytest.mark.parametrize(
    ("path", "page", "shown"),
    [
        ("/binary", None, "image/png"),  # a PNG that claims to be text/html
        ("/data.json", Page('{"a": 1}', "application/json"), "application/json"),
        ("/nul.txt", Page(b"looks like text\x00\x01\x02", "text/plain"), "text/plain"),
    ],
)
async def test_what_is_not_a_document_is_refused(
    web: HostileWeb, crawler: Crawler, path: str, page: Page | None, shown: str
) -> None:
    if page:
        web.route(path, page)

    error = await refusal(crawler, web.url(path))

    assert (error.reason, error.retryable) == (f"not a readable document type ({shown})", False)


SNIFF_CASES = [
    # first bytes, declared type, type read (or the refusal)
    (b"%PDF-1.7\n%\xe2\xe3", "text/html", "application/pdf"),
    (b"\r\n%PDF-1.4\n", None, "application/pdf"),
    (b"<html><body><p>Every PDF starts with %PDF-1.7", "text/html", "text/html"),
    (b"<!DOCTYPE html><title>x</title>", "application/octet-stream", "text/html"),
    (b"<html><body>error page</body></html>", "application/pdf", "text/html"),
    (b"<html> is how an HTML document starts", "text/plain", "text/plain"),
    (b"just words", None, "text/plain"),
    (
        b"just words",
        "application/pdf",
        "not a readable document type (application/pdf, but no PDF signature)",
    ),
    (b"PK\x03\x04\x14\x00", "text/html", "not a readable document type (application/zip)"),
    (b"\x1f\x8b\x08\x00", "text/plain", "not a readable document type (application/gzip)"),
]


@pytest.mark.parametrize(("head", "declared", "expected"), SNIFF_CASES)
def test_the_first_bytes_outweigh_the_declared_type(
    head: bytes, declared: str | None, expected: str
) -> None:
    if expected.startswith("not a readable"):
        with pytest.raises(CrawlError, match=re.escape(expected)):
            document_type(head, declared)
    else:
        assert document_type(head, declared) == expected


@pytest.mark.parametrize(
    ("path", "reason", "retryable"),
    [
        ("/missing", "HTTP 404", False),
        ("/server-error", "HTTP 500", True),
        ("/busy", "HTTP 429", True),
    ],
)
async def test_http_errors_say_whether_a_retry_can_help(
    web: HostileWeb, crawler: Crawler, path: str, reason: str, retryable: bool
) -> None:
    web.route("/busy", Page("slow down", status=429))

    error = await refusal(crawler, web.url(path))

    assert (error.reason, error.retryable) == (reason, retryable)


# --- where the crawler may connect ------------------------------------------------------------------


async def test_loopback_is_refused_unless_private_addresses_are_allowed(web: HostileWeb) -> None:
    crawler = Crawler(crawl_settings(crawl_allow_private=False))

    error = await refusal(crawler, web.url("/article"))

    assert (
        error.reason == "refused: loopback address 127.0.0.1 (set CRAWL_ALLOW_PRIVATE=1 to allow)"
    )
    assert not error.retryable
    assert web.paths() == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.170.2/v2/credentials",
        "http://100.100.100.200/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://METADATA.google.internal./computeMetadata/v1/",
    ],
)
async def test_cloud_metadata_is_refused_even_when_private_addresses_are_allowed(
    crawler: Crawler, url: str
) -> None:
    assert (await refusal(crawler, url)).reason.startswith("refused: cloud metadata address")


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("[::ffff:127.0.0.1]", "loopback address ::ffff:127.0.0.1"),  # IPv4-mapped
        ("[::127.0.0.1]", "loopback address ::127.0.0.1"),  # IPv4-compatible
        ("[64:ff9b::7f00:1]", "loopback address 64:ff9b::7f00:1"),  # NAT64
        ("[2002:7f00:1::]", "loopback address 2002:7f00:1::"),  # 6to4
        ("[::1]", "loopback address ::1"),
        ("10.0.0.1", "private address 10.0.0.1"),
        ("[fe80::1]", "link-local address fe80::1"),
        ("[fec0::1]", "site-local address fec0::1"),
        ("100.64.0.1", "non-public address 100.64.0.1"),
    ],
)
async def test_private_addresses_in_any_form_are_refused(
    web: HostileWeb, host: str, reason: str
) -> None:
    crawler = Crawler(crawl_settings(crawl_allow_private=False))

    error = await refusal(crawler, f"http://{host}:{web.port}/article")

    assert error.reason == f"refused: {reason} (set CRAWL_ALLOW_PRIVATE=1 to allow)"
    assert web.paths() == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://0.0.0.0/", "refused: unspecified address 0.0.0.0"),
        ("http://224.0.0.1/", "refused: multicast address 224.0.0.1"),
        ("http://240.0.0.1/", "refused: reserved address 240.0.0.1"),
        ("http://user:secret@example.com/", "refused: credentials in the URL (user:password@)"),
        ("file:///etc/passwd", "refused: file scheme (only http and https pages are read)"),
        (
            "ftp://example.com/pub/file.txt",
            "refused: ftp scheme (only http and https pages are read)",
        ),
        ("gopher://example.com/", "refused: gopher scheme (only http and https pages are read)"),
        ("javascript:alert(1)", "refused: javascript scheme (only http and https pages are read)"),
    ],
)
async def test_urls_no_setting_makes_reachable_are_refused(
    crawler: Crawler, url: str, reason: str
) -> None:
    assert (await refusal(crawler, url)).reason == reason


async def test_the_connection_goes_to_the_address_that_was_checked(
    web: HostileWeb, crawler: Crawler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the name answers a harmless address to the check and another one after.
    One lookup serves the check and every connection of the fetch (robots.txt and page)."""
    real_getaddrinfo = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding_dns(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "rebind.test":
            return real_getaddrinfo(host, port, *args, **kwargs)
        lookups.append(host)
        address = "127.0.0.1" if len(lookups) == 1 else "127.0.0.2"  # nothing listens on .2
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port)))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_dns)

    page = await crawler.fetch(f"http://rebind.test:{web.port}/article")

    assert page.status == 200
    assert lookups == ["rebind.test"]
    assert [(hit.path, hit.headers["Host"]) for hit in web.hits] == [
        ("/robots.txt", f"rebind.test:{web.port}"),
        ("/article", f"rebind.test:{web.port}"),
    ]


@pytest.mark.parametrize(
    ("host", "allow_private", "reason"),
    [
        (
            "intranet.test",
            False,
            "intranet.test resolves to private address 10.1.2.3 (set CRAWL_ALLOW_PRIVATE=1 to allow)",
        ),
        (
            "mixed.test",
            False,
            "mixed.test resolves to loopback address 127.0.0.1 (set CRAWL_ALLOW_PRIVATE=1 to allow)",
        ),
        ("imds.test", True, "imds.test resolves to cloud metadata address 169.254.169.254"),
        (
            "sitelocal.test",
            False,
            "sitelocal.test resolves to site-local address fec0::1:2 (set CRAWL_ALLOW_PRIVATE=1 to allow)",
        ),
    ],
)
async def test_a_name_that_resolves_to_a_refused_address_is_refused(
    host: str, allow_private: bool, reason: str
) -> None:
    answers = {
        "intranet.test": ["10.1.2.3"],
        "mixed.test": ["93.184.216.34", "127.0.0.1"],  # one bad address is enough
        "imds.test": ["169.254.169.254"],
        "sitelocal.test": ["2606:4700:4700::1111", "fec0::1:2"],
    }

    async def resolver(name: str, port: int) -> list[str]:
        return answers[name]

    crawler = Crawler(crawl_settings(crawl_allow_private=allow_private), resolver=resolver)

    assert (await refusal(crawler, f"http://{host}/page")).reason == f"refused: {reason}"


ADDRESS_CASES = [
    # address, (what it is, whether CRAWL_ALLOW_PRIVATE lifts the refusal) or None when public
    ("93.184.216.34", None),
    ("2606:4700:4700::1111", None),
    ("::ffff:8.8.8.8", None),
    ("127.0.0.1", ("loopback address", True)),
    ("10.0.0.1", ("private address", True)),
    ("172.16.0.1", ("private address", True)),
    ("192.168.1.1", ("private address", True)),
    ("169.254.1.1", ("link-local address", True)),
    ("100.64.0.1", ("non-public address", True)),
    ("fc00::1", ("private address", True)),
    ("fe80::1", ("link-local address", True)),
    (
        "fec0::1",
        ("site-local address", True),
    ),  # deprecated site-local (fec0::/10), global to Python
    ("feff:ffff::1", ("site-local address", True)),
    ("::1", ("loopback address", True)),
    ("::ffff:10.0.0.1", ("private address", True)),
    ("64:ff9b::a00:1", ("private address", True)),
    ("2002:c0a8:101::", ("private address", True)),
    ("0.0.0.0", ("unspecified address", False)),
    ("::", ("unspecified address", False)),
    ("224.0.0.1", ("multicast address", False)),
    ("ff02::1", ("multicast address", False)),
    ("240.0.0.1", ("reserved address", False)),
    ("169.254.169.254", ("cloud metadata address", False)),
    ("169.254.170.2", ("cloud metadata address", False)),
    ("100.100.100.200", ("cloud metadata address", False)),
    ("fd00:ec2::254", ("cloud metadata address", False)),
    ("::ffff:169.254.169.254", ("cloud metadata address", False)),
]


@pytest.mark.parametrize(("address", "verdict"), ADDRESS_CASES)
def test_addresses_are_classified(address: str, verdict: tuple[str, bool] | None) -> None:
    assert classify(ip_address(address)) == verdict


# --- politeness and sharing -----------------------------------------------------------------------


async def test_requests_to_one_host_are_spaced_by_the_gap(web: HostileWeb) -> None:
    """Three requests (robots.txt and two pages asked for at once) leave one gap apart: the last
    cannot arrive before two gaps have passed. (Arrival times are measured by the server, whose
    threads may lag under load, so only the lower bound is asserted.)"""
    gap = 0.3
    crawler = Crawler(crawl_settings(crawl_host_gap_s=gap))
    started = time.monotonic()
    await asyncio.gather(crawler.fetch(web.url("/article")), crawler.fetch(web.url("/plain.txt")))
    await crawler.aclose()

    assert sorted(web.paths()) == ["/article", "/plain.txt", "/robots.txt"]
    assert web.hits[-1].at - started >= 2 * gap


async def test_concurrent_fetches_of_one_url_share_one_request(
    web: HostileWeb, crawler: Crawler
) -> None:
    pages = await asyncio.gather(
        *(crawler.fetch(web.url("/article#part-" + str(n))) for n in range(3))
    )

    assert web.count("/article") == 1
    assert pages[0] is pages[1] is pages[2]


async def test_the_module_fetch_keeps_one_crawler_for_the_process(web: HostileWeb) -> None:
    config = crawl_settings()
    try:
        first = await crawler_module.fetch(web.url("/article"), config)
        second = await crawler_module.fetch(web.url("/plain.txt"), config)
    finally:
        await crawler_module.reset()

    assert isinstance(first, FetchedPage) and isinstance(second, FetchedPage)
    assert web.count("/robots.txt") == 1


# --- charsets -------------------------------------------------------------------------------------

FRENCH = "Le café crème coûte deux euros à la brasserie près de la gare, où l'été dure longtemps."

CHARSET_CASES = [
    # bytes, declared charset (HTTP header), text expected
    (FRENCH.encode("utf-8"), "utf-8", FRENCH),
    (FRENCH.encode("cp1252"), "ISO-8859-1", FRENCH),
    (b'<meta charset="windows-1252"><p>' + FRENCH.encode("cp1252"), None, FRENCH),
    (
        b"\xef\xbb\xbf" + FRENCH.encode("utf-8"),
        "iso-8859-1",
        FRENCH,
    ),  # the BOM outweighs the header
    (b"\xff\xfe" + FRENCH.encode("utf-16-le"), None, FRENCH),
    (FRENCH.encode("utf-8"), None, FRENCH),  # undeclared but valid UTF-8
    (FRENCH.encode("utf-8"), "no-such-charset", FRENCH),
    (
        b'<meta charset="utf-16"><p>' + FRENCH.encode("utf-8") + b"!",
        None,
        FRENCH,
    ),  # an impossible label
    ((FRENCH * 4).encode("cp1252"), "utf-8", FRENCH),  # the header lies: the bytes are not UTF-8
    (FRENCH.encode("utf-8") + "€".encode()[:2], "utf-8", FRENCH),  # cut mid-character by the cap
]


@pytest.mark.parametrize(("body", "declared", "expected"), CHARSET_CASES)
def test_text_is_decoded_from_whatever_charset_it_is_in(
    body: bytes, declared: str | None, expected: str
) -> None:
    assert expected in decode_text(body, declared)
