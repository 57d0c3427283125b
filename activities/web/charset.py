"""What a fetched body is and how to read it: its content coding, its document type, its charset.

- `BodyDecoder` undoes gzip/deflate without ever producing more than asked (no gzip bombs).
- `document_type(head, declared)` judges a body by its first bytes as much as by the
  Content-Type header, which often lies; only documents a researcher can read pass.
- `detect_charset` and `decode_text` turn text bytes into str, whatever their encoding.
"""

from __future__ import annotations

import codecs
import re
import zlib

from activities.web.errors import CrawlError

SNIFF_BYTES = 1024
PDF = "application/pdf"
READABLE_TYPES = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", PDF}
)
_BINARY_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"RIFF", "audio/video (RIFF)"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"\xfd7zXZ\x00", "application/x-xz"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!\x1a\x07", "application/vnd.rar"),
    (b"\x7fELF", "application/x-executable"),
    (b"\x00asm", "application/wasm"),
    (b"OggS", "audio/ogg"),
    (b"wOFF", "font/woff"),
    (b"wOF2", "font/woff2"),
    (b"\xd0\xcf\x11\xe0", "application/x-ole-storage"),
)


class BodyDecoder:
    """gzip/deflate decoding that never produces more than it is asked for.

    httpx's own decoder inflates each network read whole: 64 KiB of a gzip bomb becomes ~64 MiB in
    memory before any cap can look at it. Here `zlib` stops at `limit`, so a page never costs more
    than CRAWL_MAX_BYTES however it is compressed. Only what we ask for (Accept-Encoding) is read.
    """

    def __init__(self, encoding: str | None) -> None:
        self._encoding = (encoding or "identity").strip().lower()
        self._started = False
        if self._encoding == "identity":
            self._zlib = None
        elif self._encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self._encoding == "deflate":
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS)
        else:
            raise CrawlError(f"unsupported content encoding ({self._encoding[:40]})")

    def decode(self, data: bytes, limit: int) -> bytes:
        if self._zlib is None:
            return data[:limit]
        try:
            out = self._zlib.decompress(data, limit)
        except zlib.error:
            if self._encoding != "deflate" or self._started:
                raise CrawlError(f"corrupt {self._encoding} body") from None
            self._zlib = zlib.decompressobj(
                -zlib.MAX_WBITS
            )  # "deflate" sent raw, without its zlib header
            out = self._zlib.decompress(data, limit)
        self._started = True
        return out


def parse_content_type(header: str | None) -> tuple[str | None, str | None]:
    """(media type, charset) of a Content-Type header, lowercased; None for what is absent."""
    if not header:
        return None, None
    media, _, params = header.partition(";")
    match = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", params, re.IGNORECASE)
    return media.strip().lower() or None, match.group(1) if match else None


def document_type(head: bytes, declared: str | None) -> str:
    """The readable type of a body from its first bytes and the declared type, or CrawlError.

    Signatures win over the header (servers send PDFs as text/html and images as anything); a
    page without a readable declared type is read as HTML when it looks like HTML.
    """
    pdf_at = head.find(b"%PDF-")
    if (
        pdf_at != -1 and b"<" not in head[:pdf_at]
    ):  # readers allow junk before the signature, not markup
        return PDF
    for magic, name in _BINARY_MAGIC:
        if head.startswith(magic):
            raise CrawlError(f"not a readable document type ({name})")
    if head[4:8] == b"ftyp":
        raise CrawlError("not a readable document type (video/mp4)")
    if b"\x00" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise CrawlError(f"not a readable document type ({declared or 'binary data'})")
    if declared in READABLE_TYPES and declared != PDF:
        return declared  # a text/plain tutorial about HTML stays plain text
    lowered = head.lower()
    if b"<html" in lowered or b"<!doctype html" in lowered:
        return "text/html"
    if declared in (None, "application/octet-stream", "binary/octet-stream"):
        return "text/plain"  # no type and no binary signature: text it is
    raise CrawlError(
        f"not a readable document type ({declared}{', but no PDF signature' if declared == PDF else ''})"
    )


_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)""", re.IGNORECASE)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def detect_charset(body: bytes, declared: str | None = None) -> str:
    """The encoding of a text body: a BOM, then the declared (HTTP) charset, then `<meta charset>`
    or `<meta http-equiv>` (or an XML declaration), then UTF-8 if the bytes are valid UTF-8, then
    charset_normalizer's guess.

    A BOM comes first because it is proof, where a header is a claim (the WHATWG order, too).
    A declared charset the bytes do not decode with is passed over: servers often send latin-1
    labelled UTF-8. Latin-1 and ASCII labels mean windows-1252, as in every browser.
    """
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    head = body[:4096]
    in_document = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    meta = _codec(in_document.group(1).decode("ascii")) if in_document else None
    if meta and meta.startswith("utf-16"):
        meta = "utf-8"  # a tag readable as ASCII cannot be UTF-16 (WHATWG)
    for codec in (_codec(declared), meta):
        if codec and _decodes(body, codec):
            return codec
    if _decodes(body, "utf-8"):  # valid UTF-8 is almost never an accident
        return "utf-8"
    import charset_normalizer  # imported late: it loads a few MB of tables

    best = charset_normalizer.from_bytes(body[:65536]).best()
    return (best and _codec(best.encoding)) or "utf-8"


def decode_text(body: bytes, declared: str | None = None) -> str:
    """Text from bytes, whatever their encoding (see `detect_charset`); never raises."""
    return body.decode(detect_charset(body, declared), errors="replace").removeprefix("\ufeff")


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip()).name
    except LookupError:
        return None
    return "cp1252" if name in ("iso8859-1", "ascii") else name


def _decodes(body: bytes, codec: str) -> bool:
    try:
        body.decode(codec)
    except UnicodeDecodeError as exc:
        return exc.start >= len(body) - 3  # only a character cut by truncation, at the very end
    return True
