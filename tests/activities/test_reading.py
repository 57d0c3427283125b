"""Reading a web source end to end inside one process: crawler + extraction + the step's focus,
and `python -m starter extract` over the same path, against HostileWeb on 127.0.0.1."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError

from activities.web import crawler, reading
from settings import Settings
from tests.starter.cli.test_starter import starter
from tests.support.hostile_web import (
    ARTICLE_PARAGRAPHS,
    ARTICLE_TITLE,
    BOILERPLATE_MARKERS,
    LATIN1_TEXT,
    PDF_TEXT,
    HostileWeb,
    Page,
    redirect,
)


@pytest.fixture
def web() -> Iterator[HostileWeb]:
    with HostileWeb() as server:
        yield server


@pytest.fixture
async def allow_private(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process-wide crawler, allowed to read 127.0.0.1 (where HostileWeb lives)."""
    config = Settings(
        _env_file=None,
        crawl_allow_private=True,
        crawl_page_timeout_s=2.0,
        crawl_max_bytes=300_000,
        crawl_host_gap_s=0.0,
    )
    monkeypatch.setattr(crawler, "settings", lambda: config)
    await crawler.reset()
    yield
    await crawler.reset()


async def test_a_page_is_read_as_its_article_trimmed_to_the_step(
    web: HostileWeb, allow_private: None
) -> None:
    page = await reading.read_for_step(
        web.url("/article"), focus="settling tanks inspection shafts", max_chars=400
    )

    assert page.error is None
    assert page.title == ARTICLE_TITLE
    assert "Settling tanks" in page.text and len(page.text) <= 400
    assert not any(marker in page.text for marker in BOILERPLATE_MARKERS)


@pytest.mark.parametrize(
    "path, reason",
    [
        ("/missing", "HTTP 404"),
        ("/private/secret", "robots.txt"),
        ("/redirect-to-metadata", "metadata"),
        ("/binary", "not a readable document type"),
        ("/loop", "redirect"),
        ("/slow", "timed out after 2 s"),
    ],
)
async def test_a_page_that_cannot_be_read_says_why_and_is_not_retried(
    web: HostileWeb, allow_private: None, path: str, reason: str
) -> None:
    page = await reading.read_for_step(web.url(path), focus="aqueducts", max_chars=1000)

    assert page.text == "" and page.error is not None and reason in page.error
    assert "/private/secret" not in web.paths()


async def test_a_page_cannot_send_escape_sequences_to_a_terminal(
    web: HostileWeb, allow_private: None
) -> None:
    hostile = "\x1b]0;pwned\x07\x1b[2J\x9b31m\x07\x7f"  # (a NUL would make it binary: refused by the crawler)
    paragraph = f"<p>{ARTICLE_PARAGRAPHS[0]}{hostile} {ARTICLE_PARAGRAPHS[1]}</p>"
    web.route(
        "/escapes",
        Page(
            f"<html><head><title>Aqueducts{hostile}</title></head><body><article>"
            f"{paragraph}</article></body></html>"
        ),
    )

    read = await reading.read_url(web.url("/escapes"))

    for value in (read.title, read.text):
        assert not any(
            ord(c) < 0x20 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F for c in value
        ), repr(value)
        assert "pwned" not in value and "[2J" not in value and "31m" not in value
    assert ARTICLE_PARAGRAPHS[0] in read.text


async def test_trouble_that_may_pass_is_a_retryable_error(
    web: HostileWeb, allow_private: None
) -> None:
    with pytest.raises(ApplicationError) as caught:
        await reading.read_for_step(web.url("/server-error"), focus="aqueducts", max_chars=1000)

    assert not caught.value.non_retryable and caught.value.type == "PageUnavailable"


# --- python -m starter extract ------------------------------------------------------------------------


def env_for(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRAWL_", "TEMPORAL_"))}
    return {**env, **extra}


async def test_extract_prints_what_a_research_would_read(web: HostileWeb, tmp_path: Path) -> None:
    local = tmp_path / "saved.html"
    local.write_bytes(
        b"<html><head><title>Saved page</title></head><body><nav>Menu</nav><article><p>"
        + ("A saved article about aqueduct gradients and their surveyors. " * 8).encode()
        + b"</p></article><footer>(c) Somebody</footer></body></html>"
    )

    run = await starter(
        "extract",
        web.url("/article"),
        web.url("/doc.pdf"),
        web.url("/latin1"),
        str(local),
        "--json",
        env=env_for(CRAWL_ALLOW_PRIVATE="1"),
    )

    assert run.code == 0, run.err
    article, pdf, latin1, saved = [json.loads(line) for line in run.out.splitlines()]
    assert article["title"] == ARTICLE_TITLE and ARTICLE_PARAGRAPHS[0] in article["text"]
    assert not any(marker in article["text"] for marker in BOILERPLATE_MARKERS)
    assert PDF_TEXT[0] in pdf["text"]
    assert LATIN1_TEXT in latin1["text"]
    assert (
        saved["title"] == "Saved page"
        and "aqueduct gradients" in saved["text"]
        and "Somebody" not in saved["text"]
    )
    assert saved["url"] == local.resolve().as_uri()


async def test_extract_keeps_every_safety_rule_and_says_what_failed(web: HostileWeb) -> None:
    run = await starter(
        "extract",
        web.url("/article"),
        "http://169.254.169.254/latest/meta-data/",
        "no-such-file.html",
        "--json",
        env=env_for(),
    )

    assert run.code == 1
    loopback, metadata, missing = [json.loads(line) for line in run.out.splitlines()]
    assert "CRAWL_ALLOW_PRIVATE" in loopback["error"]  # 127.0.0.1 without the flag
    assert "metadata" in metadata["error"]
    assert missing == {
        "input": "no-such-file.html",
        "error": "not an http(s) URL or a readable file",
    }
    assert web.paths() == []  # nothing was requested from the refused address


async def test_extract_goes_on_after_a_malformed_redirect(web: HostileWeb) -> None:
    web.route("/bad-location", redirect("http:\\\\host\\path"))  # httpx raises InvalidURL on it

    run = await starter(
        "extract",
        web.url("/bad-location"),
        "http://xn--/",
        web.url("/article"),
        "--json",
        env=env_for(CRAWL_ALLOW_PRIVATE="1"),
    )

    assert run.code == 1  # and no traceback (`starter` checks stderr)
    bad, invalid, article = [json.loads(line) for line in run.out.splitlines()]
    assert bad == {
        "input": web.url("/bad-location"),
        "error": "redirect to an invalid URL (http:\\\\host\\path)",
    }
    assert invalid["error"].startswith("not a valid URL (")
    assert article["title"] == ARTICLE_TITLE


async def test_extract_without_json_prints_title_url_and_text(web: HostileWeb) -> None:
    run = await starter("extract", web.url("/article"), env=env_for(CRAWL_ALLOW_PRIVATE="1"))

    assert run.code == 0
    assert run.out.startswith(f"# {ARTICLE_TITLE}\n{web.url('/article')}\n\n")
