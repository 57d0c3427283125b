"""The sources a text's citations are checked against (starter/client/citations_check.py): as
given (options, a text's own Sources list, the URL lines a person typed), and as read (a page
through the crawler with all its rules, a document of the user's own through the corpus's
reader, a name the product gives a local source found again where it may be).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from activities.web import crawler as web
from activities.web import reading
from settings import Settings
from starter.client.errors import ClientError, Kind
from workflows.record import Evidence

#: Text kept per source: what a long page's claims are checked against (the rest is said cut).
SOURCE_CHARS = 60_000
MAX_SOURCES = 50
#: Sources read at once by one check: each page's body (up to CRAWL_MAX_BYTES) and its extraction
#: are held only while it is read, so a check's memory is this many pages, not all of them.
READS_AT_ONCE = 4
#: A reference line as a report's Sources section writes it: `- [n] Title - URL (origin)`; the
#: location is what follows the last dash, spaces and all (an upload is named by its file name,
#: `Mars notes.md`).
_LISTED = re.compile(
    r"^[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?\[(\d{1,6})\][ \t]*(.*)[ \t]+[-–—][ \t]+"
    r"(\S(?:[^\n]*?\S)?)"
    r"(?:[ \t]+\([^()\n]*\))?[ \t]*$",
    re.M,
)
_LOCATION = re.compile(r"^(?:https?://|file:|[~/.]|\w+/)|\.\w{1,5}$", re.I)
#: A line a person types to give source N by its URL: `1 https://...`, `[1] https://...`,
#: `1=https://...` or `1. https://...`.
_URL_LINE = re.compile(r"^\s*\[?(\d{1,6})\]?\s*[.=:)]?\s*(\S+)\s*$")


def refused(message: str) -> ClientError:
    """Bad input to a check: one line saying what to change (exit 2, HTTP 422, an MCP tool
    error)."""
    return ClientError(message, Kind.INVALID)


@dataclass(frozen=True)
class GivenSource:
    """A source as given: a URL or a path (`where`), or a text with its title."""

    id: int
    where: str = ""
    title: str = ""
    text: str | None = None


@dataclass(frozen=True)
class ReadSource:
    id: int
    title: str
    url: str
    text: str = ""
    #: Why nothing could be read ("" when it was read).
    error: str = ""
    #: The text was longer than SOURCE_CHARS and only its beginning was kept.
    cut: bool = False


# --- the sources ------------------------------------------------------------------------------------


def source_options(values: list[str]) -> list[GivenSource]:
    """`--source N=PATH_OR_URL` options, each id once."""
    given: list[GivenSource] = []
    for value in values:
        number, _, where = value.partition("=")
        if not number.strip().isdigit() or int(number) < 1 or not where.strip():
            raise refused(f"--source {value[:100]!r} is not N=PATH_OR_URL (e.g. 1=notes.md)")
        given.append(GivenSource(int(number), where.strip()))
    return unique(given)


def unique(given: list[GivenSource]) -> list[GivenSource]:
    if len(given) > MAX_SOURCES:
        raise refused(f"{len(given)} sources: at most {MAX_SOURCES} are checked at once")
    ids = [s.id for s in given]
    twice = sorted({n for n in ids if ids.count(n) > 1})
    if twice:
        raise refused(f"source [{twice[0]}] is given twice")
    return given


def listed_sources(markdown: str) -> list[GivenSource]:
    """The text's own reference lines, `[n] Title - URL_OR_PATH`, first of each id kept."""
    found: dict[int, GivenSource] = {}
    for line in _LISTED.finditer(markdown):
        number, title, where = int(line.group(1)), line.group(2).strip(), line.group(3)
        if _LOCATION.search(where) and number not in found:
            found[number] = GivenSource(
                number, where, title.replace("\\[", "[").replace("\\]", "]")
            )
    return list(found.values())[:MAX_SOURCES]


def without_listing(markdown: str) -> str:
    """The text without its reference lines: a list line is not a claim, wherever it stands."""
    return _LISTED.sub(lambda m: "" if _LOCATION.search(m.group(3)) else m.group(0), markdown)


def is_web(where: str) -> bool:
    return where.lower().startswith(("http://", "https://"))


def named_file(where: str, cfg: Settings, owner: str | None) -> Path | None:
    """The file a local source's name stands for, as the product names it in a report's Sources
    list: its path inside RESEARCH_CORPUS_DIR, else OWNER's upload of that file name (the newest),
    else its path inside the interpreter's library; None when it is none of them. A `#page=N` is
    dropped (the whole document is read); an absolute path, `~` or `..` is never a name."""
    from activities.corpus.uploads import list_uploads, owner_folder, uploads_root
    from storage.public_names import PublicNames

    name = where.split("#", 1)[0].strip()
    if not name or name.startswith(("/", "~", "\\")) or ":" in name.split("/", 1)[0]:
        return None
    parts = PurePosixPath(name).parts
    if ".." in parts:
        return None
    roots = PublicNames.of(cfg).roots  # RESEARCH_CORPUS_DIR when set, then the library
    corpus, library = (roots[:1], roots[1:]) if cfg.corpus.folder else ([], roots)
    for folder in corpus:
        if (folder / name).is_file():
            return folder / name
    if owner and len(parts) == 1:
        root = uploads_root(cfg.library.data_dir)
        for upload in list_uploads(root, owner):
            if upload.name == name:
                return owner_folder(root, owner) / upload.id / upload.name
    for folder in library:
        if (folder / name).is_file():
            return folder / name
    return None


async def read_sources(
    given: list[GivenSource],
    cfg: Settings,
    *,
    local_files: bool,
    base: Path | None = None,
    owner: str | None = None,
) -> list[ReadSource]:
    """Every source read (READS_AT_ONCE at a time), or its error; relative paths are taken from
    `base`, then as the names the product gives local sources (`named_file`, OWNER's uploads)."""
    crawler = web.Crawler(cfg)
    turns = asyncio.Semaphore(READS_AT_ONCE)

    async def read(source: GivenSource) -> ReadSource:
        async with turns:
            return await _read(source, cfg, crawler, local_files, base, owner)

    try:
        return list(await asyncio.gather(*(read(s) for s in given)))
    finally:
        await crawler.aclose()


async def _read(
    source: GivenSource,
    cfg: Settings,
    crawler: web.Crawler,
    local_files: bool,
    base: Path | None,
    owner: str | None,
) -> ReadSource:
    if source.text is not None:
        return _kept(ReadSource(source.id, source.title or f"source {source.id}", "", source.text))
    where = source.where
    try:
        if is_web(where):
            page = await reading.read_url(where, using=crawler)
            head = page.text[: 2 * SOURCE_CHARS]  # trimmed at once: only SOURCE_CHARS are kept
            text = "\n\n".join(line for line in head.splitlines() if line.strip())
            read = ReadSource(source.id, source.title or page.title or where, page.url, text)
            kept = _kept(read)
            return replace(kept, cut=True) if len(page.text) > len(head) and kept.text else kept
        if not local_files:
            named = named_file(where, cfg, owner) if owner is not None else None
            if named is None:
                error = "only http(s) URLs are read" if owner is None else _unnamed(where)
                return ReadSource(source.id, source.title, where, error=error)
            return _kept(await _read_file(replace(source, where=str(named)), cfg, None))
        return _kept(await _read_file(source, cfg, base, owner))
    except web.CrawlError as err:
        return ReadSource(source.id, source.title or where, where, error=err.reason)
    except (ValueError, OSError) as err:
        return ReadSource(source.id, source.title or where, where, error=str(err) or "unreadable")


async def _read_file(
    source: GivenSource, cfg: Settings, base: Path | None, owner: str | None = None
) -> ReadSource:
    """A document of the user's own, as the local corpus reads one (Markdown, text, HTML, PDF,
    Word); a `file:` URL (as reports list local documents) is its path; a name that is no file
    from BASE is looked for as the product names local sources (`named_file`)."""
    from activities.corpus.reader import read_documents

    where = source.where
    if where.lower().startswith("file:"):
        where = unquote(urlsplit(where).path)
    path = Path(where).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    if not path.exists():
        named = named_file(source.where, cfg, owner)
        if named is None:
            raise ValueError(_unnamed(source.where))
        path = named
    real = path.resolve()
    documents = await asyncio.to_thread(
        read_documents, real.parent, real, cfg.corpus.max_file_bytes
    )
    text = "\n\n".join(d.body for d in documents)
    title = source.title or (documents[0].title if documents else "") or path.name
    return ReadSource(source.id, title, real.as_uri(), text)


def _unnamed(where: str) -> str:
    return f"no file {where} (nor in RESEARCH_CORPUS_DIR or your documents)"


def _kept(source: ReadSource) -> ReadSource:
    if not source.text.strip():
        return replace(source, text="", error="no readable text")
    if len(source.text) <= SOURCE_CHARS:
        return source
    cut = source.text[:SOURCE_CHARS]
    return replace(source, text=cut[: cut.rfind("\n") if "\n" in cut else SOURCE_CHARS], cut=True)


def paragraphs(source: ReadSource) -> list[Evidence]:
    """A source's text as the evidence a claim is measured against: one item a paragraph."""
    texts = [" ".join(p.split()) for p in re.split(r"\n\s*\n", source.text) if p.strip()]
    return [Evidence(source_id=source.id, position=i, text=t) for i, t in enumerate(texts)]


def given_urls(text: str) -> dict[int, str]:
    """Sources given by URL, one a line as a person types them (`1 https://...`, `[1] ...`,
    `1=...`, `1. ...`): number to URL, a later line for a number replacing an earlier one."""
    found: dict[int, str] = {}
    for line in text.splitlines():  # \r\n or \n
        if not line.strip():
            continue
        matched = _URL_LINE.match(line)
        if not matched or not is_web(matched.group(2)):
            raise refused(
                f"{line.strip()[:100]!r} is not a number and an http(s) URL "
                "(e.g. 1 https://example.org/page)"
            )
        found[source_number(matched.group(1), "a source's number")] = matched.group(2)
    return found


def source_number(value: str, what: str) -> int:
    """A source's number as a person typed it: a whole number from 1, as the text cites it."""
    value = value.strip()
    if not value.isdigit() or not 1 <= int(value) <= 999_999:
        raise refused(f"{what} must be a whole number from 1, as the text cites it")
    return int(value)
