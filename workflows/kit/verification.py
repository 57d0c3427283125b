"""Claim verification's deterministic half: find a report's cited sentences, measure each against
the evidence of the sources it cites, and edit the report by the verdicts.

Why: the complaint users make most often about research assistants is a citation that does not say
what its sentence claims. The verdicts themselves are the deterministic verifier's
(workflows/text/alignment.py, `lexical_verdict` here for the offline engine and the guard on what
a model writes) and a calibrated judge's (workflows/kit/judging.py); this module finds the
claims, edits the report by their verdicts and sums them up.

Pure and deterministic (stdlib, workflows.text, workflows.models only): it runs inside the
workflow sandbox, and every edit of the report is replayed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from workflows.kit.citations import CITATION
from workflows.models import CheckedBy, Claim, Verdict, VerificationSummary
from workflows.text import alignment

#: Appended right after a partly supported sentence's last citation, before its final punctuation
#: ("... cooperatively [3] *(partly supported)*."), so the mark travels with the sentence it qualifies.
PARTIAL_MARK = " *(partly supported)*"

#: The one citation pattern (workflows/kit/citations.py), but not `\[7\]` (escaped text) or `[1](url)` (a link).
_CITE = re.compile(r"(?<!\\)" + CITATION.pattern + r"(?!\()")
#: split_sentences's boundary (end punctuation, space, a capital) plus a citation that ends a
#: sentence ("... B [1]. C", "... B.[1] C"); applied to the raw line so `text` stays a substring.
_ENDS = re.compile(
    r"[.!?][\"”’')*_]*(?:[ \t]*" + _CITE.pattern + r")*(?:" + re.escape(PARTIAL_MARK) + ")?$"
)
_GAP = re.compile(r"[ \t]+(?=[A-Z0-9\"'“‘(\[`*_])")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+|$)(.*)$")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_LEAD = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?")  # indentation and a list marker
_SOURCES_TITLE = re.compile(
    r"(?:\d+(?:\.\d+)*\.?\s+)?(?:sources?|references?|bibliography|works cited)", re.IGNORECASE
)
_SOURCE_LINE = re.compile(r"^[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?\[(\d+)\]")


# --- the report's cited sentences -----------------------------------------------------------------


@dataclass(frozen=True)
class CitedSentence:
    text: str  # exactly as it appears in the report, with its [n] markers
    claim: str  # the sentence without citation markers, whitespace-normalized, no list marker
    source_ids: tuple[int, ...]


def cited_sentences(markdown: str) -> list[CitedSentence]:
    """Every sentence of the report's prose that cites a source, each claim once (first kept).

    Prose is split line by line: a list item or a paragraph written on one line (as reports are)
    is the unit, so a sentence wrapped over two lines is seen as two pieces.
    """
    found: list[CitedSentence] = []
    seen: set[str] = set()
    for line in _scan(markdown)[0]:
        body = markdown[line.body : line.end]
        for start, end in _sentence_spans(body):
            text = body[start:end]
            ids = tuple(
                dict.fromkeys(
                    int(n) for m in _CITE.finditer(_masked(text)) for n in m.group(1).split(",")
                )
            )
            claim = _claim(text)
            if ids and claim and claim.lower() not in seen:
                seen.add(claim.lower())
                found.append(CitedSentence(text=text, claim=claim, source_ids=ids))
    return found


_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _masked(text: str) -> str:
    """The text with its code spans blanked: `heap[0]` holds no citation."""
    return _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)


def _claim(text: str) -> str:
    text = text.replace(PARTIAL_MARK.strip(), "")
    cuts = [m.span() for m in _CITE.finditer(_masked(text))]
    for start, end in reversed(cuts):
        text = text[:start] + text[end:]
    text = " ".join(text.split())
    return re.sub(r"\s+([.!?,;:)])", r"\1", text).strip()


def _sentence_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of one line of prose; a citation stays with the sentence before
    it, even when it follows the full stop ("... valid.[2] They ...")."""
    spans: list[tuple[int, int]] = []
    start = len(line) - len(line.lstrip())
    for gap in _GAP.finditer(line, start):
        rest = line[gap.end() :]
        if (
            _CITE.match(rest)
            or rest.startswith(PARTIAL_MARK.strip())
            or not _ENDS.search(line, start, gap.start())
        ):
            continue
        spans.append((start, gap.start()))
        start = gap.end()
    if line[start:].strip():
        spans.append((start, len(line.rstrip())))
    return spans


@dataclass(frozen=True)
class _Line:
    start: int  # where the line starts in the markdown
    body: int  # where its text starts: after the indentation and any list marker
    end: int  # where it ends, before the line break


def _scan(markdown: str) -> tuple[list[_Line], list[_Line]]:
    """(prose lines, sources-section lines). Prose is what a reader takes as the report's claims:
    no headings, code, quotes or tables, and not the sources list, which runs from a heading named
    Sources, References or Bibliography to the next heading of the same or a higher level. A line
    holding only such a name ("**Sources:**", as LLMs also write) opens a list any heading ends."""
    prose: list[_Line] = []
    sources: list[_Line] = []
    fence, section, start = "", 0, 0  # section: the sources heading's level while in its list
    for raw in markdown.split("\n"):
        line, stripped, begin = raw.rstrip("\r"), raw.strip(), start
        start, end = start + len(raw) + 1, begin + len(line)
        if fence:
            fence = "" if stripped.startswith(fence) and set(stripped) == {fence[0]} else fence
        elif opening := _FENCE.match(line):
            fence = opening.group(1)
        elif (atx := _ATX.match(line)) or _SOURCES_TITLE.fullmatch(stripped.strip("*_:")):
            level = len(atx.group(1)) if atx else 7
            section = 0 if level <= section else section
            title = atx.group(2) if atx else stripped
            section = level if _SOURCES_TITLE.fullmatch(title.strip(" \t*_:#")) else section
        elif section:
            sources.append(_Line(begin, begin, end))
        elif stripped and not stripped.startswith((">", "|")):
            lead = _LEAD.match(line)  # always matches (it may match nothing)
            prose.append(_Line(begin, begin + (lead.end() if lead else 0), end))
    return prose, sources


# --- the lexical measure --------------------------------------------------------------------------


@dataclass(frozen=True)
class LexicalCheck:
    coverage: float  # share of the claim's content terms found in the cited evidence (0..1)
    missing_numbers: tuple[str, ...]  # numbers in the claim absent from the evidence
    verdict: Verdict | None
    reason: str


def lexical_verdict(
    claim: str, evidence: list[str], titles: list[str] | None = None
) -> LexicalCheck:
    """The deterministic verifier's whole verdict (workflows/text/alignment.py): SUPPORTED only when one
    cited passage holds every content word, number and code name of the claim with the same
    polarity; a swapped number or name, or a flipped meaning, is UNSUPPORTED; words gathered from
    several passages (a paraphrase, or a stitched claim) at most PARTIAL. The offline engine's
    judge and the guard on what a model writes both use it."""
    finding = alignment.verdict(claim, evidence, titles)
    reading = finding.reading or alignment.read(claim, [], titles)  # no evidence: nothing held
    return LexicalCheck(
        reading.coverage,
        tuple(reading.missing_exact),
        Verdict(finding.verdict),
        finding.reason,
    )


# --- editing the report -------------------------------------------------------------------------


def remove_sentence(markdown: str, sentence_text: str) -> str:
    """The report without the sentence (every occurrence in the prose: the offline report repeats
    its top findings in the summary). A list item or paragraph left empty loses its line; headings
    stay, even over an emptied section."""
    for line, start, end in reversed(_occurrences(markdown, sentence_text)):
        before = markdown[line.body : start].rstrip(" \t")
        after = markdown[end : line.end].lstrip(" \t")
        if not before.strip() and not after.strip():
            markdown = _delete_line(markdown, line.start)
        else:
            markdown = (
                markdown[: line.body]
                + before
                + (" " if before and after else "")
                + after
                + markdown[line.end :]
            )
    return markdown


def replace_sentence(markdown: str, old: str, new: str) -> str:
    """The report with the sentence rewritten (every occurrence); an empty rewrite removes it."""
    new = " ".join(new.split())
    return _replace(markdown, old, new) if new else remove_sentence(markdown, old)


def mark_partial(markdown: str, sentence_text: str) -> str:
    """The report with PARTIAL_MARK right after the sentence's last citation (see PARTIAL_MARK),
    wherever the sentence stands; a sentence already marked is left as it is."""
    for _, start, end in reversed(_occurrences(markdown, sentence_text)):
        cites = list(_CITE.finditer(markdown, start, end))
        at = cites[-1].end() if cites else -1
        if cites and not markdown.startswith(PARTIAL_MARK, at):
            markdown = markdown[:at] + PARTIAL_MARK + markdown[at:]
    return markdown


def drop_unused_sources(markdown: str, keep_ids: Iterable[int]) -> str:
    """The report with the sources list's lines for ids not in `keep_ids` removed, so the list names
    only sources the prose still cites. Lines without a leading [n] are kept."""
    keep = set(keep_ids)
    for line in reversed(_scan(markdown)[1]):
        listed = _SOURCE_LINE.match(markdown[line.start : line.end])
        if listed and int(listed.group(1)) not in keep:
            markdown = _delete_line(markdown, line.start)
    return markdown


def _occurrences(markdown: str, text: str) -> list[tuple[_Line, int, int]]:
    """Where `text` stands as whole sentences of the prose: starting where a sentence starts and
    ending where one ends, so "B [1]." is not found inside "A B [1].", nor anything in the sources
    list or in code. Runs of whitespace match any run (a rewrite may have been normalized)."""
    found: list[tuple[_Line, int, int]] = []
    pattern = re.compile(r"[ \t]+".join(re.escape(word) for word in text.split()))
    for line in _scan(markdown)[0] if text.strip() else []:
        body = markdown[line.body : line.end]
        spans = _sentence_spans(body)
        starts, ends = {start for start, _ in spans}, {end for _, end in spans}
        found += [
            (line, line.body + m.start(), line.body + m.end())
            for m in pattern.finditer(body)
            if m.start() in starts and m.end() in ends
        ]
    return found


def _replace(markdown: str, old: str, new: str) -> str:
    for _, start, end in reversed(_occurrences(markdown, old)):
        markdown = markdown[:start] + new + markdown[end:]
    return markdown


def _delete_line(markdown: str, start: int) -> str:
    """Remove the line at `start` with its line break; where that leaves two blank lines, keep one."""
    end = markdown.find("\n", start)
    markdown = markdown[:start] + ("" if end < 0 else markdown[end + 1 :])
    previous_blank = (
        start == 0 or not markdown[markdown.rfind("\n", 0, start - 1) + 1 : start].strip()
    )
    while previous_blank and start < len(markdown):
        end = markdown.find("\n", start)
        if end < 0 or markdown[start:end].strip():
            break
        markdown = markdown[:start] + markdown[end + 1 :]
    return markdown


# --- the summary ------------------------------------------------------------------------------------


def summarize(claims: list[Claim], *, method: str, enabled: bool = True) -> VerificationSummary:
    """Counts by final verdict; a removed claim counts under its verdict and in `removed`."""
    count = {v: sum(1 for c in claims if c.verdict is v) for v in Verdict}
    return VerificationSummary(
        enabled=enabled,
        method=method,
        claims=len(claims),
        supported=count[Verdict.SUPPORTED],
        partial=count[Verdict.PARTIAL],
        unsupported=count[Verdict.UNSUPPORTED],
        unverified=count[Verdict.UNVERIFIED],
        revised=sum(1 for c in claims if c.original is not None),
        removed=sum(1 for c in claims if c.removed),
        share_supported=round(count[Verdict.SUPPORTED] / len(claims), 4) if claims else 0.0,
    )


def verification_note(summary: VerificationSummary) -> str:
    """One italic markdown line for the end of the report: what the reader can trust."""
    if not summary.enabled:  # the workflow puts why in `method` ("the research was cancelled")
        why = summary.method if " " in summary.method else "verification was turned off"
        return f"*Claims were not verified ({why}).*"
    if not summary.claims:
        return "*Verification: the report makes no cited claims.*"
    s = summary
    noun, verb = ("claim" if s.claims == 1 else "claims"), ("is" if s.supported == 1 else "are")
    whose = "its" if s.claims == 1 else "their"
    parts = [f"{s.supported} of {s.claims} {noun} {verb} supported by {whose} cited sources"]
    standing_unsupported = max(0, s.unsupported - s.removed)
    for n, words in (
        (s.partial, 'partly (marked "partly supported")'),
        (standing_unsupported, "unsupported"),
        (s.unverified, "not checked"),
        (s.removed, "removed as unsupported"),
        (s.revised, "rewritten to match the sources"),
        (s.off_subject, _off_subject(s)),
    ):
        if n:
            parts.append(f"{n} {words}")
    return f"*Verification: {'; '.join(parts)}.{who_checked(summary)}*"


def _off_subject(s: VerificationSummary) -> str:
    """ "about another subject than its section asks (Venus under “How long is a
    Martian year”)"."""
    where = [
        f"{o.rpartition(': ')[2]} under “{o.rpartition(': ')[0]}”" for o in s.off_subject_sections
    ]
    return (
        f"about another subject than {'its section asks' if s.off_subject == 1 else 'their sections ask'}"
        + (f" ({'; '.join(where[:3])})" if where else "")
    )


def who_checked(summary: VerificationSummary) -> str:
    """Who decided the verdicts, so a reader knows how far to trust them."""
    calibration = summary.calibration
    if summary.checked_by is CheckedBy.JUDGE and calibration is not None:
        return (
            f" Checked by the model's judge, which passed {calibration.passed} of "
            f"{calibration.canaries} test sentences first."
        )
    if summary.checked_by is not CheckedBy.LEXICAL:
        return ""
    if calibration is not None and not calibration.trusted:
        why = calibration.failures[0].split(":")[0] if calibration.failures else "it failed"
        return (
            f" Checked word by word against the sources: the model's judge was not trusted ({why})."
        )
    return " Checked word by word against the sources (no model judged them)."
