"""Finished research written straight into the library, for the pages to show: a hostile one whose
every field carries markup, script and remote addresses (the report quotes tests/support/
hostile_web.py's article, script and all), and a showcase one that reads like a real report
(mixed local and web sources, evidence, verdicts), for the accessibility scan and the README's
screenshots.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from storage import store
from tests.support.hostile_web import ARTICLE_PARAGRAPHS, article_html
from workflows.activity_models import SaveResearchInput
from workflows.models import (
    Claim,
    Depth,
    Evidence,
    Plan,
    PlanStep,
    QueryMode,
    ResearchResult,
    Source,
    Stage,
    Stats,
    StepStatus,
    Verdict,
    VerificationSummary,
)

#: What hostile text tries to set or say when it runs: the tests look for it in the browser.
PWNED = "pwned"


def store_research(db_url: str, result: ResearchResult, prefix: str = "stored") -> str:
    """RESULT written to the library as a research started and finished just now (so it heads the
    lists, however many researches the tests before started in the last minutes); its id."""
    research_id = f"{prefix}-{uuid.uuid4().hex[:8]}"
    finished = datetime.now(UTC)
    store.write(
        SaveResearchInput(
            workflow_id=research_id,
            run_id=uuid.uuid4().hex,
            result=result,
            started_at=finished,
            finished_at=finished,
        ),
        db_url,
    )
    return research_id


def _result(
    query: str,
    report: str,
    sources: list[Source],
    evidence: list[Evidence],
    claims: list[Claim],
    **extra: object,
) -> ResearchResult:
    steps = [
        PlanStep(
            title="Find what the sources say",
            status=StepStatus.COMPLETED,
            source_ids=[s.id for s in sources],
        )
    ]
    return ResearchResult(
        query=query,
        outcome=Stage.COMPLETED,
        report_markdown=report,
        sources=sources,
        claims=claims,
        clarifications=[],
        plan=Plan(title="Plan", steps=steps),
        plan_iterations=1,
        reflections=[],
        stage_history=[Stage.ROUTING, Stage.PLANNING, Stage.RESEARCHING, Stage.COMPLETED],
        stats=Stats(),
        depth=Depth.LIGHT,
        mode=QueryMode.DEEP,
        engine="test",
        evidence=evidence,
        verification=VerificationSummary(
            method="lexical",
            claims=len(claims),
            supported=sum(c.verdict is Verdict.SUPPORTED for c in claims),
            share_supported=1.0 if claims else 0.0,
        ),
        **extra,
    )


def hostile_result(origin: str) -> ResearchResult:
    """Every field a page shows, carrying markup that would run script or load ORIGIN if rendered."""
    pixel, page = f"{origin}/pixel.png", f"{origin}/article"
    script = f"<script>window.{PWNED} = 1; alert('script')</script>"
    report = "\n\n".join(
        [
            f"# Aqueducts {script}",
            f'The first aqueduct ran underground [1]. <img src="{pixel}" onerror="alert(\'img\')">',
            f"![tracking pixel]({pixel}) [click](javascript:alert('link')) [data](data:text/html,{script}) "
            f"[vb](vbscript:msgbox) [rel](//{origin.split('//')[1]}/x) [the article]({page}) [2] [3]",
            f'<iframe src="{page}"></iframe><link rel="stylesheet" href="{origin}/x.css">'
            f"<style>@import url({origin}/style.css);</style><svg onload=\"alert('svg')\"></svg>",
            f'<meta http-equiv="refresh" content="0;url={page}"><object data="{origin}/x.swf"></object>',
            "| a | b |\n|:-:|--:|\n| <script>alert(1)</script> | [1] |",
            "Quoted as it was served:\n\n" + article_html(),
            f"## Sources\n\n- [1] <img src={pixel}> — {page}",
        ]
    )
    sources = [
        Source(
            id=1,
            url=page,
            title=f'<img src="{pixel}" onerror="alert(\'title\')"> Roman aqueducts',
            provider="searxng",
        ),
        Source(id=2, url="javascript:alert('source')", title=script, provider="searxng"),
        Source(
            id=3,
            url="file:///corpus/aqueducts.md",
            title="Aqueducts <b onmouseover=alert(3)>notes</b>",
            provider="local",
        ),
    ]
    evidence = [
        Evidence(
            source_id=1,
            position=0,
            text=f'<img src="{pixel}" onerror="alert(\'evidence\')"> ' + ARTICLE_PARAGRAPHS[0],
        ),
        Evidence(source_id=3, position=1, text=script + " Gravity did all the work."),
    ]
    claims = [
        Claim(
            text=f"The first aqueduct ran underground. {script}",
            source_ids=[1],
            verdict=Verdict.SUPPORTED,
        ),
        Claim(
            text="<a href=\"javascript:alert('claim')\">Gravity</a> did the work.",
            source_ids=[3],
            verdict=Verdict.PARTIAL,
        ),
    ]
    return _result(
        f"Aqueducts {script}",
        report,
        sources,
        evidence,
        claims,
        notes=[f"<b onmouseover=\"alert('note')\">a note</b> {script}"],
    )


SHOWCASE_QUESTION = "How did Roman aqueducts keep the water clean?"


def showcase_result() -> ResearchResult:
    """A report as a real research writes one: sections, a list, citations to web and local sources."""
    report = "\n\n".join(
        [
            f"# {SHOWCASE_QUESTION}",
            "## Settling and inspection",
            "Roman engineers let the water slow down in settling tanks, where sand and grit fell out of the "
            "flow before it reached the city [1]. Inspection shafts every few dozen metres let workers climb "
            "down and clear deposits [1, 2].",
            "## Distribution",
            "- Distribution tanks at the city edge split the supply between fountains, baths and houses [1].\n"
            "- Lead pipes carried it the last stretch; the hard water soon lined them with scale [3].",
            "## What the records say",
            "Frontinus, water commissioner from AD 97, found illegal connections and inflated records; his "
            "report reads at times like a modern audit [2].",
        ]
    )
    sources = [
        Source(
            id=1,
            url="https://example.org/roman-aqueducts",
            title="The quiet engineering of Roman aqueducts",
            provider="searxng",
        ),
        Source(
            id=2,
            url="https://example.org/frontinus",
            title="Frontinus, De aquaeductu",
            provider="searxng",
        ),
        Source(
            id=3,
            url="file:///corpus/water/lead-pipes.md",
            title="Lead pipes and hard water (field notes)",
            provider="local",
        ),
    ]
    evidence = [
        Evidence(source_id=1, position=2, text=ARTICLE_PARAGRAPHS[2]),
        Evidence(source_id=2, position=3, text=ARTICLE_PARAGRAPHS[3]),
        Evidence(
            source_id=3,
            position=0,
            text="Calcium carbonate from hard water coated the inside "
            "of the pipes within a few years.",
        ),
    ]
    claims = [
        Claim(
            text="Sand and grit fell out of the flow in settling tanks.",
            source_ids=[1],
            verdict=Verdict.SUPPORTED,
        ),
        Claim(
            text="Inspection shafts let workers clear deposits.",
            source_ids=[1, 2],
            verdict=Verdict.SUPPORTED,
        ),
        Claim(
            text="Frontinus found illegal connections.", source_ids=[2], verdict=Verdict.SUPPORTED
        ),
        Claim(
            text="Hard water lined the pipes with scale.", source_ids=[3], verdict=Verdict.SUPPORTED
        ),
    ]
    return _result(SHOWCASE_QUESTION, report, sources, evidence, claims)
