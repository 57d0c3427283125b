"""Checking any text's citations against its sources (`check`, `POST /api/check`, the MCP tool
`check_claims`): one module, so the three front ends give the same verdicts for the same text.

Why it reuses the research's own parts rather than anything lighter: a verdict here must mean what
a research's verdict means. So the cited sentences are found by `workflows.checks.verification`, judged
by `workflows.checks.judging` (the deterministic verifier, and a model's judge only once it passed its
canaries), pages are read by the crawler with all its rules (robots.txt, no private addresses
unless CRAWL_ALLOW_PRIVATE, size and time caps) and local documents by the corpus's reader (only a
regular file, a byte cap, parsed in a limited child process).

What a front end decides: whether a local path may be read at all (`local_files`: the CLI reads
the user's own files; the API and MCP serve others and never read a path of the server), and whose
documents a local source's name may be (`owner`): a report lists its local sources by the name the
product gives them (storage/public_names.py: `mercury.md`, an upload's file name), so
such a name is found again in RESEARCH_CORPUS_DIR (or the interpreter's library, the bundled
corpus) and the owner's uploads (`named_file`), never anywhere else of the server.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from activities.web import crawler as web
from activities.web import reading
from config import Settings
from workflows.activity_models import VerifyClaimsInput, VerifyClaimsOutput
from workflows.checks import alignment, judging
from workflows.checks.verification import cited_sentences
from workflows.record import Calibration, CheckedBy, Claim, Evidence, Source, Verdict

#: Text kept per source: what a long page's claims are checked against (the rest is said cut).
SOURCE_CHARS = 60_000
#: What the API and MCP take: a report is far shorter; a body this size is already a big check.
MARKDOWN_MAX_CHARS = 200_000
MAX_SOURCES = 50
#: Cited sentences one API or MCP check takes: each is aligned with up to SOURCE_CHARS of
#: evidence per source it cites (tens of ms of CPU), so a 200,000-character text of nothing but
#: citations must not hold a server for minutes. The CLI checks any number.
MAX_SENTENCES = 300
#: Cited sentences × sources one API or MCP check takes (issue 49): the cost is about that
#: product (the red team measured 0.044 CPU-s a pair; 300 sentences × 50 sources ran 600 s).
MAX_PAIRS = 3_000
#: Sources read at once by one check: each page's body (up to CRAWL_MAX_BYTES) and its extraction
#: are held only while it is read, so a check's memory is this many pages, not all of them.
READS_AT_ONCE = 4
#: Text given with a source over the API or MCP (SOURCE_CHARS of it are kept, as of a page).
GIVEN_TEXT_MAX_CHARS = 100_000
#: Tries of one judge call, and the pause before the next: the engine's client does not retry
#: (a research's retries are Temporal's), and a check has no Temporal.
JUDGE_TRIES = 3
JUDGE_BACKOFF_S = 1.0
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
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)


class CheckRefused(ValueError):
    """Bad input: one line saying what to change (exit 2, HTTP 422, an MCP tool error)."""


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


class SourceGiven(BaseModel):
    """A source of `POST /api/check` and the MCP tool: an http(s) URL, or a text with its title."""

    model_config = ConfigDict(extra="forbid")

    id: int = Field(ge=1, le=999_999, description="the number the text cites it by, [id]")
    url: str | None = Field(default=None, max_length=2000, description="an http(s) URL")
    title: str = Field(default="", max_length=500)
    text: str | None = Field(
        default=None, max_length=GIVEN_TEXT_MAX_CHARS, description="the source's text itself"
    )


class CheckRequest(BaseModel):
    """`POST /api/check`: the text, and its sources (default: its own `[n] Title - URL` lines,
    of which only the http(s) URLs are read)."""

    model_config = ConfigDict(extra="forbid")

    markdown: str = Field(max_length=MARKDOWN_MAX_CHARS)
    sources: list[SourceGiven] | None = Field(default=None, max_length=MAX_SOURCES)


async def check_request(
    request: CheckRequest,
    cfg: Settings,
    owner: str | None = None,
    named: list[GivenSource] | None = None,
) -> dict[str, Any]:
    """The API's and MCP's check: never a path of the server, only http(s) URLs (through the
    crawler's network guard) and texts given. The page's check (OWNER given) also reads local
    sources by the names the product gives them (`named_file`: the corpus and OWNER's uploads),
    those of NAMED (chosen on the page) and of the text's own Sources list."""
    if len(request.markdown) > MARKDOWN_MAX_CHARS:  # the MCP tool's arguments are not the model
        raise CheckRefused(f"the markdown is longer than {MARKDOWN_MAX_CHARS:,} characters")
    if (cited := len(cited_sentences(without_listing(request.markdown)))) > MAX_SENTENCES:
        raise CheckRefused(
            f"the markdown has {cited} cited sentences: at most {MAX_SENTENCES} are checked at once"
        )
    chosen = [_given(s) for s in request.sources or []] + list(named or [])
    given = unique(chosen or listed_sources(request.markdown))
    if cited * len(given) > MAX_PAIRS:
        raise CheckRefused(
            f"{cited} cited sentences × {len(given)} sources is {cited * len(given):,} pairs: at "
            f"most {MAX_PAIRS:,} are checked at once (check fewer sentences or sources at a time)"
        )
    return await check_text(
        request.markdown,
        given,
        cfg,
        local_files=False,
        named="the markdown" if owner is None else "the text",
        give='"sources": [{"id": 1, "url": "https://..."}]'
        if owner is None
        else "the Sources below",
        owner=owner,
    )


def _given(source: SourceGiven) -> GivenSource:
    if (source.url is None) == (source.text is None):
        raise CheckRefused(f"source [{source.id}]: give either its url or its text")
    if source.url is not None and not is_web(source.url.strip()):
        raise CheckRefused(f"source [{source.id}]: only http(s) URLs or text")
    return GivenSource(source.id, (source.url or "").strip(), source.title, source.text)


# --- the sources ------------------------------------------------------------------------------------


def source_options(values: list[str]) -> list[GivenSource]:
    """`--source N=PATH_OR_URL` options, each id once."""
    given: list[GivenSource] = []
    for value in values:
        number, _, where = value.partition("=")
        if not number.strip().isdigit() or int(number) < 1 or not where.strip():
            raise CheckRefused(f"--source {value[:100]!r} is not N=PATH_OR_URL (e.g. 1=notes.md)")
        given.append(GivenSource(int(number), where.strip()))
    return unique(given)


def unique(given: list[GivenSource]) -> list[GivenSource]:
    if len(given) > MAX_SOURCES:
        raise CheckRefused(f"{len(given)} sources: at most {MAX_SOURCES} are checked at once")
    ids = [s.id for s in given]
    twice = sorted({n for n in ids if ids.count(n) > 1})
    if twice:
        raise CheckRefused(f"source [{twice[0]}] is given twice")
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
    corpus, library = (roots[:1], roots[1:]) if cfg.research_corpus_dir else ([], roots)
    for folder in corpus:
        if (folder / name).is_file():
            return folder / name
    if owner and len(parts) == 1:
        root = uploads_root(cfg.research_data_dir)
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
        read_documents, real.parent, real, cfg.corpus_max_file_bytes
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


# --- the check ----------------------------------------------------------------------------------------


def model_judge(cfg: Settings) -> judging.JudgeCall | None:
    """The configured model's judge, or None (no model: the deterministic verdicts). A call that
    fails is tried again twice after a short pause (a rate limit or a dropped connection usually
    passes); one that keeps failing, or fails for good (a wrong key), is "the judge did not
    answer", never an error of the check."""
    if cfg.engine_name != "openai":
        return None
    from activities.openai_engine.engine import OpenAIEngine

    engine = OpenAIEngine(cfg)

    async def ask(claims: VerifyClaimsInput) -> VerifyClaimsOutput | None:
        for attempt in range(JUDGE_TRIES):
            try:
                return await engine.verify_claims(claims)
            except Exception as err:  # noqa: BLE001 - the judge not answering is a verdict's matter
                if getattr(err, "non_retryable", False) or attempt == JUDGE_TRIES - 1:
                    return None
                await asyncio.sleep(JUDGE_BACKOFF_S * 2**attempt)
        return None

    return ask


async def check_text(
    markdown: str,
    given: list[GivenSource],
    cfg: Settings,
    *,
    local_files: bool,
    base: Path | None = None,
    named: str = "the text",
    give: str = "--source N=PATH_OR_URL",
    owner: str | None = None,
    need_one: bool = False,
) -> dict[str, Any]:
    """The checked text: each cited sentence's verdict, why, the evidence it rests on, and the
    totals. Refuses (CheckRefused) a text with no cited sentence or no source at all, and with
    NEED_ONE one none of whose sources could be read (nothing was checked)."""
    sentences = cited_sentences(without_listing(markdown))
    if not sentences:
        raise CheckRefused(f"no sentence of {named} cites a source [n]")
    if not given:
        raise CheckRefused(
            f"no sources: {named} lists none as `[n] Title - URL_OR_PATH` lines; give them "
            f"with {give}"
        )
    sources = await read_sources(given, cfg, local_files=local_files, base=base, owner=owner)
    if need_one and all(s.error for s in sources):
        first = sources[0]
        more = f" (and {len(sources) - 1} more)" if len(sources) > 1 else ""
        raise CheckRefused(
            f"none of the sources could be read, so nothing was checked: source [{first.id}] "
            f"{first.url or first.title}: {first.error}{more}"
        )
    claims = [Claim(text=s.claim, source_ids=list(s.source_ids)) for s in sentences]
    checked, calibration = await judge(claims, sources, markdown, model_judge(cfg))
    return outcome(checked, sources, calibration)


async def judge(
    claims: list[Claim], sources: list[ReadSource], markdown: str, ask: judging.JudgeCall | None
) -> tuple[list[Claim], Calibration | None]:
    """Claims whose cited sources were all unreadable or never given stay unverified, with why;
    the others are judged against the sources that were read."""
    readable = {s.id: s for s in sources if not s.error}
    evidence = {s.id: paragraphs(s) for s in readable.values()}
    judged = [c for c in claims if any(n in readable for n in c.source_ids)]
    verdicts, calibration = await judging.judge_claims(
        judged,
        lambda claim: [e for n in claim.source_ids for e in evidence.get(n, [])],
        [Source(id=s.id, url=s.url, title=s.title) for s in readable.values()],
        {"query": _about(markdown), "language": "en"},
        ask,
    )
    by_text = {c.text: c for c in verdicts}
    out = []
    for claim in claims:
        missing = _missing(claim, sources)
        done = by_text.get(claim.text)
        if done is None:
            out.append(claim.model_copy(update={"reason": "; ".join(missing)}))
        else:
            out.append(done.model_copy(update={"reason": "; ".join([done.reason, *missing])}))
    return out, calibration


def _missing(claim: Claim, sources: list[ReadSource]) -> list[str]:
    by_id = {s.id: s for s in sources}
    return [
        f"no source [{n}] was given"
        if n not in by_id
        else f"source [{n}] could not be read: {by_id[n].error}"
        for n in claim.source_ids
        if n not in by_id or by_id[n].error
    ]


def _about(markdown: str) -> str:
    """What the text is about, for the judge: its first `# ` heading, else its first sentence."""
    heading = _HEADING.search(markdown)
    if heading:
        return heading.group(1)[:300]
    first = cited_sentences(markdown)
    return (first[0].claim if first else markdown.strip().split("\n")[0])[:300]


def outcome(
    claims: list[Claim], sources: list[ReadSource], calibration: Calibration | None
) -> dict[str, Any]:
    """The INTERFACE's object, plus `calibration` and what became of each source."""
    by_id = {s.id: s for s in sources}
    sentences = [
        {
            "text": c.text,
            "source_ids": c.source_ids,
            "verdict": c.verdict.value,
            "reason": c.reason,
            "evidence": quotes(c, [by_id[n] for n in c.source_ids if n in by_id]),
            "checked_by": c.checked_by.value or None,
        }
        for c in claims
    ]
    counts = {v.value: sum(c.verdict is v for c in claims) for v in Verdict}
    return {
        "sentences": sentences,
        **{k: counts.get(k, 0) for k in ("supported", "partial", "unsupported", "unverified")},
        "checked_by": judging.checked_by(claims, calibration).value,
        "calibration": calibration.model_dump(mode="json") if calibration else None,
        "sources": [
            {"id": s.id, "title": s.title, "url": s.url, "error": s.error or None, "cut": s.cut}
            for s in sources
        ],
    }


def quotes(claim: Claim, sources: list[ReadSource]) -> list[str]:
    """The sentence of the cited sources that best matches the claim, and for a claim not
    supported whole by one sentence, the next best one when it holds half the claim's words."""
    texts = [e.text for s in sources if not s.error for e in paragraphs(s)]
    if not texts:
        return []
    titles = [s.title for s in sources]
    first = alignment.read(claim.text, texts, titles)
    if first.best is None:
        return []
    found = [first.best.text]
    if claim.verdict is not Verdict.SUPPORTED:
        rest = [t.replace(first.best.text, " ") for t in texts]
        second = alignment.read(claim.text, rest, titles)
        if second.best is not None and second.best_coverage >= 0.5:
            found.append(second.best.text)
    return found


def checked_by_line(result: dict[str, Any], model: bool) -> str:
    """Who checked, in words, with the judge's calibration when it was asked."""
    calibration = result.get("calibration")
    if result["checked_by"] == CheckedBy.JUDGE.value and calibration:
        return (
            f"checked by the model's judge (passed {calibration['passed']} of "
            f"{calibration['canaries']} canaries)"
        )
    if not model:
        return "checked lexically (no model configured)"
    if calibration and not calibration["trusted"]:
        why = "; ".join(calibration["failures"][:1]) or "it was not trusted"
        return f"checked lexically (the model's judge failed calibration: {why})"
    if calibration and calibration["trusted"]:
        return "checked lexically (the model's judge passed its canaries, then did not answer)"
    return "checked lexically (no verdict needed the model's judge)"
