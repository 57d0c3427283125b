"""`make bench-faithfulness`: how far to trust the citations, measured on labelled claims.

The labelled development set (../shared/attribution/dev.jsonl: 12 evidence sets of real Python
documentation, 144 claims labelled by kind, and per set a faithful report and a flawed one) goes
through the verifier a research and `check` use (workflows/kit/judging.py) three ways: with no model
(the deterministic verifier alone), with a careful judge and with an uncritical one (both scripted
OpenAI-protocol servers; the uncritical one must fail its canaries, so its verdicts never count).
With FAITHFULNESS_LLM_URL set (a running OpenAI-compatible server, e.g. llama.cpp's from
`make models`), a fourth column judges with that model.

Printed: per kind, the verdicts (supported / partial / unsupported); per report, whether a faithful
report stands as written (no sentence unsupported) and how many flawed sentences are caught (not
called supported). The table of docs/citations.md, "How far to trust the citations", is this
output (tests/workflow/test_faithfulness_set.py keeps them equal).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.judges import plain
from tests.support.shared import REPO
from workflows.activity_models import VerifyClaimsInput, VerifyClaimsOutput
from workflows.kit import judging
from workflows.kit.citations import CITATION
from workflows.kit.verification import cited_sentences
from workflows.record import Calibration, Claim, Evidence, Source

ATTRIBUTION = Path(
    os.environ.get("ATTRIBUTION_SET") or REPO.parent / "shared" / "attribution" / "dev.jsonl"
)
KINDS = [
    ("verbatim", "supported"),
    ("paraphrase", "supported"),
    ("synthesis", "supported"),
    ("summary", "supported"),
    ("number", "unsupported"),
    ("negation", "unsupported"),
    ("entity", "unsupported"),
    ("extrapolation", "unsupported"),
    ("wrong_citation", "unsupported"),
    ("stitched", "unsupported"),
]


@dataclass
class Figures:
    """One way of judging, over the whole set."""

    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    faithful_kept: int = 0  # faithful reports with no sentence called unsupported
    faithful_sentences: Counter[str] = field(default_factory=Counter)
    flawed_caught: int = 0  # flawed sentences not called supported
    flawed_total: int = 0
    calibrations: list[Calibration | None] = field(default_factory=list)
    reports: int = 0
    #: ALCE's citation recall and precision over the faithful reports (`_alce`): statements whose
    #: citations together support them; citations that support alone or are needed by the rest.
    recall: Counter[str] = field(default_factory=Counter)
    precision: Counter[str] = field(default_factory=Counter)


def load(path: Path = ATTRIBUTION) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _sources(evidence_set: dict[str, Any]) -> tuple[list[Source], list[Evidence]]:
    sources = [
        Source(id=s["id"], url=f"doc:{s['origin']}", title=s["title"])
        for s in evidence_set["sources"]
    ]
    evidence = [
        Evidence(source_id=s["id"], position=i, text=block)
        for s in evidence_set["sources"]
        for i, block in enumerate(re.split(r"\n\s*\n", s["text"]))
        if block.strip()
    ]
    return sources, evidence


async def _judged(
    claims: list[Claim], evidence_set: dict[str, Any], ask: judging.JudgeCall | None
) -> tuple[list[Claim], Calibration | None]:
    sources, evidence = _sources(evidence_set)
    return await judging.judge_claims(
        claims,
        lambda c: [e for e in evidence if e.source_id in c.source_ids],
        sources,
        {"query": evidence_set["question"]},
        ask,
    )


async def measure(sets: list[dict[str, Any]], ask: judging.JudgeCall | None) -> Figures:
    figures = Figures(by_kind={kind: Counter() for kind, _ in KINDS})
    for evidence_set in sets:
        labelled = evidence_set["claims"]
        claims = [Claim(text=c["text"], source_ids=c["cites"]) for c in labelled]
        checked, calibration = await _judged(claims, evidence_set, ask)
        figures.calibrations.append(calibration)
        for claim, label in zip(checked, labelled, strict=True):
            figures.by_kind[label["kind"]][claim.verdict.value] += 1
        await _reports(evidence_set, ask, figures)
    return figures


async def _reports(evidence_set: dict[str, Any], ask: judging.JudgeCall | None, f: Figures) -> None:
    faithful = _claims(evidence_set["faithful_report"])
    checked, _ = await _judged(faithful, evidence_set, ask)
    await _alce(faithful, checked, evidence_set, ask, f)
    f.reports += 1
    f.faithful_kept += all(c.verdict.value != "unsupported" for c in checked)
    f.faithful_sentences.update(c.verdict.value for c in checked)
    flawed = {_plain(s) for s in evidence_set["flawed_sentences"]}
    checked, _ = await _judged(_claims(evidence_set["flawed_report"]), evidence_set, ask)
    for claim in checked:
        if _plain(claim.text) in flawed:
            f.flawed_total += 1
            f.flawed_caught += claim.verdict.value != "supported"


async def _alce(
    claims: list[Claim],
    checked: list[Claim],
    evidence_set: dict[str, Any],
    ask: judging.JudgeCall | None,
    f: Figures,
) -> None:
    """ALCE's citation metrics (Gao et al., 2023), the verifier (this column's way of judging)
    standing in for ALCE's NLI model. Recall: a statement counts when its citations together
    support it. Precision: a citation counts when the whole set supports the statement and the
    citation either supports it alone or the others no longer do without it."""
    singles: list[Claim] = []
    rests: list[Claim] = []
    for claim in claims:
        for n in claim.source_ids:
            singles.append(Claim(text=claim.text, source_ids=[n]))
            rest = [m for m in claim.source_ids if m != n]
            if rest:
                rests.append(Claim(text=claim.text, source_ids=rest))
    alone, _ = await _judged(singles, evidence_set, ask) if singles else ([], None)
    without, _ = await _judged(rests, evidence_set, ask) if rests else ([], None)
    supports = {
        (c.text, tuple(c.source_ids)) for c in [*alone, *without] if c.verdict.value == "supported"
    }
    for claim, verdict in zip(claims, checked, strict=True):
        whole = verdict.verdict.value == "supported"
        f.recall[str(whole)] += 1
        for n in claim.source_ids:
            others = tuple(m for m in claim.source_ids if m != n)
            needed = bool(others) and (claim.text, others) not in supports
            good = whole and ((claim.text, (n,)) in supports or needed or not others)
            f.precision[str(good)] += 1


def _claims(markdown: str) -> list[Claim]:
    return [Claim(text=s.claim, source_ids=list(s.source_ids)) for s in cited_sentences(markdown)]


def _plain(text: str) -> str:
    """A report's sentence as compared, its citations dropped."""
    return plain(CITATION.sub("", text))


def known_verdicts(sets: list[dict[str, Any]]) -> dict[str, str]:
    """What a careful judge knows, by claim and what it cites: every labelled claim's label,
    every faithful report sentence supported, every flawed sentence unsupported."""
    from tests.support.judges import key

    known: dict[str, str] = {}
    for evidence_set in sets:
        known.update({key(c["text"], c["cites"]): c["label"] for c in evidence_set["claims"]})
        for report, verdict in (("faithful_report", "supported"), ("flawed_report", "")):
            flawed = {_plain(s) for s in evidence_set["flawed_sentences"]}
            for c in _claims(evidence_set[report]):
                if verdict or _plain(c.text) in flawed:
                    known[key(c.text, c.source_ids)] = verdict or "unsupported"
    return known


def judge_at(base_url: str, model: str = "test-model") -> judging.JudgeCall:
    """A model's judge at an OpenAI-compatible endpoint, as `check` asks it (an error: no answer)."""
    from activities.openai_engine.engine import OpenAIEngine
    from settings import Settings

    engine = OpenAIEngine(Settings(_env_file=None, openai_base_url=base_url, llm_model=model))

    async def ask(inp: VerifyClaimsInput) -> VerifyClaimsOutput | None:
        try:
            return await engine.verify_claims(inp)
        except Exception:  # noqa: BLE001: a judge that fails to answer is no judge
            return None

    return ask


def table(columns: dict[str, Figures]) -> str:
    """The README's table: per kind, supported / partial / unsupported for each way of judging."""
    names = list(columns)
    lines = [
        "| kind (label) | claims | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for kind, label in KINDS:
        counts = [columns[n].by_kind[kind] for n in names]
        total = sum(counts[0].values())
        cells = [f"{c['supported']} / {c['partial']} / {c['unsupported']}" for c in counts]
        lines.append(f"| {kind} ({label}) | {total} | " + " | ".join(cells) + " |")
    for name, row in (
        ("unfaithful called supported", _unfaithful_supported),
        ("faithful reports standing as written", _kept),
        ("flawed report sentences caught", _caught),
        ("judge trusted (canaries passed)", _trusted),
        ("citation recall, ALCE (faithful reports)", _recall),
        ("citation precision, ALCE (faithful reports)", _precision),
    ):
        lines.append(f"| {name} | | " + " | ".join(row(columns[n]) for n in names) + " |")
    return "\n".join(lines)


def _unfaithful_supported(f: Figures) -> str:
    bad = sum(f.by_kind[k]["supported"] for k, label in KINDS if label == "unsupported")
    total = sum(sum(f.by_kind[k].values()) for k, label in KINDS if label == "unsupported")
    return f"{bad} of {total}"


def _kept(f: Figures) -> str:
    return f"{f.faithful_kept} of {f.reports}"


def _caught(f: Figures) -> str:
    return f"{f.flawed_caught} of {f.flawed_total}"


def _share(counts: Counter[str]) -> str:
    total = counts["True"] + counts["False"]
    return f"{counts['True'] / total:.0%} ({counts['True']} of {total})" if total else "-"


def _recall(f: Figures) -> str:
    return _share(f.recall)


def _precision(f: Figures) -> str:
    return _share(f.precision)


def _trusted(f: Figures) -> str:
    asked = [c for c in f.calibrations if c is not None]
    if not asked:
        return "no judge"
    return f"{sum(c.trusted for c in asked)} of {len(asked)} sets"


async def run_all(sets: list[dict[str, Any]]) -> dict[str, Figures]:
    from tests.support import judges
    from tests.support.llm_server import running_llm

    columns = {"no model": await measure(sets, None)}
    with ExitStack() as stack:
        careful = stack.enter_context(running_llm())
        careful.answers["verify_claims"] = judges.careful(known_verdicts(sets))
        columns["careful judge"] = await measure(sets, judge_at(careful.base_url))
        uncritical = stack.enter_context(running_llm())
        uncritical.answers["verify_claims"] = judges.uncritical
        columns["uncritical judge"] = await measure(sets, judge_at(uncritical.base_url))
    if os.environ.get("FAITHFULNESS_LLM_URL"):
        url, model = os.environ["FAITHFULNESS_LLM_URL"], os.environ.get("LLM_MODEL", "local")
        columns[f"model {model}"] = await measure(sets, judge_at(url, model))
    return columns


def main() -> int:
    if not ATTRIBUTION.exists():
        print(f"bench-faithfulness: needs {ATTRIBUTION} (not in this clone); nothing measured")
        return 0
    sets = load()
    columns = asyncio.run(run_all(sets))
    print(
        f"Citations checked on {ATTRIBUTION.name}: {len(sets)} evidence sets, "
        f"{sum(len(s['claims']) for s in sets)} labelled claims"
    )
    print("(each cell: supported / partial / unsupported)\n")
    print(table(columns))
    if "--write" in sys.argv:
        written = write_docs(table(columns))
        print(f"\nwritten to {written}")
    return 0


#: The page whose table is this bench's output, between its marker line and the table's end.
DOCS = REPO / "docs" / "citations.md"
MARKER = "<!-- faithfulness-table:"


def write_docs(new_table: str, page: Path = DOCS) -> Path:
    """Replace the table under the page's marker line with NEW_TABLE (`make bench-faithfulness`
    does it: the docs and the bench agree by construction)."""
    lines = page.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(MARKER)) + 1
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    lines[start:end] = new_table.splitlines()
    page.write_text("\n".join(lines) + "\n")
    return page


if __name__ == "__main__":
    sys.exit(main())
