"""Plain plans from the offline engine: step titles from the question's own
noun phrases, software templates only for questions about software.

Bad examples from a newcomer's notes on planets: "Definition and purpose of long", "How thick is
Venus hotter's atmosphere", "Overview of tall", and "typical code or usage examples" on a planet.
"""

from __future__ import annotations

import pytest

from activities.offline_engine.observing import _broader
from activities.offline_engine.planning import make_plan
from workflows.activity_models import AboutQuestion, PlanInput
from workflows.models import PlanStep

SOFTWARE = ("code", "documentation", "versions", "error conditions", "commands")


def plan(question: str) -> list[tuple[str, str]]:
    made = make_plan(
        PlanInput(
            query=question,
            background="",
            completed_steps=[],
            feedback=[],
            min_steps=5,
            max_steps=6,
            iteration=1,
        )
    )
    return [(s.title, s.description) for s in made.steps]


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("How tall is Olympus Mons on Mars and how long is a Martian year?", "Olympus Mons"),
        ("How hot is the surface of Mercury?", "the surface of Mercury"),
        ("Why is Venus hotter than Mercury?", "Venus"),
        ("How thick is the atmosphere of Venus?", "the atmosphere of Venus"),
        ("How long should a sourdough loaf bake?", "sourdough loaf"),
    ],
)
def test_a_question_about_anything_but_software_gets_plain_steps_about_its_own_thing(
    question: str, named: str
) -> None:
    steps = plan(question)
    assert len(steps) >= 3
    templates = steps[1:] if "and how" not in question else steps[2:]
    assert all(named.lower() in title.lower() for title, _ in templates), steps
    for title, description in steps:
        for measure in ("tall", "long", "hot", "thick", "hotter"):
            assert f"of {measure}" not in title and f"{measure}'s" not in title, title
            assert not title.endswith(f" {measure}"), title
        assert not any(word in description for word in SOFTWARE), (title, description)


def test_a_question_about_software_keeps_its_templates() -> None:
    steps = plan("How does asyncio.gather cancel tasks?")
    assert any("code" in d or "documentation" in d for _, d in steps)


def test_a_loop_back_asks_for_the_thing_not_the_measure() -> None:
    about = AboutQuestion(query="How tall is Olympus Mons on Mars and how long is a Martian year?")
    assert _broader(PlanStep(title="How tall is Olympus Mons on Mars"), about) == (
        "Overview of Olympus Mons"
    )
