"""Offline reports a reader finds worth reading: what a newcomer saw go wrong.

- no heading stands over nothing: a step whose findings repeat an earlier one joins its section,
  and steps that found nothing share one closing section that says why;
- plan steps are named after the thing the question asks about, never after a verb or a measure
  word it happens to start with ("Definition and purpose of feed", "Usage and examples of long");
- the summary answers the question, from the step that asked it, not from a page that merely
  shares its words; when no finding says what was asked, the report and the critic say plainly
  that the sources do not answer it ("supported" is not "answered");
- a PDF's title line is not glued to its first sentence.

The questions and the corpus (tests/support/kitchen_corpus.py) are this project's own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from activities.corpus.binary import pdf_documents
from activities.offline_engine import OfflineEngine
from tests.support.documents import make_pdf
from tests.support.kitchen_corpus import HANDOUT
from workflows.activity_models import (
    CritiqueInput,
    PlanInput,
    SynthesizeInput,
)
from workflows.models import Plan, PlanStep, Source, StepStatus, VerificationSummary
from workflows.report_models import OutlineInput, SectionInput

engine = OfflineEngine()
DONE = StepStatus.COMPLETED
OVEN, STARTER, SHAPING = (
    Source(id=1, url="file:///kitchen/oven.md", title="Oven temperatures for bread"),
    Source(id=2, url="file:///kitchen/starter.md", title="Feeding a sourdough starter"),
    Source(id=3, url="file:///kitchen/shaping.md", title="Shaping and proofing dough"),
)
SOURCES = [OVEN, STARTER, SHAPING]
HOT = "A sourdough loaf bakes best in an oven preheated to 250 degrees Celsius for at least forty minutes [1]."
LID = "Baking the loaf in a covered cast iron pot for the first twenty minutes traps steam around the dough [1]."
FEED = "Feed the starter once a day with equal weights of flour and water when it lives on the kitchen counter [2]."
COLD = "A starter kept in the refrigerator needs feeding only once a week, because the cold slows the yeast down [2]."
CULTURE = "A sourdough starter is a culture of wild yeast and lactic acid bacteria kept in flour and water [2]."
SEE = "For more information on sourdough starters, see the chapter on feeding schedules [2]."
NOTHING = 'The 3 source(s) read for this step ("Growing tomatoes") have no sentence with two of its terms ("starter").'


def plan(*steps: tuple[str, str]) -> Plan:
    return Plan(
        title="p",
        steps=[PlanStep(title=t, observation=o, status=DONE, source_ids=[]) for t, o in steps],
    )


def sections_of(markdown: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", markdown, flags=re.M)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


FEEDING = "How often should I feed a sourdough starter?"
FEEDING_PLAN = plan(
    ("How often should I feed a sourdough starter", f"{FEED} {COLD}"),
    ("Definition and purpose of sourdough starter", f"{CULTURE} {FEED}"),
    ("Usage and examples of sourdough starter", f"{COLD} {FEED}"),  # repeats only
    ("Limitations and pitfalls of sourdough starter", NOTHING),
)


async def test_a_one_call_report_has_no_heading_over_repeated_or_missing_findings() -> None:
    report = await engine.synthesize(
        SynthesizeInput(query=FEEDING, plan=FEEDING_PLAN, sources=SOURCES)
    )
    sections = sections_of(report.markdown)
    assert list(sections) == [
        "Summary",
        "How often should I feed a sourdough starter",
        "Definition and purpose of sourdough starter",
        "Not found in the sources",
        "Sources",
    ]
    assert "repeat findings" not in report.markdown
    assert (
        sections["Not found in the sources"]
        == f"- Limitations and pitfalls of sourdough starter: {NOTHING}"
    )
    assert (
        report.markdown.count("Feed the starter once a day") == 2
    )  # in the summary and in one section
    assert "Usage and examples" not in report.markdown


async def test_a_report_in_sections_merges_a_step_that_only_repeats_into_the_one_it_repeats() -> (
    None
):
    outline = await engine.outline_report(
        OutlineInput(query=FEEDING, plan=FEEDING_PLAN, sources=SOURCES)
    )
    assert [(s.heading, s.step_indexes) for s in outline.sections] == [
        ("How often should I feed a sourdough starter", [0, 2]),
        ("Definition and purpose of sourdough starter", [1]),
        ("Not found in the sources", [3]),
    ]
    steps = FEEDING_PLAN.steps
    bodies = [
        (
            await engine.write_section(
                SectionInput(
                    query=FEEDING,
                    title=outline.title,
                    section=section,
                    steps=[steps[i] for i in section.step_indexes],
                    sources=SOURCES,
                    told_before=[
                        steps[i].observation or ""
                        for e in outline.sections[:k]
                        for i in e.step_indexes
                    ],
                )
            )
        ).markdown
        for k, section in enumerate(outline.sections)
    ]
    assert bodies[1] == f"- {CULTURE}"
    assert bodies[2].startswith(
        "- Limitations and pitfalls of sourdough starter: The 3 source(s) read"
    )
    assert not any("repeat" in b for b in bodies)


async def test_a_step_that_repeats_two_sections_never_empties_the_later_one() -> None:
    """A step whose findings were told by two earlier steps, in different sections, joins the later
    one: joining the first would tell the later section's findings before it (seen in `make dev`:
    a heading over "_The findings of this section are listed above._")."""
    mixed = plan(
        ("How often should I feed a sourdough starter", f"{FEED} {COLD}"),
        ("Definition and purpose of sourdough starter", CULTURE),
        ("Usage and examples of sourdough starter", f"{FEED} {CULTURE}"),
    )  # repeats both
    outline = await engine.outline_report(OutlineInput(query=FEEDING, plan=mixed, sources=SOURCES))
    steps = mixed.steps
    bodies = [
        (
            await engine.write_section(
                SectionInput(
                    query=FEEDING,
                    title=outline.title,
                    section=section,
                    steps=[steps[i] for i in section.step_indexes],
                    sources=SOURCES,
                    told_before=[
                        steps[i].observation or ""
                        for e in outline.sections[:k]
                        for i in e.step_indexes
                    ],
                )
            )
        ).markdown
        for k, section in enumerate(outline.sections)
    ]
    assert [s.step_indexes for s in outline.sections] == [[0], [1, 2]]
    assert bodies == [f"- {FEED}\n- {COLD}", f"- {CULTURE}"]


@pytest.mark.parametrize(
    ("question", "subject", "not_a_subject"),
    [
        (FEEDING, "sourdough starter", "feed"),
        ("How often should I water a tomato plant?", "tomato plant", "water"),
        ("Where should I put my sourdough loaves after baking?", "sourdough loaves", "put"),
        ("How long should a rye dough proof?", "rye dough", "long"),
    ],
)
async def test_plan_steps_are_named_after_what_the_question_asks_about(
    question: str, subject: str, not_a_subject: str
) -> None:
    drafted = await engine.plan(
        PlanInput(
            query=question, background="", completed_steps=[], min_steps=3, max_steps=6, iteration=1
        )
    )
    titles = [s.title for s in drafted.steps]
    assert len(titles) >= 3
    for title in titles[1:]:
        assert subject in title, titles
        assert not re.search(rf"\b(?:of|to|on) {not_a_subject}\b", title), titles


async def test_a_question_that_names_no_thing_gets_no_template_steps() -> None:
    drafted = await engine.plan(
        PlanInput(
            query="How long?",
            background="",
            completed_steps=[],
            min_steps=3,
            max_steps=6,
            iteration=1,
        )
    )
    assert [s.title for s in drafted.steps] == ["How long"]
    again = await engine.plan(
        PlanInput(
            query="How long?",
            background="",
            min_steps=2,
            max_steps=5,
            iteration=2,
            completed_steps=[PlanStep(title="How long", status=DONE)],
            feedback=['Research "long" (no cited observation mentions it yet)'],
        )
    )
    assert not any("long" in s.title.lower().split()[-1:] for s in again.steps), [
        s.title for s in again.steps
    ]


async def test_the_summary_answers_from_the_step_that_asked_the_question_and_leads_with_no_pointer() -> (
    None
):
    steps = plan(
        ("How often should I feed a sourdough starter", f"{SEE} {FEED} {COLD}"),
        ("Definition and purpose of sourdough starter", CULTURE),
    )
    report = await engine.synthesize(SynthesizeInput(query=FEEDING, plan=steps, sources=SOURCES))
    summary = sections_of(report.markdown)["Summary"]
    assert summary.startswith(FEED)
    assert COLD in summary and CULTURE not in summary.split(SEE)[0]


WHERE = "Where should I put my sourdough loaves after baking?"
OVEN_PLAN = plan(("Where should I put my sourdough loaves after baking", f"{HOT} {LID}"))


async def test_sources_that_do_not_answer_the_question_are_said_not_to_answer_it() -> None:
    report = await engine.synthesize(SynthesizeInput(query=WHERE, plan=OVEN_PLAN, sources=SOURCES))
    summary = sections_of(report.markdown)["Summary"]
    assert summary.startswith("**The sources read do not answer this question.**")
    assert (
        '"put"' in summary and "[1]" not in summary
    )  # the oven sentences are listed, not offered as the answer
    verdict = await engine.critique(
        CritiqueInput(
            query=WHERE,
            report_markdown=report.markdown,
            sources_count=1,
            steps_completed=1,
            steps_planned=1,
            verification=VerificationSummary(enabled=True, claims=2, supported=2),
        )
    )
    assert not verdict.is_acceptable
    assert any(
        i.text.startswith("question not answered") and '"put"' in i.text for i in verdict.issues
    )


async def test_sources_that_answer_the_question_are_not_flagged() -> None:
    question = "How long should a sourdough loaf bake?"
    steps = plan(("How long should a sourdough loaf bake", f"{HOT} {LID}"))
    report = await engine.synthesize(SynthesizeInput(query=question, plan=steps, sources=SOURCES))
    assert sections_of(report.markdown)["Summary"].startswith(HOT)
    verdict = await engine.critique(
        CritiqueInput(
            query=question,
            report_markdown=report.markdown,
            sources_count=1,
            steps_completed=1,
            steps_planned=1,
            verification=VerificationSummary(enabled=True, claims=2, supported=2),
        )
    )
    assert verdict.is_acceptable, verdict.issues
    assert not any(
        i.text.startswith(("question not answered", "uncovered")) for i in verdict.issues
    )


async def test_the_critic_counts_only_what_the_report_quotes_not_its_title() -> None:
    """The title and headings repeat the question: they cover nothing."""
    report = f"# {WHERE}\n\n## {WHERE}\n\n- Tomato plants need at least six hours of direct sunlight every day [1].\n"
    verdict = await engine.critique(
        CritiqueInput(
            query=WHERE,
            report_markdown=report,
            sources_count=1,
            steps_completed=1,
            steps_planned=1,
            verification=VerificationSummary(enabled=True, claims=1, supported=1),
        )
    )
    assert any(i.text.startswith("uncovered question terms") for i in verdict.issues)


def test_a_pdf_title_line_is_not_glued_to_its_first_sentence() -> None:
    page = pdf_documents(Path("/kitchen/rye-handout.pdf"), make_pdf(HANDOUT))[0]
    assert page.title == "Rye Flour Handout"
    assert page.body.startswith("Rye Flour Handout\n\nRye flour holds more water than wheat flour")


TIMEOUT = "How does asyncio.timeout cancel a task?"
CANCELS = "When a timeout occurs, it cancels the task and raises TimeoutError [2]."
WAIT_FOR = "`async asyncio.tasks.wait_for(fut, timeout)` — Wait for the single Future or coroutine to complete, with timeout [2]."
CONTEXT = "`asyncio.timeouts.timeout(delay)` — Timeout async context manager [1]."


async def test_a_dotted_subject_is_named_by_its_last_part_and_the_fullest_answer_leads() -> None:
    """The documentation of `asyncio.timeout` says "a timeout", never the dotted name:
    the summary denied an answer the finding below it gave."""
    steps = plan((TIMEOUT, f"{CONTEXT} {WAIT_FOR} {CANCELS}"))
    report = await engine.synthesize(SynthesizeInput(query=TIMEOUT, plan=steps, sources=SOURCES))
    summary = sections_of(report.markdown)["Summary"]
    assert summary.startswith(CANCELS), summary


async def test_a_denial_says_what_is_true_of_every_finding_below_it() -> None:
    """A finding that says what was asked about something else: the line says no finding names
    the subject, not that the findings "about" it say nothing of what was asked."""
    about_feeding = "How often should I feed a sourdough starter?"
    steps = plan((about_feeding, "Feed the chickens once a day with grain and kitchen scraps [2]."))
    report = await engine.synthesize(
        SynthesizeInput(query=about_feeding, plan=steps, sources=SOURCES)
    )
    summary = sections_of(report.markdown)["Summary"]
    assert summary.startswith("**The sources read do not answer this question.**")
    assert "The one sentence found does not name sourdough starter" in summary, summary
