"""`python -m starter check` as a person runs it: a real child process, Temporal unreachable (it
must not be needed), sources as local files, the text's own Sources list, or pages served on
127.0.0.1; with no model, and with a scripted model playing a careful and an uncritical judge."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.starter.cli.test_starter import Run, error_line, offline_env, starter  # noqa: F401
from tests.support.http_doubles import local_server, serving
from tests.support.llm_server import Fault, running_llm

SOURCE = """# The with statement

The with statement calls the enter method when the block starts. It calls the exit method when the
block ends, even after an exception.

A context manager can suppress an exception by returning True from its exit method.

One with statement may hold up to 20 context managers on a single line.
"""
FAITHFUL = """# With statements

The with statement calls the enter method when the block starts [1]. A context manager can
suppress an exception by returning True from its exit method [1].

One with statement may hold up to 20 context managers on a single line [1].
"""
PAGE = (
    "<html><head><title>Context managers</title></head><body><article>"
    "<h1>Context managers</h1><p>A context manager can suppress an exception by returning True "
    "from its exit method.</p><p>The with statement calls the enter method when the block "
    "starts.</p></article></body></html>"
)


def one_paragraph_lines(text: str) -> str:
    """Reports are written one paragraph a line: the sentence finder reads them so."""
    return re.sub(r"(?<=\S)\n(?=\S)", " ", text)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "with.md").write_text(SOURCE)
    return tmp_path


@pytest.fixture
def web() -> Iterator[str]:
    """One page and a 404, on a loopback port (reachable only with CRAWL_ALLOW_PRIVATE=1)."""

    class Pages(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = self.path == "/context-managers"
            body = (PAGE if found else "not here").encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    with serving(local_server(Pages)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


async def check(*args: str, env: dict[str, str], text: str | None = None, at: Path) -> Run:
    if text is None:
        return await starter("check", *args, env=env)
    (at / "text.md").write_text(one_paragraph_lines(text))
    with (at / "text.md").open("rb") as stdin:
        return await starter("check", "-", *args, env=env, stdin=stdin)


def verdicts(run: Run) -> list[tuple[str, str]]:
    return [(s["text"], s["verdict"]) for s in json.loads(run.out)["sentences"]]


async def test_a_faithful_text_is_supported_and_a_changed_number_is_not(
    offline_env: dict[str, str], folder: Path
) -> None:
    source = f"1={folder / 'with.md'}"
    faithful = await check("--source", source, "--json", env=offline_env, text=FAITHFUL, at=folder)
    assert faithful.code == 0, faithful.err
    result = json.loads(faithful.out)
    assert [s["verdict"] for s in result["sentences"]] == ["supported"] * 3
    assert (result["supported"], result["unsupported"], result["checked_by"]) == (3, 0, "lexical")
    first = result["sentences"][0]
    assert first["text"] == "The with statement calls the enter method when the block starts."
    assert first["source_ids"] == [1] and first["checked_by"] == "lexical"
    assert first["evidence"] == ["The with statement calls the enter method when the block starts."]
    assert result["calibration"] is None

    changed = FAITHFUL.replace("up to 20", "up to 30")
    run = await check("--source", source, "--json", env=offline_env, text=changed, at=folder)
    assert run.code == 1
    assert verdicts(run)[2] == (
        "One with statement may hold up to 30 context managers on a single line.",
        "unsupported",
    )
    assert "30" in json.loads(run.out)["sentences"][2]["reason"]

    shown = await check("--source", source, env=offline_env, text=changed, at=folder)
    assert shown.code == 1
    lines = shown.out.splitlines()
    assert lines[-1] == (
        "3 sentences: 2 supported, 1 unsupported; checked lexically (no model configured)"
    )
    assert any(
        line.startswith("UNSUPPORTED One with statement may hold up to 30") for line in lines
    )
    assert (
        '    > "One with statement may hold up to 20 context managers on a single line."' in lines
    )


async def test_the_texts_own_sources_list_names_the_sources(
    offline_env: dict[str, str], folder: Path
) -> None:
    """As a report lists them: `- [n] Title — URL (origin)`, a path relative to the text; a
    source the list lacks or a file that is gone leaves its sentences unverified, not an error."""
    text = one_paragraph_lines(FAITHFUL) + (
        "Context managers were added in Python 2.5 [2]. They nest [3].\n\n"
        "## Sources\n\n"
        "- [1] The with statement — with.md (local)\n"
        f"- [3] Gone — {(folder / 'gone.md').as_uri()} (local)\n"
    )
    (folder / "report.md").write_text(text)
    run = await starter("check", str(folder / "report.md"), "--json", env=offline_env)
    assert run.code == 0, run.err
    result = json.loads(run.out)
    assert [s["verdict"] for s in result["sentences"]] == ["supported"] * 3 + ["unverified"] * 2
    assert result["sentences"][3]["reason"] == "no source [2] was given"
    assert result["sentences"][4]["reason"].startswith("source [3] could not be read: no file")
    assert result["sentences"][4]["checked_by"] is None
    assert (result["supported"], result["unverified"]) == (3, 2)


async def test_a_page_is_read_through_the_crawler_with_its_rules(
    offline_env: dict[str, str], folder: Path, web: str
) -> None:
    text = (
        "A context manager can suppress an exception by returning True from its exit method [1]. "
        "The with statement calls the enter method when the block starts [2].\n"
    )
    sources = ("--source", f"1={web}/context-managers", "--source", f"2={web}/missing", "--json")
    refused = await check(*sources, env=offline_env, text=text, at=folder)
    assert refused.code == 2, "a check that read none of its sources checked nothing"
    assert refused.out == ""
    assert error_line(refused) == (
        "error: none of the sources could be read, so nothing was checked: source [1] "
        f"{web}/context-managers: refused: loopback address 127.0.0.1 "
        "(set CRAWL_ALLOW_PRIVATE=1 to allow) (and 1 more)"
    )

    allowed = {**offline_env, "CRAWL_ALLOW_PRIVATE": "1"}
    run = await check(*sources, env=allowed, text=text, at=folder)
    assert run.code == 0, run.err
    result = json.loads(run.out)
    assert [s["verdict"] for s in result["sentences"]] == ["supported", "unverified"]
    assert result["sentences"][1]["reason"] == "source [2] could not be read: HTTP 404"
    assert result["sources"][0]["title"] == "Context managers"


async def test_the_products_own_report_is_checked_against_the_corpus_and_uploads(
    offline_env: dict[str, str], tmp_path: Path
) -> None:
    """`research ... --out r1.md` then `check r1.md`: the report lists its local sources by the
    names the product gives them (`mercury.md` in RESEARCH_CORPUS_DIR, an upload by its file
    name), wherever r1.md was written; those names are read from the corpus and the user's own
    uploads, not looked for beside the report."""
    from activities.corpus.uploads import owner_folder, uploads_root

    corpus, data, elsewhere = tmp_path / "notes", tmp_path / "data", tmp_path / "reports"
    for made in (corpus / "planets", elsewhere):
        made.mkdir(parents=True)
    (corpus / "planets" / "mercury.md").write_text(
        "# Mercury\n\nMercury is the closest planet to the Sun.\n\n"
        "A year on Mercury lasts 88 Earth days.\n"
    )
    upload = owner_folder(uploads_root(data), "ada") / "0123456789ab"
    upload.mkdir(parents=True)
    (upload / "Mars notes.md").write_text("# Mars\n\nA year on Mars lasts 687 Earth days.\n")
    report = (
        "# The inner planets\n\n"
        "A year on Mercury lasts 88 Earth days [1]. A year on Mars lasts 700 Earth days [2].\n\n"
        "## Sources\n\n"
        "- [1] Mercury — planets/mercury.md (local)\n"
        "- [2] Mars — Mars notes.md (local)\n"
    )
    (elsewhere / "r1.md").write_text(report)
    env = {
        **offline_env,
        "RESEARCH_CORPUS_DIR": str(corpus),
        "RESEARCH_DATA_DIR": str(data),
        "RESEARCH_USER": "ada",
    }
    run = await starter("check", str(elsewhere / "r1.md"), env=env)
    assert run.code == 1, run.err  # the changed number is unsupported
    lines = run.out.splitlines()
    assert lines[0] == "supported   A year on Mercury lasts 88 Earth days. [1]"
    assert "UNSUPPORTED A year on Mars lasts 700 Earth days. [2]" in lines
    assert '    > "A year on Mars lasts 687 Earth days."' in lines
    assert "not read" not in run.out

    (upload / "Mars notes.md").unlink()
    (corpus / "planets" / "mercury.md").unlink()
    nothing = await starter("check", str(elsewhere / "r1.md"), env=env)
    assert nothing.code == 2 and nothing.out == ""
    assert error_line(nothing) == (
        "error: none of the sources could be read, so nothing was checked: source [1] "
        "planets/mercury.md: no file planets/mercury.md (nor in RESEARCH_CORPUS_DIR or your "
        "documents) (and 1 more)"
    )


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["nothing-here.md"], None, "error: no file nothing-here.md"),
        (["-"], b"\xff\xfe\xfdnot text", "error: standard input is not UTF-8 text"),
        (["-"], b"No citation at all.\n", "error: no sentence of standard input cites a source"),
        (["-"], b"A claim [1].\n", "error: no sources: standard input lists none"),
        (["-", "--source", "one=x.md"], b"A claim [1].\n", "error: --source 'one=x.md' is not"),
        (["-", "--source", "1=a.md", "--source", "1=b.md"], b"A [1].\n", "error: source [1] is"),
    ],
)
async def test_bad_input_is_one_line_and_exit_2(
    offline_env: dict[str, str], tmp_path: Path, args: list[str], stdin: bytes | None, message: str
) -> None:
    if stdin is None:
        run = await starter("check", *args, env=offline_env)
    else:
        (tmp_path / "in").write_bytes(stdin)
        with (tmp_path / "in").open("rb") as given:
            run = await starter("check", *args, env=offline_env, stdin=given)
    assert run.code == 2
    assert error_line(run).startswith(message), run.err
    assert run.err.count("\n") == 1 and run.out == ""


def careful_judge(prompt: str) -> dict[str, Any]:
    """Supported exactly when the claim stands word for word in the evidence it was shown."""
    evidence = " ".join(re.findall(r"^- (.*)$", prompt, re.M))
    claims = re.findall(r"^(\d+)\. (.*) \(cites [^\n]*\)$", prompt, re.M)
    return {
        "verdicts": [
            {
                "index": int(index),
                "verdict": "supported" if text.rstrip(".") in evidence else "unsupported",
                "reason": "quoted" if text.rstrip(".") in evidence else "not in the evidence",
            }
            for index, text in claims
        ]
    }


@pytest.mark.parametrize("careful", [True, False], ids=["careful judge", "uncritical judge"])
async def test_a_models_judge_counts_only_once_it_passed_its_canaries(
    offline_env: dict[str, str], folder: Path, careful: bool
) -> None:
    with running_llm() as llm:
        if careful:
            llm.answers["verify_claims"] = careful_judge
        env = {
            **offline_env,
            "LLM_PROVIDER": "openai",
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "test",
            "LLM_MODEL": "test-model",
        }
        source = f"1={folder / 'with.md'}"
        run = await check("--source", source, "--json", env=env, text=FAITHFUL, at=folder)
        shown = await check("--source", source, env=env, text=FAITHFUL, at=folder)
        asked = llm.requests("verify_claims")
    assert run.code == 0, run.err
    result = json.loads(run.out)
    assert asked, "the model's judge was never asked"
    calibration = result["calibration"]
    if careful:
        assert result["checked_by"] == "judge" and calibration["trusted"] is True
        assert {s["checked_by"] for s in result["sentences"]} == {"judge"}
        assert shown.out.splitlines()[-1] == (
            f"3 sentences: 3 supported, 0 unsupported; checked by the model's judge "
            f"(passed {calibration['canaries']} of {calibration['canaries']} canaries)"
        )
    else:
        assert result["checked_by"] == "lexical" and calibration["trusted"] is False
        assert {s["checked_by"] for s in result["sentences"]} == {"lexical"}
        assert calibration["failures"][0].startswith("called a changed")
        assert shown.out.splitlines()[-1].startswith(
            "3 sentences: 3 supported, 0 unsupported; checked lexically "
            "(the model's judge failed calibration: called a changed"
        )


async def test_a_judge_that_keeps_failing_is_tried_three_times_then_not_trusted(
    offline_env: dict[str, str], folder: Path
) -> None:
    with running_llm() as llm:
        llm.fail_next("verify_claims", *[Fault(status=500)] * 3)
        env = {
            **offline_env,
            "LLM_PROVIDER": "openai",
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "test",
            "LLM_MODEL": "test-model",
        }
        run = await check("--source", f"1={folder / 'with.md'}", env=env, text=FAITHFUL, at=folder)
        asked = llm.requests("verify_claims")
    assert run.code == 0, run.err
    assert [a.status for a in asked] == [500, 500, 500]
    assert asked[2].at - asked[0].at >= 2.5  # after 1 s, then 2 s
    assert run.out.splitlines()[-1] == (
        "3 sentences: 3 supported, 0 unsupported; checked lexically "
        "(the model's judge failed calibration: the judge did not answer its canaries)"
    )
