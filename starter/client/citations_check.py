"""Checking any text's citations against its sources (`check`, `POST /api/check`, the MCP tool
`check_claims`): one module, so the three front ends give the same verdicts for the same text.

Why it reuses the research's own parts rather than anything lighter: a verdict here must mean what
a research's verdict means. So the cited sentences are found by `workflows.kit.verification`, judged
by `workflows.kit.judging` (the deterministic verifier, and a model's judge only once it passed its
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
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from settings import Settings
from starter.client.check_sources import (  # noqa: F401 - the check's sources, named from here too
    MAX_SOURCES,
    SOURCE_CHARS,
    GivenSource,
    ReadSource,
    given_urls,
    is_web,
    listed_sources,
    paragraphs,
    read_sources,
    refused,
    source_number,
    source_options,
    unique,
    without_listing,
)
from workflows.activity_models import VerifyClaimsInput, VerifyClaimsOutput
from workflows.kit import judging
from workflows.kit.verification import cited_sentences
from workflows.record import Calibration, CheckedBy, Claim, Source, Verdict
from workflows.text import alignment

#: What the API and MCP take: a report is far shorter; a body this size is already a big check.
MARKDOWN_MAX_CHARS = 200_000
#: Cited sentences one API or MCP check takes: each is aligned with up to SOURCE_CHARS of
#: evidence per source it cites (tens of ms of CPU), so a 200,000-character text of nothing but
#: citations must not hold a server for minutes. The CLI checks any number.
MAX_SENTENCES = 300
#: Cited sentences × sources one API or MCP check takes: the cost is about that
#: product (the red team measured 0.044 CPU-s a pair; 300 sentences × 50 sources ran 600 s).
MAX_PAIRS = 3_000
#: Text given with a source over the API or MCP (SOURCE_CHARS of it are kept, as of a page).
GIVEN_TEXT_MAX_CHARS = 100_000
#: Tries of one judge call, and the pause before the next: the engine's client does not retry
#: (a research's retries are Temporal's), and a check has no Temporal.
JUDGE_TRIES = 3
JUDGE_BACKOFF_S = 1.0
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)


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
        raise refused(f"the markdown is longer than {MARKDOWN_MAX_CHARS:,} characters")
    if (cited := len(cited_sentences(without_listing(request.markdown)))) > MAX_SENTENCES:
        raise refused(
            f"the markdown has {cited} cited sentences: at most {MAX_SENTENCES} are checked at once"
        )
    chosen = [_given(s) for s in request.sources or []] + list(named or [])
    given = unique(chosen or listed_sources(request.markdown))
    if cited * len(given) > MAX_PAIRS:
        raise refused(
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
        raise refused(f"source [{source.id}]: give either its url or its text")
    if source.url is not None and not is_web(source.url.strip()):
        raise refused(f"source [{source.id}]: only http(s) URLs or text")
    return GivenSource(source.id, (source.url or "").strip(), source.title, source.text)


# --- the check ----------------------------------------------------------------------------------------


def model_judge(cfg: Settings) -> judging.JudgeCall | None:
    """The configured model's judge, or None (no model: the deterministic verdicts). A call that
    fails is tried again twice after a short pause (a rate limit or a dropped connection usually
    passes); one that keeps failing, or fails for good (a wrong key), is "the judge did not
    answer", never an error of the check."""
    if cfg.llm.engine != "openai":
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
    totals. Refuses (a `ClientError`, INVALID) a text with no cited sentence or no source at all, and with
    NEED_ONE one none of whose sources could be read (nothing was checked)."""
    sentences = cited_sentences(without_listing(markdown))
    if not sentences:
        raise refused(f"no sentence of {named} cites a source [n]")
    if not given:
        raise refused(
            f"no sources: {named} lists none as `[n] Title - URL_OR_PATH` lines; give them "
            f"with {give}"
        )
    sources = await read_sources(given, cfg, local_files=local_files, base=base, owner=owner)
    if need_one and all(s.error for s in sources):
        first = sources[0]
        more = f" (and {len(sources) - 1} more)" if len(sources) > 1 else ""
        raise refused(
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
