"""The main journeys with a real model behind a real server (`make test-models`, not `make test`):
SmolLM2-135M-Instruct (all of them) or Qwen2.5-Coder-1.5B-Instruct (a light research; MODEL, see
tests/models/llama.py) behind llama.cpp's OpenAI-compatible server, with no setting but its URL
and model name, researching the project's own notes through the starter as a person would.

What a person must be able to count on even with a model this small: the research completes
using the model for nearly every call, the report cites only sources that were read and holds at
least three claims the verifier marks supported, and a model that answers nothing fails the
research in one line instead of passing for one that did.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_end_to_end import Workers
from tests.models.llama import MODEL, free_port
from tests.starter.cli.test_starter import starter
from tests.support.other_notes import LIGHTHOUSES, PLANETS, write_notes

pytestmark = [pytest.mark.models, pytest.mark.e2e]

QUESTION = "How does ownership work in Rust and what happens when a value is moved?"
#: A light research on 2 cores: about two minutes with the 135M model, twenty with the 1.5B one;
#: room for a loaded machine.
RESEARCH_TIMEOUT_S = MODEL.time_budget_s + 600
#: A light research as the journeys start it: no question back unless a test wants one, and time
#: enough for a CPU model on a shared machine (the default light budget is 5 minutes).
LIGHT = ("--depth", "light", "--time-budget", str(MODEL.time_budget_s))
PLAIN = (*LIGHT, "--max-clarifications", "0")
ENDED = {"completed", "failed", "cancelled"}
#: Where each research's JSON result is kept for a person to read (MODEL_ARTIFACTS), if set.
ARTIFACTS = Path(os.environ["MODEL_ARTIFACTS"]) if os.environ.get("MODEL_ARTIFACTS") else None


async def research(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    run = await starter("research", *args, "--json", env=env, timeout=RESEARCH_TIMEOUT_S)
    result = json.loads(run.out) if run.out.strip().startswith("{") else {}
    return run.code, kept(result, args[0]), run.err


def kept(result: dict[str, Any], name: str) -> dict[str, Any]:
    """The result, also written to MODEL_ARTIFACTS for a person to read."""
    if ARTIFACTS:
        slug = re.sub(r"\W+", "-", name)[:40]
        (ARTIFACTS / f"{slug}.json").write_text(json.dumps(result, indent=1))
    return result


def supported_cited(result: dict[str, Any]) -> list[dict[str, Any]]:
    read = {s["id"] for s in result["sources"]}
    return [
        c
        for c in result["claims"]
        if c.get("verdict") == "supported" and c["source_ids"] and set(c["source_ids"]) <= read
    ]


def assert_a_report_a_person_can_use(result: dict[str, Any]) -> None:
    assert result["outcome"] == "completed"
    report = result["report_markdown"]
    read = {s["id"] for s in result["sources"]}
    cited = {
        int(n) for group in re.findall(r"\[(\d+(?:,\s*\d+)*)\]", report) for n in group.split(",")
    }
    assert cited and cited <= read, (
        f"citations {sorted(cited)} beyond the sources read {sorted(read)}"
    )
    assert len(supported_cited(result)) >= 3, result["claims"]
    assert "<think" not in report and '{"' not in report  # no reasoning, no raw JSON
    fell_back = result["stats"]["llm_unanswered_by_role"]
    assert len(fell_back) <= 2, fell_back
    assert result["stats"]["llm_answered"] >= 5


async def test_a_light_research_with_a_small_model_writes_a_cited_verified_report(
    model_env: dict[str, str], model_workers: Workers
) -> None:
    model_workers.start()
    code, result, err = await research(model_env, QUESTION, *PLAIN)
    assert code == 0, err
    assert_a_report_a_person_can_use(result)
    assert result["engine"].startswith("openai:")


#: Questions of other kinds than the Rust notes, each over notes of its own
#: (tests/support/other_notes.py): what holds for code must hold for lenses and orbits.
OTHER_KINDS = {
    "lighthouses": ("How did the Fresnel lens change lighthouse range?", LIGHTHOUSES),
    "planets": ("How long is a year on Mars and how tall is Olympus Mons?", PLANETS),
}


@pytest.mark.parametrize("kind", list(OTHER_KINDS))
async def test_notes_of_another_kind_are_researched_by_the_model_itself(
    kind: str, model_env: dict[str, str], tmp_path: Path
) -> None:
    question, notes = OTHER_KINDS[kind]
    env = {**model_env, "RESEARCH_CORPUS_DIR": str(write_notes(tmp_path / kind, notes))}
    workers = Workers(env)
    workers.start()
    try:
        code, result, err = await research(env, question, *PLAIN)
    finally:
        workers.stop_all()
    assert code == 0, err
    assert_a_report_a_person_can_use(result)
    stats = result["stats"]
    unanswered = sum(stats["llm_unanswered_by_role"].values())
    assert stats["llm_answered"] > unanswered, stats  # the model, not the rules, did most calls


async def status_of(env: dict[str, str], research_id: str) -> dict[str, Any]:
    run = await starter("status", research_id, "--json", env=env)
    assert run.code == 0, run.err
    return json.loads(run.out)


async def waiting(env: dict[str, str], research_id: str, timeout_s: float = 600) -> dict[str, Any]:
    """The research's status once it waits for a person or has ended."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        status = await status_of(env, research_id)
        if status["pending_question"] or status.get("pending_review") or status["stage"] in ENDED:
            return status
        assert asyncio.get_running_loop().time() < deadline, status["stage"]
        await asyncio.sleep(2)


async def test_a_vague_question_is_asked_back_and_the_answer_steers_the_research(
    model_env: dict[str, str], model_workers: Workers
) -> None:
    model_workers.start()
    rid = f"clarify-{uuid.uuid4().hex[:6]}"
    run = await starter(
        "research", "Tell me more about it", *LIGHT, "--detach", "--id", rid, env=model_env
    )
    assert run.code == 0, run.err
    status = await waiting(model_env, rid)
    question = status["pending_question"]
    assert question and question.strip().endswith("?"), status
    assert "{" not in question and "<think" not in question
    answered = await starter("answer", rid, "Ownership and moves of values in Rust", env=model_env)
    assert answered.code == 0, answered.err
    done = await starter("result", rid, "--json", env=model_env, timeout=RESEARCH_TIMEOUT_S)
    result = kept(json.loads(done.out), rid)
    assert result["clarifications"][0]["answer"] == "Ownership and moves of values in Rust"
    assert_a_report_a_person_can_use(result)


async def test_a_plan_review_is_answered_and_the_approved_plan_is_researched(
    model_env: dict[str, str], model_workers: Workers
) -> None:
    model_workers.start()
    rid = f"review-{uuid.uuid4().hex[:6]}"
    run = await starter(
        "research",
        QUESTION,
        *PLAIN,
        "--review-plan",
        "--detach",
        "--id",
        rid,
        env=model_env,
    )
    assert run.code == 0, run.err
    status = await waiting(model_env, rid)
    assert status.get("pending_review") == "plan", status
    planned = [s["title"] for s in status["plan"]["steps"]]
    assert planned and all(title.strip() for title in planned)
    approved = await starter("review", rid, "--approve", env=model_env)
    assert approved.code == 0, approved.err
    done = await starter("result", rid, "--json", env=model_env, timeout=RESEARCH_TIMEOUT_S)
    result = kept(json.loads(done.out), rid)
    assert [s["title"] for s in result["plan"]["steps"]][: len(planned)] == planned
    assert_a_report_a_person_can_use(result)


async def test_a_follow_up_researches_on_from_the_earlier_report(
    model_env: dict[str, str], model_workers: Workers
) -> None:
    model_workers.start()
    first_id = f"first-{uuid.uuid4().hex[:6]}"
    code, first, err = await research(model_env, QUESTION, *PLAIN, "--id", first_id)
    assert code == 0, err
    code, follow, err = await research(
        model_env,
        "What happens to borrowing when a value is moved into a thread?",
        *PLAIN,
        "--follow-up",
        first_id,
    )
    assert code == 0, err
    assert follow["follow_up_of"] == first_id
    assert_a_report_a_person_can_use(follow)


async def test_a_model_that_answers_nothing_fails_the_research_in_one_line(
    model_env: dict[str, str],
) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    env = {**model_env, "OPENAI_BASE_URL": closed}
    workers = Workers(env)
    workers.start()
    try:
        run = await starter(
            "research",
            QUESTION,
            *PLAIN,
            env=env,
            timeout=RESEARCH_TIMEOUT_S,
        )
    finally:
        workers.stop_all()
    assert run.code != 0
    lines = [line for line in (run.out + run.err).splitlines() if "answered none" in line]
    assert len(lines) == 1 and closed in lines[0], run.out + run.err
    assert "Traceback" not in run.err
