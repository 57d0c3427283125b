"""Edges: Markdown left raw in the titles of Word, PDF and HTML documents ("# **The
Marrowick bells**") is shown as words: the titles a report's sources carry."""

from __future__ import annotations

import io

import docx
import pytest
from reportlab.pdfgen import canvas

from activities.corpus.reader import documents_of

TITLE = "# **The Marrowick** `bells` of [Quillmoor](https://example.org)"
PLAIN = "The Marrowick bells of Quillmoor"


def word() -> bytes:
    document = docx.Document()
    document.core_properties.title = TITLE
    document.add_paragraph("The carillon has forty-one bells, rung on feast days.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def pdf() -> bytes:
    out = io.BytesIO()
    page = canvas.Canvas(out)
    page.setTitle(TITLE)
    page.drawString(72, 720, "The carillon has forty-one bells, rung on feast days.")
    page.save()
    return out.getvalue()


def html() -> bytes:
    return (
        f"<html><head><title>{TITLE}</title></head>"
        "<body><p>The carillon has forty-one bells, rung on feast days.</p></body></html>"
    ).encode()


@pytest.mark.parametrize(("name", "make"), [("b.docx", word), ("b.pdf", pdf), ("b.html", html)])
def test_a_title_written_in_markdown_reads_as_words(name: str, make: object) -> None:
    documents = documents_of(f"/corpus/{name}", make())  # type: ignore[operator]
    assert documents and {d.title for d in documents} == {PLAIN}
