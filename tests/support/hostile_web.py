"""A small web of normal and hostile pages on 127.0.0.1, for crawler and end-to-end tests.

    with HostileWeb() as web:
        page = await crawler.fetch(web.url("/article"))
        assert "/private/secret" not in web.paths()

Every request is recorded (path, headers, time), so a test can prove a page was never asked for.
Routes (add more with `web.route(path, Page(...))` or a handler function):

  /robots.txt              Disallow: /private/ for every user agent (or `HostileWeb(robots=...)`)
  /article                 an HTML article with nav, ads, comments, cookie banner, script and footer
  /plain.txt, /notes.md    plain text and Markdown
  /doc.pdf                 a real one-page PDF (PDF_TEXT); /lying-pdf is the same served as text/html
  /huge.pdf                a PDF of 1 MiB with a Content-Length
  /latin1                  windows-1252 bytes, charset only in <meta http-equiv> (iso-8859-1)
  /latin1-header           windows-1252 bytes, charset only in the Content-Type header
  /no-type                 HTML without any Content-Type header
  /binary                  a PNG served as text/html
  /slow                    trickles one byte every 0.5 s for a minute
  /huge                    streams 64 MiB of HTML
  /bomb, /bomb-deflate     50 MiB of HTML compressed to ~50 KiB (gzip, deflate)
  /missing                 404 (as is any unknown path); /server-error: 500
  /loop -> /loop2 -> /loop redirect loop; /chain/N: N redirects, then a page
  /redirect-to-private     302 to /private/secret (disallowed by robots.txt)
  /redirect-to-metadata    302 to http://169.254.169.254/latest/meta-data/
  /private/secret          must never be requested

The server binds 127.0.0.1, so a crawler needs CRAWL_ALLOW_PRIVATE=1 to read it.
"""

from __future__ import annotations

import struct
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from tests.support import hostile_pdf

ROBOTS_TXT = "User-agent: *\nDisallow: /private/\n"

ARTICLE_TITLE = "The quiet engineering of Roman aqueducts"
ARTICLE_PARAGRAPHS = [
    (
        "Rome's first aqueduct, the Aqua Appia, was built in 312 BC and ran for about sixteen kilometres, "
        "almost all of it underground. Its builders were less interested in monuments than in protecting "
        "the water from enemies, from the sun and from people who tapped the channel without paying."
    ),
    (
        "The arcades that appear on postcards were the exception. Roman engineers kept a channel on a "
        "steady, gentle slope for dozens of kilometres, often dropping only a few tens of centimetres per "
        "kilometre, and they crossed valleys on arches only when a tunnel or a detour along the hillside "
        "would have cost more."
    ),
    (
        "Gravity did all the work. Settling tanks let sand and grit fall out of the flow, inspection shafts "
        "every few dozen metres let workers climb down to clear deposits, and distribution tanks at the "
        "city edge split the supply between public fountains, baths and the private houses that paid for "
        "their own pipe."
    ),
    (
        "When Sextus Julius Frontinus became water commissioner in AD 97, he found the system riddled with "
        "illegal connections and inflated records. His report, De aquaeductu, is one of the few surviving "
        "accounts written by a Roman official about the infrastructure he ran, and it reads at times like a "
        "modern audit."
    ),
]
NAV_MARKER = "Home | World | Science | Subscribe now"
AD_MARKER = "BUY CHEAP WATCHES"
COMMENT_MARKER = "CLICK MY PROFILE FOR FREE CRYPTO"
COOKIE_MARKER = "We value your privacy, accept all cookies"
SCRIPT_MARKER = "TRACKING_PIXEL_42"
FOOTER_MARKER = "© Footer Corp"
#: Strings of the article page that are not its main text: none may reach a report.
BOILERPLATE_MARKERS = (
    NAV_MARKER,
    AD_MARKER,
    COMMENT_MARKER,
    COOKIE_MARKER,
    SCRIPT_MARKER,
    FOOTER_MARKER,
)

PDF_TEXT = [
    "Tide pools as natural laboratories",
    "Rock pools exposed at low tide are small enough to survey in an afternoon.",
    "Ecologists use them to study competition, predation and recovery after storms.",
]
PLAIN_TEXT = (
    "Field notes on sourdough starters\n\n"
    "A starter is a culture of wild yeast and lactic acid bacteria kept alive with flour and water.\n"
    "Fed twice a day at room temperature it doubles in four to eight hours.\n"
)
MARKDOWN_TEXT = (
    "# Reading list\n\n- *De aquaeductu*, Frontinus\n- Notes on gravity-fed water systems\n"
)
LATIN1_TEXT = "Café crème à Zürich: 5 € — naïve façade, Ærøskøbing"

HUGE_BYTES = 64 << 20
BOMB_BYTES = 50 << 20


@dataclass
class Page:
    """A fixed response."""

    body: bytes | str = b""
    content_type: str | None = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hit:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    at: float  #: time.monotonic() when it arrived


Handler = Callable[[BaseHTTPRequestHandler], None]


class HostileWeb:
    def __init__(self, robots: str | None = ROBOTS_TXT) -> None:
        self._hits: list[Hit] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._routes: dict[str, Page | Handler] = _default_routes(self._stopping)
        if robots is None:
            del self._routes["/robots.txt"]
        else:
            self._routes["/robots.txt"] = Page(robots, "text/plain")
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # --- lifecycle ---

    def start(self) -> HostileWeb:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- addresses ---

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + path

    # --- routes and records ---

    def route(self, path: str, response: Page | Handler) -> None:
        """Serve `path` (or, when it ends with "/", everything under it) with a Page or a handler."""
        self._routes[path] = response

    @property
    def hits(self) -> list[Hit]:
        with self._lock:
            return list(self._hits)

    def paths(self) -> list[str]:
        return [hit.path for hit in self.hits]

    def count(self, path: str) -> int:
        return self.paths().count(path)

    def clear(self) -> None:
        with self._lock:
            self._hits.clear()

    def _record(self, hit: Hit) -> None:
        with self._lock:
            self._hits.append(hit)

    def _find(self, path: str) -> Page | Handler | None:
        if path in self._routes:
            return self._routes[path]
        prefixes = [p for p in self._routes if p.endswith("/") and path.startswith(p)]
        return self._routes[max(prefixes, key=len)] if prefixes else None


def _handler_class(web: HostileWeb) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            web._record(Hit("GET", self.path, dict(self.headers.items()), time.monotonic()))
            route = web._find(self.path.split("?", 1)[0])
            try:
                if route is None:
                    send(self, Page("<h1>Not found</h1>", status=404))
                elif isinstance(route, Page):
                    send(self, route)
                else:
                    route(self)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the crawler hung up, as it should on hostile pages

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return _Handler


def send(handler: BaseHTTPRequestHandler, page: Page) -> None:
    """Write a fixed response (for route handlers too)."""
    body = page.body.encode("utf-8") if isinstance(page.body, str) else page.body
    handler.send_response(page.status)
    if page.content_type:
        handler.send_header("Content-Type", page.content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in page.headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def redirect(location: str, status: int = 302) -> Page:
    return Page(f'<a href="{location}">moved</a>', status=status, headers={"Location": location})


# --- the pages ----------------------------------------------------------------------------------


def article_html() -> str:
    paragraphs = "\n".join(f"      <p>{text}</p>" for text in ARTICLE_PARAGRAPHS)
    return f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{ARTICLE_TITLE} | The Daily Column</title>
  <script>window.tracker = "{SCRIPT_MARKER}";</script>
</head>
<body>
  <div class="cookie-banner">{COOKIE_MARKER} <button>OK</button></div>
  <nav class="menu"><a href="/">Home</a> | <a href="/world">World</a> | <a href="/science">Science</a> | <a href="/subscribe">Subscribe now</a></nav>
  <main>
    <article>
      <h1>{ARTICLE_TITLE}</h1>
      <p class="byline">By Livia Marcellus, 3 March 2024</p>
{paragraphs}
    </article>
    <aside class="ad">{AD_MARKER}: 90% off, today only! <a href="/ads/watches">Shop now</a></aside>
    <section id="comments" class="comments">
      <h2>3 comments</h2>
      <div class="comment">{COMMENT_MARKER}</div>
      <div class="comment">first!!! great post</div>
    </section>
  </main>
  <footer class="site-footer">{FOOTER_MARKER} 2024. All rights reserved. <a href="/privacy">Privacy</a></footer>
</body>
</html>
"""


@cache
def pdf_bytes(lines: tuple[str, ...] = tuple(PDF_TEXT)) -> bytes:
    """A real one-page PDF (Helvetica text objects, a correct xref), written by hand."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    shown = " ".join(f"({escape(line)}) Tj 0 -18 Td" for line in lines)
    content = f"BT /F1 12 Tf 72 720 Td {shown} ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def png_bytes() -> bytes:
    """A real 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


@cache
def bomb_bytes(encoding: str = "gzip") -> bytes:
    """BOMB_BYTES of HTML (mostly spaces) compressed to about a thousandth of that."""
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    parts = [compressor.compress(b"<!doctype html><html><body><p>")]
    block = b" " * (1 << 20)
    parts += [compressor.compress(block) for _ in range(BOMB_BYTES >> 20)]
    parts.append(compressor.flush())
    return b"".join(parts)


def latin1_html(meta: bool) -> bytes:
    declaration = (
        '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">' if meta else ""
    )
    html = f"<!doctype html><html><head>{declaration}<title>Café</title></head><body><p>{LATIN1_TEXT}</p></body></html>"
    return html.encode("cp1252")


def _slow(stopping: threading.Event) -> Handler:
    def serve(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.end_headers()
        for _ in range(120):
            handler.wfile.write(b"<")
            handler.wfile.flush()
            if stopping.wait(0.5):
                return

    return serve


def _huge(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.end_headers()
    block = b"<p>" + b"All work and no play makes a very long page. " * 1400 + b"</p>\n"
    handler.wfile.write(b"<!doctype html><html><body>")
    for _ in range(HUGE_BYTES // len(block)):
        handler.wfile.write(block)


def _bomb(encoding: str) -> Handler:
    return lambda handler: send(
        handler,
        Page(
            bomb_bytes(encoding), "text/html; charset=utf-8", headers={"Content-Encoding": encoding}
        ),
    )


def _chain(handler: BaseHTTPRequestHandler) -> None:
    left = int(handler.path.rsplit("/", 1)[1] or 0)
    send(handler, redirect(f"/chain/{left - 1}") if left > 0 else Page("<p>end of the chain</p>"))


def _default_routes(stopping: threading.Event) -> dict[str, Page | Handler]:
    pdf = pdf_bytes()
    return {
        "/article": Page(article_html()),
        "/plain.txt": Page(PLAIN_TEXT, "text/plain; charset=utf-8"),
        "/notes.md": Page(MARKDOWN_TEXT, "text/markdown; charset=utf-8"),
        "/doc.pdf": Page(pdf, "application/pdf"),
        "/lying-pdf": Page(pdf, "text/html; charset=utf-8"),
        "/huge.pdf": Page(pdf + b"%" + b"\n" * (1 << 20), "application/pdf"),
        "/latin1": Page(latin1_html(meta=True), "text/html"),
        "/latin1-header": Page(latin1_html(meta=False), "text/html; charset=windows-1252"),
        "/no-type": Page(
            f"<!DOCTYPE html><html><body><p>{ARTICLE_PARAGRAPHS[0]}</p></body></html>", None
        ),
        "/binary": Page(png_bytes() + bytes(range(256)) * 8, "text/html"),
        "/slow": _slow(stopping),
        "/huge": _huge,
        "/bomb": _bomb("gzip"),
        "/bomb-deflate": _bomb("deflate"),
        # ~350 KiB on the wire, > 1 GiB to read (tests/support/hostile_pdf.py).
        "/pdf-bomb": Page(hostile_pdf.inflating(100), "application/pdf"),
        "/missing": Page("<h1>Not found</h1>", status=404),
        "/server-error": Page("<h1>Internal error</h1>", status=500),
        "/loop": redirect("/loop2"),
        "/loop2": redirect("/loop"),
        "/chain/": _chain,
        "/redirect-to-private": redirect("/private/secret"),
        "/redirect-to-metadata": redirect("http://169.254.169.254/latest/meta-data/"),
        "/private/secret": Page("<p>TOP SECRET: the server must never be asked for this</p>"),
    }
