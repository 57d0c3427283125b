"""`python -m starter check FILE [--source N=PATH_OR_URL ...] [--json]`: a text's citations,
checked against its sources with the verifier a research uses (starter/client/citations_check.py).

A pure client-side command: no Temporal, no worker. The sources are read here, local files as the
user's own documents and URLs through the crawler; the model's judge is asked when an LLM is
configured. A local source's name in the text's Sources list (`mercury.md`, as a report of this
product names its local sources) is read from the text's folder, else from RESEARCH_CORPUS_DIR or
the user's uploads. Exit 0 when no sentence is unsupported, 1 when one is, 2 on bad input and when
none of the sources could be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from starter.client import citations_check as checking
from starter.client.errors import ClientError, Kind
from starter.client.session import Session
from starter.client.temporal import shown

#: The verdicts as the human output shows them, aligned.
SHOWN = {
    "supported": "supported  ",
    "partial": "partly     ",
    "unsupported": "UNSUPPORTED",
    "unverified": "unverified ",
}
#: A quote of evidence shown on the terminal: enough to recognise the sentence.
QUOTE_CHARS = 400


async def check(args: argparse.Namespace, session: Session) -> int:
    """0: no sentence unsupported; 1: at least one; 2: bad input (one line, `ClientError`)."""
    markdown, named, base = _text(args.file)
    given = (
        checking.source_options(args.source)
        if args.source
        else checking.unique(checking.listed_sources(markdown))
    )
    result = await checking.check_text(
        markdown,
        given,
        session.cfg,
        local_files=True,
        base=base,
        named=named,
        owner=session.cfg.access.user,
        need_one=True,
    )
    if args.json:
        print(json.dumps(result, ensure_ascii=False), flush=True)
    else:
        _show(result, model=session.cfg.llm.engine == "openai")
    return 1 if result["unsupported"] else 0


def _text(file: str) -> tuple[str, str, Path]:
    """The text to check, how to name it, and where its relative paths start."""
    if file == "-":
        data, named, base = sys.stdin.buffer.read(), "standard input", Path.cwd()
    else:
        path = Path(file).expanduser()
        named, base = shown(file), path.parent
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ClientError(f"no file {named}", Kind.INVALID) from None
        except IsADirectoryError:
            raise ClientError(f"{named} is a folder, not a text file", Kind.INVALID) from None
        except OSError as err:
            raise ClientError(f"cannot read {named}: {err.strerror or err}", Kind.INVALID) from None
    try:
        return data.decode("utf-8-sig"), named, base
    except UnicodeDecodeError:
        raise ClientError(
            f"{named} is not UTF-8 text (give Markdown or plain text)", Kind.INVALID
        ) from None


def _show(result: dict[str, Any], model: bool) -> None:
    for sentence in result["sentences"]:
        cites = "".join(f"[{n}]" for n in sentence["source_ids"])
        print(f"{SHOWN[sentence['verdict']]} {sentence['text']} {cites}")
        if sentence["reason"]:
            print(f"    why: {sentence['reason']}")
        for quote in sentence["evidence"]:
            cut = quote if len(quote) <= QUOTE_CHARS else quote[: QUOTE_CHARS - 1] + "…"
            print(f'    > "{cut}"')
    for source in result["sources"]:
        if source["error"]:
            print(f"source [{source['id']}] not read: {source['error']}")
        elif source["cut"]:
            print(
                f"source [{source['id']}] is long: only its first "
                f"{checking.SOURCE_CHARS:,} characters were checked against"
            )
    print(summary(result, model), flush=True)


def summary(result: dict[str, Any], model: bool) -> str:
    """The last line: how many sentences of each verdict, and who checked them."""
    total = len(result["sentences"])
    counts = [
        f"{result[key]} {word}"
        for key, word in (
            ("supported", "supported"),
            ("partial", "partly"),
            ("unsupported", "unsupported"),
            ("unverified", "unverified"),
        )
        if result[key] or key in ("supported", "unsupported")
    ]
    noun = "sentence" if total == 1 else "sentences"
    return f"{total} {noun}: {', '.join(counts)}; {checking.checked_by_line(result, model)}"
