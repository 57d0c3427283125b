"""What the researcher reads of a fetched document: the article, its tables, the right characters."""

from __future__ import annotations

import json

import pytest

from activities.web import extraction
from activities.web.extraction import Extracted, extract
from bench.extraction import BENCHMARK, aggregate, run, shingle_scores
from tests.support.documents import make_pdf

PARAGRAPH = " ".join(
    ["The river study measured dissolved oxygen at twelve stations every morning for a year."] * 3
)

NEWS_PAGE = f"""<!DOCTYPE html>
<html><head><title>River oxygen study | Example News</title></head><body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/world">World news menu</a></li>
  <li><a href="/sport">Sport section link</a></li></ul></nav></header>
<div class="ad-banner advertisement">Buy cheap widgets now, advertisement banner</div>
<main>
  <article>
    <h1>River oxygen levels recover</h1>
    <p>{PARAGRAPH}</p>
    <p>Researchers said the recovery began after the upstream plant closed in spring. {PARAGRAPH}</p>
    <table>
      <tr><th>Station</th><th>Oxygen mg/L</th></tr>
      <tr><td>Upper weir</td><td>9.4</td></tr>
      <tr><td>Lower mill</td><td>7.1</td></tr>
    </table>
    <p>The authors plan to extend the survey to the estuary next year and publish the raw data.</p>
  </article>
  <section id="comments" class="comments"><h3>Comments</h3>
    <div class="comment"><p>Great article, reader comment text here about nothing.</p></div></section>
</main>
<aside class="sidebar related"><h3>Related stories</h3>
  <ul><li><a href="/a">Sidebar related story one</a></li></ul></aside>
<footer><p>Copyright 2024 Example News footer. All rights reserved.</p></footer>
</body></html>"""


# --- the benchmark --------------------------------------------------------------------------------


@pytest.mark.skipif(
    not BENCHMARK.is_dir(), reason=f"the extraction benchmark is not at {BENCHMARK}"
)
def test_main_text_of_121_real_news_pages_scores_f1_of_at_least_0_95(capsys):
    result = run()
    with capsys.disabled():
        print(
            f"\nextraction benchmark, {len(result.per_page)} pages: {result.scores}, "
            f"{sum(result.seconds) / len(result.seconds) * 1000:.1f} ms per page"
        )
    assert len(result.per_page) == 121
    assert result.scores.f1 >= 0.95, (
        f"shingle F1 {result.scores.f1:.4f} fell below 0.95: {result.scores}"
    )


# The metric, as scrapinghub's evaluate.py computes it: (truth, extraction) -> (precision, recall).
METRIC_CASES = [
    pytest.param("one two three four five", "one two three four five", (1.0, 1.0), id="same text"),
    pytest.param("one two three four five", "", (None, 0.0), id="nothing extracted: no precision"),
    pytest.param("", "one two three four five", (0.0, None), id="nothing true: no recall"),
    pytest.param("", "", (None, None), id="both empty: left out of both means"),
    pytest.param("a b c d e", "a b c d e x y z w v", (2 / 7, 1.0), id="extra text costs precision"),
    pytest.param("a b", "a b", (1.0, 1.0), id="fewer than 4 tokens make one short shingle"),
    pytest.param(
        "Hello, world! It works.",
        "Hello world\nIt works",
        (1.0, 1.0),
        id="punctuation is not a token",
    ),
    pytest.param(
        "Hello, world! It works.",
        "hello world It works",
        (0.0, 0.0),
        id="case matters, as in evaluate.py",
    ),
    pytest.param(
        "a b c d", "a b c d a b c d", (1 / 5, 1.0), id="a passage extracted twice counts twice"
    ),
]


@pytest.mark.parametrize(("truth", "extracted", "expected"), METRIC_CASES)
def test_shingle_scores_follow_the_benchmark(truth, extracted, expected):
    assert shingle_scores(truth, extracted) == pytest.approx(expected)


def test_an_empty_extraction_costs_recall_but_is_left_out_of_precision():
    scores = aggregate([(1.0, 1.0), (None, 0.0)])
    assert (scores.precision, scores.recall, scores.strict_precision, scores.empty) == (
        1.0,
        0.5,
        0.5,
        1,
    )
    assert scores.f1 == pytest.approx(2 / 3)


# --- HTML ---------------------------------------------------------------------------------------


def test_a_news_page_keeps_the_article_and_its_table_and_drops_menus_ads_comments_and_footer():
    page = extract(NEWS_PAGE.encode(), "text/html; charset=utf-8", url="https://news.example/river")

    assert page.method == "trafilatura"
    assert page.title == "River oxygen levels recover"
    assert "recovery began after the upstream plant closed" in page.text
    assert "publish the raw data" in page.text
    assert "Upper weir" in page.text and "9.4" in page.text and "Lower mill" in page.text
    for boilerplate in (
        "World news menu",
        "advertisement banner",
        "reader comment",
        "Sidebar related",
        "Copyright",
    ):
        assert boilerplate not in page.text


HTTP_EQUIV = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
CHARSET_CASES = [
    # media type, charset from the crawler, what the page itself says
    pytest.param("text/html", None, '<meta charset="windows-1252">', id="meta charset only"),
    pytest.param("text/html", None, HTTP_EQUIV, id="meta http-equiv only"),
    pytest.param("text/html", "windows-1252", "", id="Content-Type header only"),
    pytest.param(
        "text/html; charset=windows-1252", None, "", id="charset left in the Content-Type value"
    ),
    pytest.param(
        "text/html", "iso-8859-1", "", id="header says latin-1, which browsers read as windows-1252"
    ),
    pytest.param(
        "text/html",
        "utf-8",
        '<meta charset="windows-1252">',
        id="header says utf-8 but the bytes are not",
    ),
]


@pytest.mark.parametrize(("media_type", "charset", "declaration"), CHARSET_CASES)
def test_a_windows_1252_page_is_decoded_with_its_accents_and_euro_sign(
    media_type, charset, declaration
):
    html = (
        f"<html><head>{declaration}<title>Café Müller</title></head><body><article>"
        f"<h1>Café Müller raises prices</h1><p>{PARAGRAPH}</p>"
        "<p>A crème brûlée now costs 7 €, the owner Jürgen Müller said, and a café au lait 3 €.</p>"
        "</article></body></html>"
    )
    page = extract(html.encode("windows-1252"), media_type, charset=charset)

    assert "crème brûlée now costs 7 €" in page.text
    assert "Jürgen Müller" in page.text
    assert page.title.startswith("Café Müller")


def test_a_central_european_page_declared_in_its_meta_tag_is_not_left_to_guesswork():
    # Given bytes, trafilatura would guess windows-1250 here and write "gę¶l± jaĽń".
    html = '<html><head><meta charset="iso-8859-2"></head><body><p>Zażółć gęślą jaźń, łódź.</p></body></html>'
    assert extract(html.encode("iso-8859-2"), "text/html").text == "Zażółć gęślą jaźń, łódź."


@pytest.mark.parametrize("reader", ["trafilatura", "fallback"])
def test_an_xhtml_page_declaring_its_encoding_in_the_xml_declaration_is_decoded(
    reader, monkeypatch
):
    if reader == "fallback":
        monkeypatch.setattr(extraction.trafilatura, "bare_extraction", lambda *args, **kwargs: None)
    xhtml = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>Zürich</title></head><body><p>{PARAGRAPH}</p>"
        "<p>Grüezi from Zürich, façade.</p></body></html>"
    )

    page = extract(xhtml.encode("latin-1"), "application/xhtml+xml")

    assert (page.title, page.method) == ("Zürich", reader)
    assert page.text.endswith("Grüezi from Zürich, façade.")


def test_a_javascript_page_that_trafilatura_finds_empty_is_read_from_its_json_ld():
    article = {
        "@type": "NewsArticle",
        "headline": "Rendered in the browser",
        "articleBody": "Only the structured data carries this article body. " * 4,
    }
    html = (
        f'<html><head><title>App shell</title><script type="application/ld+json">{json.dumps(article)}</script>'
        '</head><body><nav><a href="/">Home menu</a></nav><div id="root"></div></body></html>'
    )

    page = extract(html.encode(), "text/html")

    assert page == Extracted("App shell", article["articleBody"].strip(), "fallback")


def test_when_trafilatura_returns_nothing_the_article_is_read_without_the_menu(monkeypatch):
    monkeypatch.setattr(extraction.trafilatura, "bare_extraction", lambda *args, **kwargs: None)

    page = extract(NEWS_PAGE.encode(), "text/html")

    assert page.method == "fallback"
    assert page.title == "River oxygen study | Example News"
    assert "recovery began after the upstream plant closed" in page.text
    assert "World news menu" not in page.text


def test_a_page_of_bare_divs_that_trafilatura_cannot_read_is_read_whole_but_without_its_menu(
    monkeypatch,
):
    monkeypatch.setattr(extraction.trafilatura, "bare_extraction", lambda *args, **kwargs: None)
    html = (
        '<html><body><div role="navigation"><a href="/">Home menu</a></div><nav><a href="/b">Blog menu</a></nav>'
        "<div><div>Opening hours</div><div>Monday to Friday, 9 to 17</div></div></body></html>"
    )

    page = extract(html.encode(), "text/html")

    assert (page.text, page.method) == ("Opening hours\nMonday to Friday, 9 to 17", "fallback")


def test_an_html_fragment_still_gives_its_text():
    fragment = b"<p>A fragment from an API response, worth reading all the same, and long enough to count as text.</p>"
    assert extract(fragment, "text/html").text == fragment[3:-4].decode()


NO_TEXT = [
    b"",
    b"   \n",
    b"<html><body></body></html>",
    b"<html><body><script>go()</script></body></html>",
]


@pytest.mark.parametrize("body", NO_TEXT, ids=["no bytes", "blank", "empty body", "script only"])
def test_a_page_without_text_comes_back_empty_rather_than_failing(body):
    page = extract(body, "text/html")
    assert (page.title, page.text) == ("", "")


# --- PDF ----------------------------------------------------------------------------------------


def test_a_pdf_is_read_with_pdfium_and_titled_from_its_metadata():
    pdf = make_pdf(
        [["Durable research with Temporal", "Workflows survive worker crashes."]],
        title="A Test Paper",
    )

    assert extract(pdf, "application/pdf") == Extracted(
        # The first line, a title, is a paragraph of its own, not the start of the first sentence.
        "A Test Paper",
        "Durable research with Temporal\n\nWorkflows survive worker crashes.",
        "pdfium",
    )


def test_a_pdf_without_a_title_is_titled_by_its_first_line_and_read_past_a_wrong_content_type():
    pdf = make_pdf([["Retries belong to Temporal", "not to the client."], ["Second page."]])

    page = extract(pdf, "application/octet-stream")

    assert page.text == "Retries belong to Temporal\nnot to the client.\n\nSecond page."
    assert (page.title, page.method) == ("Retries belong to Temporal", "pdfium")


def test_pypdf_reads_the_pdf_when_pdfium_cannot(monkeypatch):
    import pypdfium2

    def refuse(*args, **kwargs):
        raise pypdfium2.PdfiumError("Failed to load document (PDFium: Data format error).")

    monkeypatch.setattr(pypdfium2, "PdfDocument", refuse)
    pdf = make_pdf([["Durable research with Temporal"]], title="A Test Paper")

    page = extract(pdf, "application/pdf")

    assert (page.title, page.text.strip(), page.method) == (
        "A Test Paper",
        "Durable research with Temporal",
        "pypdf",
    )


def test_only_the_first_pages_of_a_long_pdf_are_read(monkeypatch):
    monkeypatch.setattr(extraction, "MAX_PDF_PAGES", 2)
    pdf = make_pdf([["Page one."], ["Page two."], ["Page three."]])

    assert extract(pdf, "application/pdf").text == "Page one.\n\nPage two."


@pytest.mark.parametrize(
    "body",
    [b"%PDF-1.4\nnot really a pdf", make_pdf([["Cut short"]])[:120]],
    ids=["garbage", "truncated"],
)
def test_a_corrupt_pdf_raises_a_value_error_that_says_so(body):
    with pytest.raises(ValueError, match=r"unreadable PDF .*pdfium: .*pypdf: "):
        extract(body, "application/pdf")


# --- plain text and Markdown ---------------------------------------------------------------------


def test_markdown_is_decoded_and_tidied_but_keeps_its_indentation():
    markdown = (
        "# Retry policies\r\n\r\n\r\n\r\nUse `maximum_attempts`.   \r\n\r\n"
        "    policy = RetryPolicy()\r\n- a\r\n  - b\r\n"
    )

    page = extract(b"\xef\xbb\xbf" + markdown.encode(), "text/markdown; charset=utf-8")

    assert (
        page.text
        == "# Retry policies\n\nUse `maximum_attempts`.\n\n    policy = RetryPolicy()\n- a\n  - b"
    )
    assert (page.title, page.method) == ("Retry policies", "plain")


def test_plain_text_in_its_declared_charset_is_titled_by_its_first_line():
    body = "\n\nNotes on Zürich\nThe café opens at 8.\n".encode("iso-8859-1")

    page = extract(body, "text/plain", charset="iso-8859-1")

    assert page == Extracted("Notes on Zürich", "Notes on Zürich\nThe café opens at 8.", "plain")


# --- control characters --------------------------------------------------------------------------

#: What a hostile page may say to a terminal: set its title (OSC), clear it (CSI, 7-bit and C1),
#: colour it, ring its bell, reset it (ESC c); and the other controls (NUL, DEL, C1 NEL).
HOSTILE = (
    "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m \x9b2Jbell\x07 nul\x00 del\x7f nel\x85"
    " st\x1b]8;;x\x1b\\ reset\x1bc"
)
CONTROLS = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))]


def assert_clean(extracted: Extracted) -> None:
    for value in (extracted.title, extracted.text):
        assert not [c for c in value if c in CONTROLS], repr(value)
        assert (
            "pwned" not in value
            and "[2J" not in value
            and "[31m" not in value
            and "2Jbell" not in value
        )


@pytest.mark.parametrize("media_type", ["text/html", "text/plain", "text/markdown"])
def test_escape_sequences_and_control_characters_are_removed_from_title_and_text(media_type):
    if media_type == "text/html":
        body = (
            f"<html><head><title>Report {HOSTILE}</title></head><body><article><h1>Report</h1>"
            f"<p>{PARAGRAPH} {HOSTILE}</p><p>{PARAGRAPH}</p></article></body></html>"
        )
    else:
        body = f"# Report {HOSTILE}\n\n{PARAGRAPH} {HOSTILE}\n\n\tkept\tindented\n"

    extracted = extract(body.encode("utf-8"), f"{media_type}; charset=utf-8")

    assert_clean(extracted)
    assert "red bell nul del nel st reset" in extracted.text
    assert PARAGRAPH in extracted.text
    if media_type != "text/html":
        assert extracted.title == "Report red bell nul del nel st reset"
        assert "\n\n\tkept\tindented" in extracted.text  # newlines and tabs stay


def test_control_characters_are_removed_from_what_a_pdf_says():
    # A backslash escapes in a PDF string, and an ESC in the /Info title reads as "˙" (PDFDocEncoding).
    body = make_pdf(
        [[f"Findings {HOSTILE.replace(chr(0x1B) + chr(0x5C), chr(0x07))}"]],
        title="Annual \x07re\x7fport",
    )

    extracted = extract(body, "application/pdf")

    assert_clean(extracted)
    assert extracted.title == "Annual report"
    assert extracted.text.startswith("Findings red") and extracted.text.endswith("reset")


def test_carriage_returns_become_line_breaks_not_glued_lines():
    extracted = extract(b"first line\rsecond line\r\nthird line", "text/plain; charset=utf-8")

    assert extracted.text == "first line\nsecond line\nthird line"
