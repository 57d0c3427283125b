"""Every section about what it asks, end to end: the real worker, the offline
engine and the local search over a person's own notes on three planets.

"How tall is Olympus Mons on Mars and how long is a Martian year?" once quoted Venus's rotation
("243 Earth days") under "How long is a Martian year", though the notes on Mars say 687 Earth
days, and called it verified; "How hot is the surface of Mercury?" opened with "The sources read
do not answer this question" above its own finding of −173 °C to 427 °C.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from tests.conftest import REPO
from workflows.models import Depth, ResearchRequest
from workflows.research import DeepResearchWorkflow

pytestmark = pytest.mark.e2e

NOTES = {
    "mars.md": """# Mars

Mars is the fourth planet from the Sun and the second smallest planet in the Solar System.

Olympus Mons on Mars is the tallest volcano in the Solar System, rising about 22 kilometres
above the surrounding plains.

A Martian year lasts 687 Earth days, nearly twice as long as a year on Earth.
""",
    "venus.md": """# Venus

Venus is the second planet from the Sun and the hottest planet in the Solar System.

Venus rotates very slowly: one rotation takes 243 Earth days, longer than its year of 225
Earth days.

The atmosphere of Venus is about 96 percent carbon dioxide.
""",
    "mercury.md": """# Mercury

Mercury is the smallest planet in the Solar System and the closest planet to the Sun.

The surface temperature of Mercury ranges from about −173 °C at night to 427 °C during the day.

A year on Mercury lasts 88 Earth days, the shortest year of any planet.
""",
}


@pytest.fixture
def planets_worker(subprocess_env: dict[str, str], tmp_path: Path) -> Iterator[dict[str, str]]:
    folder = tmp_path / "planets"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text)
    env = {**subprocess_env, "RESEARCH_CORPUS_DIR": str(folder)}
    process = subprocess.Popen([sys.executable, "worker.py"], cwd=REPO, env=env)
    try:
        yield env
    finally:
        process.terminate()
        process.wait(timeout=30)


def sections(report: str) -> dict[str, str]:
    parts = report.split("\n## ")
    return {p.split("\n", 1)[0].strip(): p.split("\n", 1)[1] for p in parts[1:] if "\n" in p}


async def test_each_section_keeps_to_its_subject_and_the_summary_agrees_with_its_findings(
    dev_client: Client, planets_worker: dict[str, str]
) -> None:
    questions = [
        "How tall is Olympus Mons on Mars and how long is a Martian year?",
        "How hot is the surface of Mercury?",
    ]
    handles = [
        await dev_client.start_workflow(
            DeepResearchWorkflow.run,
            ResearchRequest(query=q, depth=Depth.AUTO),
            id=f"planets-{uuid.uuid4().hex[:8]}",
            task_queue=planets_worker["TEMPORAL_TASK_QUEUE"],
        )
        for q in questions
    ]
    mars, mercury = await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), 240)

    year = next(body for title, body in sections(mars.report_markdown).items() if "year" in title)
    assert "687 Earth days" in year
    assert "243" not in year and "Venus" not in year and "Mercury" not in year
    cited = [line for line in mars.report_markdown.splitlines() if "[" in line and "—" not in line]
    assert not [line for line in cited if "Venus" in line or "Mercury" in line]
    assert "1 about another subject" not in mars.report_markdown  # nothing off subject was cited

    summary = sections(mercury.report_markdown)["Summary"]
    assert "do not answer" not in summary
    assert "427 °C" in summary
