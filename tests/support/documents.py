"""Real PDF and Word files made in the tests (no third-party documents in the repository).

- `make_pdf`: a minimal, valid PDF: one Helvetica text stream per page, an xref table and an
  optional /Info title; pdfium and pypdf both read it.
- `make_docx`: a minimal, valid Office Open XML package as Word writes it: content types,
  relationships, `word/document.xml` with styled headings, body paragraphs and tables,
  `word/styles.xml` (style ids that are not the names, as a localised Word writes them) and
  `docProps/core.xml` with a title.
"""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape


def make_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A real, minimal PDF: one Helvetica text stream per page, an xref table, optional /Info title."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    font = 3 + 2 * len(pages)
    kids = []
    for lines in pages:
        stream = "\n".join(
            ["BT /F1 12 Tf 14 TL 72 720 Td", *(f"({line}) Tj T*" for line in lines), "ET"]
        ).encode()
        kids.append(len(objects) + 1)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (len(objects) + 2, font)
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    if title:
        objects.append(b"<< /Title (%s) >>" % title.encode("latin-1"))
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info = b" /Info %d 0 R" % len(objects) if title else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info,
        xref,
    )
    return bytes(out)


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#: Style ids as a French Word writes them; the names inside are the built-in English ones.
_STYLES = {"Titre": "Title", "Titre1": "heading 1", "Titre2": "heading 2", "Normal": "Normal"}

#: A block of a document: ("Title" | "heading 1" | "heading 2" | "p", text), or ("table", rows).
Block = tuple[str, object]


def make_docx(blocks: list[Block], title: str | None = None) -> bytes:
    """A Word document of `blocks`, e.g. [("heading 1", "Results"), ("p", "..."), ("table", [["a", "b"]])]."""
    ids = {name: style_id for style_id, name in _STYLES.items()}
    body = []
    for kind, content in blocks:
        if kind == "table":
            rows = "".join(
                "<w:tr>"
                + "".join(f"<w:tc><w:p><w:r><w:t>{escape(c)}</w:t></w:r></w:p></w:tc>" for c in row)
                + "</w:tr>"
                for row in content  # type: ignore[union-attr]
            )
            body.append(f"<w:tbl>{rows}</w:tbl>")
            continue
        style = f'<w:pPr><w:pStyle w:val="{ids[kind]}"/></w:pPr>' if kind != "p" else ""
        body.append(
            f'<w:p>{style}<w:r><w:t xml:space="preserve">{escape(str(content))}</w:t></w:r></w:p>'
        )
    document = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="{_W}">'
        f"<w:body>{''.join(body)}<w:sectPr/></w:body></w:document>"
    )
    styles = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles xmlns:w="{_W}">'
        + "".join(
            f'<w:style w:type="paragraph" w:styleId="{i}"><w:name w:val="{n}"/></w:style>'
            for i, n in _STYLES.items()
        )
        + "</w:styles>"
    )
    core = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/">'
        + (f"<dc:title>{escape(title)}</dc:title>" if title else "")
        + "</cp:coreProperties>"
    )
    content_types = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        '<Override PartName="/word/styles.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>'
        '<Override PartName="/docProps/core.xml" '
        'ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>'
    )
    rels = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
        'officeDocument" Target="word/document.xml"/>'
        '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/'
        'core-properties" Target="docProps/core.xml"/></Relationships>'
    )
    document_rels = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" '
        'Target="styles.xml"/></Relationships>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("[Content_Types].xml", content_types)
        package.writestr("_rels/.rels", rels)
        package.writestr("word/document.xml", document)
        package.writestr("word/_rels/document.xml.rels", document_rels)
        package.writestr("word/styles.xml", styles)
        package.writestr("docProps/core.xml", core)
    return out.getvalue()


def with_part(docx: bytes, name: str, data: bytes) -> bytes:
    """`docx` with its part `name` replaced by (or added as) `data`: a hostile part in a real package."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(docx)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package,
    ):
        for member in source.namelist():
            if member != name:
                package.writestr(member, source.read(member))
        package.writestr(name, data)
    return out.getvalue()
