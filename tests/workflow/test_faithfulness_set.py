"""The figures docs/citations.md publishes about citations are the ones measured.

The labelled development set lives in ../shared/attribution (never copied here): without it the
tests that need it skip with one line. The last test needs nothing from outside.
"""

from __future__ import annotations

import re

import pytest
from temporalio.testing import WorkflowEnvironment

from bench import faithfulness
from tests.support.shared import REPO
from tests.workflow.test_verified_report import PAGE, QUESTION, aqueduct_script
from tests.workflow.test_workflow import run_research
from workflows.activity_models import SynthesizeOutput
from workflows.kit.citations import cited_ids

needs_set = pytest.mark.skipif(
    not faithfulness.ATTRIBUTION.exists(),
    reason=f"needs {faithfulness.ATTRIBUTION} (../shared/attribution, not in this clone)",
)


@needs_set
async def test_with_no_model_no_unfaithful_claim_is_called_supported() -> None:
    figures = await faithfulness.measure(faithfulness.load(), None)
    unfaithful = [k for k, label in faithfulness.KINDS if label == "unsupported"]
    assert sum(figures.by_kind[k]["supported"] for k in unfaithful) == 0
    verbatim = figures.by_kind["verbatim"]
    assert verbatim["supported"] >= 0.9 * sum(verbatim.values())
    # a faithful claim is rarely called unsupported: it is partial when words cannot tell
    faithful = [k for k, label in faithfulness.KINDS if label == "supported"]
    called_unsupported = sum(figures.by_kind[k]["unsupported"] for k in faithful)
    assert called_unsupported <= 0.1 * sum(sum(figures.by_kind[k].values()) for k in faithful)
    assert figures.flawed_caught == figures.flawed_total


@needs_set
async def test_the_published_table_is_what_the_benchmark_measures() -> None:
    page = (REPO / "docs" / "citations.md").read_text()
    published = re.search(
        r"<!-- faithfulness-table:[^>]*-->\n(.*?)\n<!-- /faithfulness-table -->", page, re.S
    )
    assert published is not None, "docs/citations.md lost its faithfulness table"
    measured = faithfulness.table(await faithfulness.run_all(faithfulness.load()))
    assert published.group(1).strip() == measured.strip()


async def test_a_report_cites_only_sources_the_research_read(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    """A writer that cites a source nobody read (here [7]) loses that citation before the report
    leaves the workflow, and says so: the rate of cited URLs never retrieved is 0 by construction."""
    report = (
        "# Aqueducts\n\nSettling tanks let sand fall out of the water before it reached the "
        "city [1]. Lead pipes poisoned half of Rome [7].\n"
    )
    script = aqueduct_script(
        synthesize=lambda inp: SynthesizeOutput(markdown=report, engine="double")
    )
    result, _ = await run_research(time_skipping_env.client, script, QUESTION)

    read = {call.url for call in script.calls["read_page"]}
    sources = {s.id: s.url for s in result.sources}
    cited = cited_ids(result.report_markdown.split("## Sources")[0])
    assert cited and all(n in sources and sources[n] in read for n in cited)
    assert 7 not in cited
    assert "Removed citations to unknown sources: [7]." in result.notes
    assert PAGE.split(".")[1].strip() in result.report_markdown  # the read claim stays
