"""Hostile PDFs made in the tests: small files that cost a reader a lot.

- `inflating`: one page whose content stream is a few KiB of deflate that inflates to tens of MiB
  of text operators (what drove a reader to 5.7 GB);
- `deep_nesting`: arrays nested thousands deep in the page's resources (parsers recurse);
- `page_tree_loop`: a page tree whose Kids point back at itself;
- `normal`: a well-formed page of text, to show readable PDFs still read.
"""

from __future__ import annotations

import zlib


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF with `objects` numbered from 1, a correct xref table and trailer (Root is 1)."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _stream(data: bytes, compress: bool = True) -> bytes:
    body = zlib.compress(data, 9) if compress else data
    flate = b" /Filter /FlateDecode" if compress else b""
    return b"<< /Length %d%s >>\nstream\n" % (len(body), flate) + body + b"\nendstream"


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _one_page(
    content: bytes, resources: bytes = b"<< /Font << /F1 5 0 R >> >>", compress: bool = True
) -> bytes:
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources "
            + resources
            + b" >>",
            _stream(content, compress),
            _FONT,
        ]
    )


def normal(text: str = "Ownership rules keep memory safe without a garbage collector.") -> bytes:
    content = b"BT /F1 12 Tf 72 720 Td (" + text.encode("latin-1") + b") Tj ET"
    return _one_page(content, compress=False)


def inflating(mib: int = 60) -> bytes:
    """A content stream of `mib` MiB of text-drawing operators, deflated to a few tens of KiB."""
    unit = b"BT /F1 1 Tf 1 1 Td (AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA) Tj ET\n"
    return _one_page(unit * (mib * 1024 * 1024 // len(unit)))


def deep_nesting(depth: int = 50_000) -> bytes:
    resources = b"<< /Font << /F1 5 0 R >> /X " + b"[" * depth + b"]" * depth + b" >>"
    return _one_page(b"BT /F1 12 Tf 72 720 Td (deep) Tj ET", resources, compress=False)


def page_tree_loop() -> bytes:
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
            b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 3 0 R] /Count 2 >>",
        ]
    )
