"""A section is about what it asks: the deterministic check the workflow counts a
report's sections with, the verification note, and the critic that refuses such a report."""

from __future__ import annotations

from temporalio.testing import WorkflowEnvironment

from activities.offline_engine.checks import critique
from tests.support.doubles import Script
from tests.workflow.test_workflow import run_research
from workflows import activity_models as m
from workflows.activity_models import CritiqueInput
from workflows.checks import off_subject
from workflows.kit.verification import verification_note
from workflows.models import Depth, ResearchRequest, VerificationSummary
from workflows.text import subjects

QUESTION = "How tall is Olympus Mons on Mars and how long is a Martian year?"
TITLES = {1: "Mars", 2: "Venus", 3: "Mercury"}
READ = {
    1: "Olympus Mons on Mars is the tallest volcano. A Martian year lasts 687 Earth days.",
    2: "Venus rotates very slowly: one rotation takes 243 Earth days. The air of Venus is thick.",
    3: "The surface temperature of Mercury ranges from about −173 °C to 427 °C.",
}
REPORT = """# Mars

## Summary

Olympus Mons rises about 22 kilometres [1].

## How tall is Olympus Mons on Mars

- Olympus Mons on Mars is the tallest volcano [1].

## How long is a Martian year

- A Martian year lasts 687 Earth days [1].
- Venus rotates very slowly: one rotation takes 243 Earth days [2].
- One rotation takes 243 Earth days [2].

## Sources

- [1] Mars — mars.md (local)
- [2] Venus — venus.md (local)
"""


def test_a_sentence_about_another_planet_under_a_martian_section_is_off_its_subject() -> None:
    off = off_subject.sections_off_subject(REPORT, QUESTION, TITLES, READ)
    assert [(o.section, o.other) for o in off] == [
        ("How long is a Martian year", "Venus"),
        ("How long is a Martian year", "Venus"),
    ]
    assert {o.sentence for o in off} == {
        "Venus rotates very slowly: one rotation takes 243 Earth days.",
        "One rotation takes 243 Earth days.",  # names nothing: its source is about Venus
    }


def test_names_that_no_source_is_about_are_not_judged() -> None:
    """Notes titled by topic, not by a name: "Rust's rules" under "How do Arc and Mutex share
    state" is not told apart by names, and nothing is called off its subject."""
    report = (
        "# Rust\n\n## How do Arc and Mutex share state\n\n"
        "- Rust's ownership rules make sharing across threads safe [1].\n"
        "- Smart pointers own the data they point to [2].\n"
    )
    titles = {1: "Shared-State Concurrency", 2: "Smart Pointers"}
    read = {1: "Rust's ownership rules help. Use Arc with Mutex.", 2: "Smart pointers own data."}
    assert (
        off_subject.sections_off_subject(report, "How do Arc and Mutex share state?", titles, read)
        == []
    )


def test_one_name_in_two_spellings() -> None:
    assert subjects.same_name("Mars", "Martian") and subjects.same_name("Venus", "Venusian")
    assert not subjects.same_name("Mars", "Mons") and not subjects.same_name("Venus", "Mercury")


def test_the_note_counts_them_apart_and_the_critic_refuses_the_report() -> None:
    summary = VerificationSummary(
        method="lexical",
        claims=4,
        supported=2,
        off_subject=2,
        off_subject_sections=["How long is a Martian year: Venus"],
    )
    note = verification_note(summary)
    assert note.startswith("*Verification: 2 of 4 claims are supported")
    assert (
        "2 about another subject than their sections ask (Venus under “How long is a Martian year”)"
        in note
    )
    judged = critique(
        CritiqueInput(
            query=QUESTION,
            report_markdown=REPORT,
            verification=summary,
            sources_count=2,
            steps_completed=2,
            steps_planned=2,
        )
    )
    assert not judged.is_acceptable
    assert any(
        i.text.startswith("off its subject") and "Venus" in i.text and i.severity == "high"
        for i in judged.issues
    )


async def test_a_models_report_with_venus_under_the_martian_year_is_not_accepted(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """A model's critic accepted it; the workflow counts the Venus sentence apart from the
    supported ones and does not accept the report."""
    pages = {"mars": READ[1], "venus": READ[2]}

    def search(req: m.SearchInput) -> m.SearchOutput:
        return m.SearchOutput(
            hits=[
                m.SearchHit(url=f"{n}.md", title=n.capitalize(), snippet="", provider="local")
                for n in pages
            ]
        )

    def read_page(req: m.ReadPageInput) -> m.ReadPageOutput:
        name = req.url.removesuffix(".md")
        return m.ReadPageOutput(url=req.url, title=name.capitalize(), text=pages[name])

    def synthesize(inp: m.SynthesizeInput) -> m.SynthesizeOutput:
        ids = {s.title: s.id for s in inp.sources}
        return m.SynthesizeOutput(
            markdown=(
                f"# {QUESTION}\n\n## How long is a Martian year\n\n"
                f"- A Martian year lasts 687 Earth days [{ids['Mars']}].\n"
                f"- Venus rotates very slowly: one rotation takes 243 Earth days [{ids['Venus']}].\n"
            ),
            engine="double",
        )

    script = Script(search=search, read_page=read_page, synthesize=synthesize)
    result, _ = await run_research(
        time_skipping_env.client, script, ResearchRequest(query=QUESTION, depth=Depth.LIGHT)
    )
    assert result.verification is not None and result.verification.off_subject == 1
    assert result.verification.supported <= result.verification.claims - 1
    assert "about another subject than its section asks (Venus under" in result.report_markdown
    assert result.critique is not None and not result.critique.is_acceptable
    assert any(i.text.startswith("off its subject") for i in result.critique.issues)
    assert len(script.calls["critique"]) > 1  # refused, so the refining loop tried again
