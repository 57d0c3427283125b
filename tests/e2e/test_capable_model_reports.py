"""A capable model's reports through whole researches: the real worker and `openai`
engine against the scripted OpenAI-protocol server, over a documents folder holding one labelled
evidence set of ../shared/attribution/dev.jsonl. The model writes the set's faithful report in its
own words (its citations renumbered to the research's sources) and judges carefully: the report
reaches the reader as the model wrote it, checked by the model's judge after its canaries. Written
with two sentences made unfaithful, those two leave the report and the rest stays.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from bench import faithfulness
from tests.e2e.test_llm_research import start_worker, worker_env
from tests.support import judges
from tests.support.llm_server import running_llm
from workflows.kit.citations import sub_citations
from workflows.models import Depth, ResearchRequest, ResearchResult, Stage, Verdict
from workflows.research import DeepResearchWorkflow

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not faithfulness.ATTRIBUTION.exists(),
        reason=f"needs {faithfulness.ATTRIBUTION} (../shared/attribution, not in this clone)",
    ),
]


def _folder(evidence_set: dict[str, Any], root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for source in evidence_set["sources"]:
        name = re.sub(r"[^\w.-]+", "-", source["title"]).strip("-")
        (docs / f"{name}.md").write_text(f"# {source['title']}\n\n{source['text']}\n")
    return docs


class Model:
    """The scripted model's writer and judge for one evidence set and one report."""

    def __init__(self, evidence_set: dict[str, Any], report: str) -> None:
        self.set, self.report = evidence_set, report
        self.ids: dict[int, int] = {}  # the set's source id -> the research's

    def plan(self, prompt: str) -> dict[str, Any]:
        titles = " ".join(s["title"] for s in self.set["sources"])
        return {
            "title": self.set["question"],
            "thought": "One look at the documents.",
            "steps": [
                {
                    "title": self.set["question"],
                    "description": "What the documentation says.",
                    "queries": [titles],
                    "independent": True,
                }
            ],
        }

    def synthesize(self, prompt: str) -> dict[str, Any]:
        listed = dict(re.findall(r"^\[(\d+)\] (.+?) - ", prompt, re.M))
        for source in self.set["sources"]:
            for n, title in listed.items():
                if title.strip() == source["title"]:
                    self.ids[source["id"]] = int(n)
        markdown = sub_citations(self.report, lambda m: f"[{self.ids.get(int(m.group(1)), 99)}]")
        claims = faithfulness._claims(markdown)
        return {
            "markdown": f"# {self.set['question']}\n\n{markdown}",
            "claims": [{"text": c.text, "source_ids": c.source_ids} for c in claims],
        }

    def judge(self, prompt: str) -> dict[str, Any]:
        known = {}
        for key, verdict in faithfulness.known_verdicts([self.set]).items():
            text, cites = key.rsplit(" [", 1)
            mine = sorted(self.ids.get(int(n), -1) for n in re.findall(r"\d+", cites))
            known[f"{text} {mine}"] = verdict
        return judges.careful(known)(prompt)


async def _research(
    dev_env: WorkflowEnvironment, client: Client, tmp_path: Path, report: str
) -> ResearchResult:
    evidence_set = faithfulness.load()[0]
    model = Model(evidence_set, report)
    with running_llm() as llm:
        llm.answers["plan"] = model.plan
        llm.answers["synthesize"] = model.synthesize
        llm.answers["verify_claims"] = model.judge
        env = worker_env(
            dev_env,
            tmp_path,
            llm,
            RESEARCH_CORPUS_DIR=str(_folder(evidence_set, tmp_path)),
            LLM_REQUEST_TIMEOUT_S="10",
        )
        worker = start_worker(env, tmp_path)
        try:
            return await client.execute_workflow(
                DeepResearchWorkflow.run,
                ResearchRequest(query=evidence_set["question"], depth=Depth.LIGHT),
                id=f"capable-{uuid.uuid4().hex[:8]}",
                task_queue=env["TEMPORAL_TASK_QUEUE"],
            )
        finally:
            worker.stop()


async def test_a_faithful_report_in_the_models_own_words_reaches_the_reader_as_written(
    dev_env: WorkflowEnvironment, dev_client: Client, tmp_path: Path
) -> None:
    evidence_set = faithfulness.load()[0]
    result = await _research(dev_env, dev_client, tmp_path, evidence_set["faithful_report"])

    assert result.outcome is Stage.COMPLETED
    assert "quoted from those sources" not in result.report_markdown  # the model's own words
    summary = result.verification
    assert summary is not None and summary.checked_by == "judge"
    assert summary.calibration is not None and summary.calibration.trusted
    assert summary.removed == 0 and summary.unsupported == 0, [
        (c.text, c.source_ids, c.verdict.value, c.checked_by.value, c.reason)
        for c in result.claims
        if c.verdict is not Verdict.SUPPORTED
    ] + [s.title for s in result.sources]
    assert summary.supported >= 0.8 * summary.claims
    assert "Two helpers combine a push and a pop" in result.report_markdown


async def test_a_flawed_reports_two_unfaithful_sentences_leave_it_and_the_rest_stays(
    dev_env: WorkflowEnvironment, dev_client: Client, tmp_path: Path
) -> None:
    evidence_set = faithfulness.load()[0]
    result = await _research(dev_env, dev_client, tmp_path, evidence_set["flawed_report"])

    report = result.report_markdown
    for flawed in evidence_set["flawed_sentences"]:
        claim = faithfulness._plain(flawed)
        [made] = [c for c in result.claims if faithfulness._plain(c.original or c.text) == claim]
        assert made.verdict is not Verdict.SUPPORTED and made.removed
        assert faithfulness._plain(flawed)[:60] not in faithfulness._plain(report)
    assert "Two helpers combine a push and a pop" in report
    summary = result.verification
    assert summary is not None and summary.checked_by == "judge" and summary.removed == 2
