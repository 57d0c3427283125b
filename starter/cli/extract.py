"""`python -m starter extract URL_OR_FILE... [--json]`: what the assistant would read from a page.

The same crawler (robots.txt, address checks, size and time caps) and the same extraction as a
research, so a surprising report can be traced back to what a page really yielded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from activities.corpus.binary import DOCX_SUFFIXES
from activities.web import crawler, reading
from starter.cli.progress import say


async def extract(args: argparse.Namespace, session: object) -> int:
    """0 when every input was read; 1 when any could not be (each says why, in one line)."""
    failed = 0
    for index, item in enumerate(args.inputs):
        try:
            read = await _read(item)
        except (crawler.CrawlError, ValueError, OSError) as err:
            failed += 1
            reason = getattr(err, "reason", None) or str(err) or type(err).__name__
            if args.json:
                print(json.dumps({"input": item, "error": reason}, ensure_ascii=False), flush=True)
            else:
                say(f"error: {item}: {reason}")
            continue
        if args.json:
            print(
                json.dumps(
                    {"input": item, "url": read.url, "title": read.title, "text": read.text},
                    ensure_ascii=False,
                ),
                flush=True,
            )
        else:
            if index:
                print("\n" + "-" * 72 + "\n")
            print(
                f"# {read.title or '(no title)'}\n{read.url}\n\n{read.text or '(no readable text)'}",
                flush=True,
            )
    await crawler.reset()
    return 1 if failed else 0


async def _read(item: str) -> reading.Reading:
    if item.startswith(("http://", "https://")):
        return await reading.read_url(item)
    path = Path(item).expanduser()
    if path.is_file() and path.suffix.lower() in DOCX_SUFFIXES:
        return await asyncio.to_thread(_read_docx, path)
    if path.is_file():
        return await reading.read_file(path)
    raise ValueError("not an http(s) URL or a readable file")


def _read_docx(path: Path) -> reading.Reading:
    """A Word file as the local corpus reads it (its paragraphs, headings and tables), not its zip
    bytes as text: the web extraction has no Word reader, the corpus has."""
    from activities.corpus.reader import documents_of
    from activities.web.bounded import ExtractionLimit, pool

    try:
        documents = pool().run_now(documents_of, str(path), path.read_bytes())
    except ExtractionLimit as err:
        raise ValueError(str(err)) from None
    text = "\n\n".join(document.body for document in documents)
    return reading.Reading(
        url=path.resolve().as_uri(), title=documents[0].title if documents else "", text=text
    )
