"""Reviews a person can see and answer from the starter: the real commands in a
subprocess, the real workflow with activity doubles in this process, on the dev server."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from temporalio.client import Client

from starter.cli.hints import program
from tests.starter.cli.test_starter import GATHER_QUESTION, Run, doubles_worker, starter, unique_id
from tests.support.processes import cli

DRAFT_MARK = "----- draft report under review"


async def wait_for_stage(wid: str, stage: str, env: dict[str, str]) -> dict[str, Any]:
    for _ in range(200):
        run = await starter("status", wid, "--json", env=env)
        if run.code == 0 and json.loads(run.out)["stage"] == stage:
            return json.loads(run.out)
        await asyncio.sleep(0.2)
    raise AssertionError(f"{wid} never reached {stage}")


async def test_a_report_review_is_seen_in_status_list_and_result_which_says_how_to_answer_it(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    wid = unique_id("rv")
    env = subprocess_env
    async with doubles_worker(dev_client, env["TEMPORAL_TASK_QUEUE"]):
        started = await starter(
            "research",
            GATHER_QUESTION,
            "--review-report",
            "always",
            "--id",
            wid,
            "--detach",
            env=env,
        )
        assert started.code == 0, started.err
        waiting = await wait_for_stage(wid, "awaiting_report_review", env)
        assert waiting["draft_report_markdown"].startswith("# ")

        shown = await starter("status", wid, env=env)
        assert DRAFT_MARK in shown.out and waiting["draft_report_markdown"].strip() in shown.out

        listed = await starter("list", "--pending", env=env)
        header, *rows = listed.out.splitlines()
        assert header.split()[:3] == ["ID", "WAITS", "FOR"]
        assert any(row.startswith(wid) and "a report review" in row for row in rows)
        assert f"{program()} review ID --approve" in listed.err
        assert (await starter("list", env=env)).out.splitlines()[0].split()[:3] == [
            "ID",
            "STATUS",
            "STAGE",
        ]

        # `result` says at once what the research waits for and how to answer, then keeps waiting.
        async with cli("result", wid, env=env) as proc:
            assert proc.stderr is not None
            seen = ""
            while "review with:" not in seen:
                line = await asyncio.wait_for(proc.stderr.readline(), 30)
                assert line, seen
                seen += line.decode()
            assert "waits for a review of the report" in seen and DRAFT_MARK in seen
            assert f"review with:  {program()} review {wid}" in seen
            assert (await starter("review", wid, "--approve", env=env)).code == 0
            out, _ = await asyncio.wait_for(proc.communicate(), 60)
            assert proc.returncode == 0 and out.decode().startswith("# ")

        nothing = await starter("list", "--pending", "--json", env=env)
        assert wid not in [row["id"] for row in json.loads(nothing.out)]


async def attached_review(dev_client: Client, env: dict[str, str], wid: str, typed: bytes) -> Run:
    """`research --review-report always` on a terminal where a person types TYPED."""
    primary, secondary = os.openpty()
    try:
        os.write(primary, typed)
        async with doubles_worker(dev_client, env["TEMPORAL_TASK_QUEUE"]):
            return await starter(
                "research",
                GATHER_QUESTION,
                "--review-report",
                "always",
                "--id",
                wid,
                env=env,
                stdin=secondary,
            )
    finally:
        os.close(primary)
        os.close(secondary)


async def test_the_attached_review_prompt_shows_the_draft_before_asking(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    run = await attached_review(dev_client, subprocess_env, unique_id("tty-rv"), b"a\n")
    assert run.code == 0, run.err
    assert run.err.index(DRAFT_MARK) < run.err.index(
        "approve [a], revise with feedback [f], cancel [c]>"
    )
    draft = run.err[run.err.index(DRAFT_MARK) : run.err.index("----- end of the draft")]
    assert draft.splitlines()[1].startswith("# ")  # the report itself, from its title on
    assert "approve accepted" in run.err and run.out.startswith("# ")


async def wait_for_round(wid: str, round_: int, env: dict[str, str]) -> dict[str, Any]:
    for _ in range(200):
        run = await starter("status", wid, "--json", env=env)
        shown = json.loads(run.out) if run.code == 0 else {}
        if shown.get("pending_review") == "report" and shown["review_rounds"] >= round_:
            return shown
        await asyncio.sleep(0.2)
    raise AssertionError(f"{wid} never asked for report review round {round_}")


async def test_a_revised_report_is_shown_again_and_approved_from_the_command_line(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    wid = unique_id("rv2")
    env = subprocess_env
    async with doubles_worker(dev_client, env["TEMPORAL_TASK_QUEUE"]):
        started = await starter(
            "research",
            GATHER_QUESTION,
            "--review-report",
            "always",
            "--id",
            wid,
            "--detach",
            env=env,
        )
        assert started.code == 0, started.err
        await wait_for_round(wid, 1, env)
        revised = await starter("review", wid, "--feedback", "Say what is missing", env=env)
        assert revised.code == 0 and "revise accepted" in revised.out, revised.err

        second = await wait_for_round(wid, 2, env)
        assert (second["review_rounds"], second["review_rounds_max"]) == (2, 3)
        assert "**Revised after review:** “Say what is missing”" in second["draft_report_markdown"]
        shown = await starter("status", wid, env=env)
        assert "waiting for a review of the report (review round 2 of 3)" in shown.out
        assert "Revised after review" in shown.out
        assert "shown to you again" in shown.out

        approved = await starter("review", wid, "--approve", env=env)
        assert approved.code == 0 and "approve accepted" in approved.out, approved.err
        result = await starter("result", wid, env=env)
    assert result.code == 0 and result.out.startswith("# ")
    assert "**Revised after review:** “Say what is missing”" in result.out


async def test_the_attached_prompt_asks_again_for_the_revised_report(
    dev_client: Client, subprocess_env: dict[str, str]
) -> None:
    typed = b"f\nSay what is missing\na\n"
    run = await attached_review(dev_client, subprocess_env, unique_id("tty-rv2"), typed)
    assert run.code == 0, run.err
    first, second = run.err.split("report to review (review round 2 of 3")
    assert "report to review (review round 1 of 3" in first and "revise accepted" in first
    # The second round shows the revised draft before asking again.
    assert "Revised after review:** “Say what is missing”" in first.split("revise accepted")[1]
    assert "approve [a], revise with feedback [f], cancel [c]>" in second
    assert "approve accepted" in second and run.out.startswith("# ")
